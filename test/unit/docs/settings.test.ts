/**
 * The environment table (src/shared/wire/env-settings.ts) is the one list of forkflow's variables:
 * src/ names no `FORKFLOW_*` variable the table lacks and reads none around its accessor, the
 * table holds no variable nothing reads, its flags are the CLI's, and the docs name no
 * variable that does not exist.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ENV_SETTINGS, envSetting, type EnvSettingName } from '../../../src/shared/wire/env-settings';
import { commands } from '../../../scripts/docs/cli';
import { readDocs, ROOT } from '../../../scripts/docs/markdown';

const TABLE = join('src', 'shared', 'wire', 'env-settings.ts');

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(ROOT, path)).isDirectory() ? filesUnder(path) : [path];
  });
}

const sources = filesUnder('src')
  .filter((f) => f.endsWith('.ts') && f !== TABLE)
  .map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));
const names = new Set<string>(Object.keys(ENV_SETTINGS));
/** Identifiers that look like variables and are not (the metrics table of src/shared/wire/metrics.ts). */
const NOT_VARIABLES = new Set(['FORKFLOW_METRICS']);

/** A `FORKFLOW_…` token is fine when it is a variable of the table, a known constant, or a prefix (`FORKFLOW_S3_…`) of variables. */
const known = (token: string) => names.has(token) || NOT_VARIABLES.has(token) || (token.endsWith('_') && [...names].some((n) => n.startsWith(token)));

/** Every place a text names a `FORKFLOW_…` token, with its line. */
function tokens(file: string, text: string): { token: string; where: string }[] {
  return text.split('\n').flatMap((line, i) => [...line.matchAll(/FORKFLOW_[A-Z0-9_]*/g)].map((m) => ({ token: m[0], where: `${file}:${i + 1}` })));
}

test('src/ names no FORKFLOW_ variable that the table does not hold (code, messages and comments alike)', () => {
  const unknown = sources.flatMap((s) => tokens(s.file, s.text)).filter((t) => !known(t.token));
  expect(unknown.map((t) => `${t.where}: ${t.token}`)).toEqual([]);
});

test('src/ reads FORKFLOW_ variables only through envSetting(), whose names are the table’s', () => {
  const direct = /\b(?:process\.env|env)(?:\.|\[['"`])FORKFLOW_\w+\b(?!\s*=[^=])/;
  const reads = sources.flatMap((s) =>
    s.text.split('\n').flatMap((line, i) => (direct.test(line) && !/^\s*(\*|\/\/)/.test(line) ? [`${s.file}:${i + 1}: ${line.trim()}`] : [])),
  );
  expect(reads).toEqual([]);
  // The accessor reads exactly what the environment holds: callers keep their own reading of ''.
  expect(envSetting({ FORKFLOW_TASK_QUEUE: '' }, 'FORKFLOW_TASK_QUEUE')).toBe('');
  expect(envSetting({}, 'FORKFLOW_TASK_QUEUE')).toBeUndefined();
});

test('the checks above catch what they look for', () => {
  expect(known('FORKFLOW_TASK_QUEUE')).toBe(true);
  expect(known('FORKFLOW_S3_')).toBe(true);
  expect(known('FORKFLOW_TASKQUEUE')).toBe(false);
  expect(known('FORKFLOW_NOPE_')).toBe(false);
});

test('every variable of the table is read somewhere (no entry outlives its code)', () => {
  const code = sources.map((s) => s.text).join('\n');
  const tests = filesUnder('test').filter((f) => f.endsWith('.ts')).map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n') + readFileSync(join(ROOT, 'package.json'), 'utf8');
  const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
  const stack = filesUnder(join('scripts', 'stack')).map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n');
  const unread = (Object.keys(ENV_SETTINGS) as EnvSettingName[]).filter((name) => {
    const spec = ENV_SETTINGS[name];
    const readers = spec.readers as readonly string[];
    const where = readers.includes('tests') ? tests : readers.includes('compose') ? compose : readers.includes('stack') ? stack : code;
    // Variables of other libraries (TEMPORAL_*, read by @temporalio/envconfig) are named in the code that hands over to them.
    return !where.includes(name);
  });
  expect(unread).toEqual([]);
});

test("every flag the table names is an option of the CLI's commands", () => {
  const all = commands();
  const missing = (Object.entries(ENV_SETTINGS) as [string, { flag?: string }][]).flatMap(([name, spec]) => {
    if (!spec.flag) return [];
    const words = spec.flag.split(' ');
    const flag = words.pop()!;
    const path = words.join(' ');
    const ok = all.some((c) => (path === '' || c.path.join(' ') === path) && c.command.options.some((o) => o.long === flag));
    return ok ? [] : [`${name}: ${spec.flag}`];
  });
  expect(missing).toEqual([]);
});

test('the docs name no FORKFLOW_ variable that does not exist', () => {
  const unknown = readDocs()
    .filter((d) => !d.file.startsWith('docs/reference/') && !d.file.startsWith('docs/api/'))
    .flatMap((d) => tokens(d.file, d.text))
    .filter((t) => !known(t.token));
  expect(unknown.map((t) => `${t.where}: ${t.token}`)).toEqual([]);
});

