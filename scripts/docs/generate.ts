/**
 * `npm run docs`: writes the generated reference (docs/reference/) from the source of truth —
 * the zod schemas, the environment table, commander's help, the signal/query/update and
 * failure definitions — and the API reference from TSDoc (TypeDoc with typedoc-plugin-markdown,
 * docs/reference/api/), and the API reports of the entry points (api-report.ts, docs/api/).
 * `npm run docs -- --check` prints what differs and exits 1 instead; test/unit/docs/ runs the
 * same comparisons in `npm test`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { apiReports } from './api-report';
import { staleBuild } from './check-typescript';
import { ROOT } from './markdown';
import { cliPage } from './reference/cli';
import { contractsPage, schemaFiles } from './reference/contracts';
import { errorsPage } from './reference/errors';
import { forkInputPage } from './reference/fork-input';
import { messagesPage } from './reference/messages';
import { settingsPage } from './reference/settings';

/** Where the generated pages live (relative to the root); everything in it is the generator's. */
export const REFERENCE_DIR = 'docs/reference';
/** The API reference's folder, TypeDoc's alone. */
export const API_DIR = `${REFERENCE_DIR}/api`;

/** The reference pages the generator writes itself (path relative to the root → content). */
export function referencePages(): Map<string, string> {
  const pages = new Map<string, string>([
    [`${REFERENCE_DIR}/fork-input.md`, forkInputPage()],
    [`${REFERENCE_DIR}/settings.md`, settingsPage()],
    [`${REFERENCE_DIR}/cli.md`, cliPage()],
    [`${REFERENCE_DIR}/errors.md`, errorsPage()],
    [`${REFERENCE_DIR}/messages.md`, messagesPage()],
    [`${REFERENCE_DIR}/contracts.md`, contractsPage()],
  ]);
  for (const s of schemaFiles()) pages.set(`${REFERENCE_DIR}/schemas/${s.file}`, `${JSON.stringify(s.json, null, 2)}\n`);
  return pages;
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? filesUnder(join(dir, name)) : [join(dir, name)]));
}

/** The API reference TypeDoc prints from the entry points' TSDoc (path relative to the root → content). */
export function apiPages(): Map<string, string> {
  const out = mkdtempSync(join(tmpdir(), 'forkflow-typedoc-'));
  try {
    const typedoc = join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc');
    const run = spawnSync(process.execPath, [typedoc, '--options', join(__dirname, 'typedoc.json'), '--out', out], { cwd: ROOT, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`typedoc failed (exit ${run.status ?? run.signal}):\n${run.stdout}${run.stderr}`);
    return new Map(filesUnder(out).map((f) => [`${API_DIR}/${relative(out, f).split('\\').join('/')}`, readFileSync(f, 'utf8')]));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Every generated file, the reference pages first. */
export function generatedFiles(withApi = true): Map<string, string> {
  return new Map([...referencePages(), ...(withApi ? apiPages() : [])]);
}

/**
 * How the checked-in files differ from what the generator prints: files that differ, are
 * missing, or are left over in the generator's folders.
 */
export function differences(expected: Map<string, string>, root = ROOT): string[] {
  const problems: string[] = [];
  for (const [path, content] of expected) {
    const file = join(root, path);
    if (!existsSync(file)) problems.push(`${path} is missing`);
    else if (readFileSync(file, 'utf8') !== content) problems.push(`${path} differs from what the generator prints`);
  }
  const generated = new Set(expected.keys());
  const owned = [...new Set([...generated].map((p) => (p.startsWith(`${API_DIR}/`) ? API_DIR : dirname(p))))];
  for (const dir of owned) {
    for (const file of filesUnder(join(root, dir))) {
      const path = relative(root, file).split('\\').join('/');
      if (!generated.has(path) && (dir === API_DIR || dirname(path) === dir)) problems.push(`${path} is not generated any more`);
    }
  }
  return problems;
}

function main(): void {
  const check = process.argv.includes('--check');
  // The API reports read lib/'s declarations: they must be today's.
  const stale = staleBuild();
  if (stale) throw new Error(stale);
  const files = generatedFiles();
  if (check) {
    const reports = apiReports(false);
    const problems = [...differences(files), ...reports.flatMap((r) => [...r.errors, ...(r.changed ? [`${r.file}: the public surface of ${r.importPath} changed`] : [])])];
    for (const p of problems) process.stderr.write(`${p}\n`);
    if (problems.length) {
      process.stderr.write('The generated reference is out of date: run `npm run docs`.\n');
      process.exitCode = 1;
    }
    return;
  }
  rmSync(join(ROOT, API_DIR), { recursive: true, force: true });
  rmSync(join(ROOT, REFERENCE_DIR, 'schemas'), { recursive: true, force: true });
  for (const [path, content] of files) {
    mkdirSync(dirname(join(ROOT, path)), { recursive: true });
    writeFileSync(join(ROOT, path), content);
  }
  process.stdout.write(`wrote ${files.size} files under ${REFERENCE_DIR}/\n`);
  for (const r of apiReports(true)) {
    for (const e of r.errors) process.stderr.write(`${e}\n`);
    process.stdout.write(`${r.file}${r.changed ? ' (updated: the public surface changed)' : ''}\n`);
  }
}

if (require.main === module) main();
