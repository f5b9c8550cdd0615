/**
 * The false-denial rate under the sandbox: an everyday corpus (test/data/everyday-corpus.jsonl,
 * commands that only read — syntax checks, versions, hashes, archives read to stdout,
 * process listings, shell functions, git, search, text and JSON tools) runs through the real
 * Bash tool of a read-only fork with the OS sandbox on and the real classifier advising, in
 * the scratch world of test/kit/shell-world.ts. Each command also runs without the sandbox,
 * with neither wall, in a copy of the world: that run must succeed and change nothing (the
 * corpus's own honesty); the sandboxed run counts as refused when it was denied or failed
 * where that one did not. At most 1% may be.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { runBuiltinTool } from '../../../src/activities/tools';
import { probeSandbox, type SandboxAvailability } from '../../../src/activities/tools/sandbox';
import { classifyShellCommand } from '../../../src/activities/tools/shell';
import type { ToolContext, ToolOutcome } from '../../../src/activities/tools/types';
import { buildWorld, fingerprint } from '../../kit/shell-world';

const REPO = path.resolve(__dirname, '..', '..', '..');
const CORPUS = path.join(REPO, 'test', 'data', 'everyday-corpus.jsonl');
const entrySchema = z.strictObject({ cmd: z.string().min(1), category: z.string().min(1), note: z.string().min(1) });

let scratch: string;
let availability: SandboxAvailability;

/** Files the corpus reads besides the effect world's: archives, sources in several languages, a Makefile. */
function addFixtures(ws: string): void {
  const f = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    writeFileSync(path.join(ws, rel), text);
  };
  f('src/app.js', "'use strict';\nconst sum = [1, 2, 3].reduce((a, b) => a + b, 0);\nconsole.log(sum);\n");
  f('src/hello.c', '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n');
  f('scripts/check.py', 'import json\nprint(len(json.load(open("data.json"))["items"]))\n');
  f('scripts/check.pl', 'use strict;\nprint "ok\\n";\n');
  f('Makefile', 'build:\n\techo build\n\ntest:\n\techo test\n');
  f('numbers.txt', '3\n10\n7\n');
  f('fixtures/notes.txt', 'line b\nline a\nline b\n');
  writeFileSync(path.join(ws, 'fixtures', 'blob.bin'), Buffer.from([0, 1, 2, 104, 101, 108, 108, 111, 119, 111, 114, 108, 100, 0, 255]));
  const run = (file: string, args: string[]) => execFileSync(file, args, { cwd: path.join(ws, 'fixtures') });
  execFileSync('tar', ['-czf', 'fixtures/archive.tar.gz', './a.txt', './b.txt'], { cwd: ws, env: { ...process.env } });
  execFileSync('zip', ['-q', 'fixtures/archive.zip', 'a.txt', 'b.txt'], { cwd: ws });
  run('gzip', ['-k', 'notes.txt']);
  execFileSync('sh', ['-c', 'xz -c notes.txt > data.xz && bzip2 -c notes.txt > data.bz2'], { cwd: path.join(ws, 'fixtures') });
}

beforeAll(async () => {
  const install = spawnSync('bash', [path.join(REPO, 'scripts', 'install-bubblewrap.sh')], { stdio: 'inherit' });
  expect(install.status).toBe(0);
  availability = await probeSandbox({ ...process.env, FORKFLOW_SANDBOX: '' });
  expect(availability.available).toBe(true);
  mkdirSync(path.join(REPO, '.scratch'), { recursive: true });
  scratch = realpathSync(mkdtempSync(path.join(REPO, '.scratch', 'everyday-')));
  chmodSync(scratch, 0o755);
  buildWorld(scratch);
  addFixtures(path.join(scratch, 'ws'));
  // The unsandboxed runs get a copy: should one write after all, the sandboxed world stays as built.
  cpSync(path.join(scratch, 'ws'), path.join(scratch, 'plain'), { recursive: true, verbatimSymlinks: true });
}, 300_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Sandboxed: a read-only fork with the real classifier advising. Baseline: the same fork's environment with neither wall. */
function ctx(root: string, sandboxed: boolean): ToolContext {
  return {
    root,
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    writePolicy: { kind: 'none' },
    classifyShell: sandboxed ? classifyShellCommand : () => Promise.resolve({ readOnly: true }),
    shellSandbox: sandboxed ? { availability, require: false } : { availability: { available: false, reason: 'baseline', allowUnsandboxed: true }, require: false },
  };
}

function tree(dir: string): string {
  const m = new Map<string, string>();
  fingerprint(dir, m);
  return JSON.stringify([...m]);
}

test('everyday commands in a read-only fork with the sandbox on: at most 1% refused', async () => {
  const corpus = readFileSync(CORPUS, 'utf8').split('\n').filter(Boolean).map((line) => entrySchema.parse(JSON.parse(line)));
  expect(corpus.length).toBeGreaterThanOrEqual(300);
  expect(new Set(corpus.map((c) => c.cmd)).size).toBe(corpus.length);
  const ws = path.join(scratch, 'ws');
  const plain = path.join(scratch, 'plain');
  const broken: string[] = [];
  const refused: { cmd: string; out: ToolOutcome }[] = [];
  for (const { cmd } of corpus) {
    const before = tree(plain);
    const baseline = await runBuiltinTool('Bash', { command: cmd, timeout_ms: 20_000 }, ctx(plain, false));
    if (baseline.isError || tree(plain) !== before) broken.push(`${cmd}: ${baseline.isError ? baseline.content.slice(-200) : 'changed the workspace'}`);
    const sandboxed = await runBuiltinTool('Bash', { command: cmd, timeout_ms: 20_000 }, ctx(ws, true));
    if (sandboxed.isError && !baseline.isError) refused.push({ cmd, out: sandboxed });
  }
  const rate = refused.length / corpus.length;
  console.log(
    `everyday corpus, read-only fork, sandbox on: ${refused.length}/${corpus.length} refused (${(rate * 100).toFixed(1)}%)\n` +
      refused.map((r) => `  ${JSON.stringify(r.cmd)} -- ${r.out.content.split('\n').slice(-3).join(' | ').slice(0, 300)}`).join('\n'),
  );
  // The corpus is honest: every line works, and writes nothing, without the sandbox.
  expect(broken).toEqual([]);
  expect(rate).toBeLessThanOrEqual(0.01);
}, 600_000);
