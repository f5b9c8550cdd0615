/**
 * The everyday corpus (test/data/everyday-corpus.jsonl: commands that only read — syntax
 * checks, versions, hashes, archives read to stdout, process listings, shell functions, git,
 * search, text and JSON tools) run through the real Bash tool of a read-only fork with the OS
 * sandbox on and the real classifier advising, in the scratch world of ./shell-world.ts. Each
 * command also runs without the sandbox, with neither wall, in a copy of the world: that run
 * must succeed and change nothing (the corpus's own honesty); the sandboxed run counts as
 * refused when it was denied or failed where that one did not.
 *
 * Shared by test/unit/shell/everyday.test.ts and bench/everyday.ts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { runBuiltinTool } from '../../src/activities/tools';
import { probeSandbox, type SandboxAvailability } from '../../src/activities/tools/sandbox';
import { classifyShellCommand } from '../../src/activities/tools/shell';
import type { ToolContext } from '../../src/activities/tools/types';
import { buildWorld, fingerprint } from './shell-world';

const REPO = path.resolve(__dirname, '..', '..');
const CORPUS = path.join(REPO, 'test', 'data', 'everyday-corpus.jsonl');
const entrySchema = z.strictObject({ cmd: z.string().min(1), category: z.string().min(1), note: z.string().min(1) });
export type EverydayEntry = z.output<typeof entrySchema>;

/** The whole corpus, each line validated. */
export function readEverydayCorpus(): EverydayEntry[] {
  return readFileSync(CORPUS, 'utf8').split('\n').filter(Boolean).map((line) => entrySchema.parse(JSON.parse(line)));
}

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

/** A scratch world ready for the corpus (bubblewrap installed if missing), and the sandbox this host offers. */
export interface EverydayWorld {
  availability: SandboxAvailability;
  scratch: string;
  close(): void;
}

export async function startEverydayWorld(): Promise<EverydayWorld> {
  const install = spawnSync('bash', [path.join(REPO, 'scripts', 'install-bubblewrap.sh')], { stdio: 'inherit' });
  if (install.status !== 0) throw new Error('scripts/install-bubblewrap.sh failed');
  const availability = await probeSandbox({ ...process.env, FORKFLOW_SANDBOX: '' });
  mkdirSync(path.join(REPO, '.scratch'), { recursive: true });
  const scratch = realpathSync(mkdtempSync(path.join(REPO, '.scratch', 'everyday-')));
  chmodSync(scratch, 0o755);
  buildWorld(scratch);
  addFixtures(path.join(scratch, 'ws'));
  // The unsandboxed runs get a copy: should one write after all, the sandboxed world stays as built.
  cpSync(path.join(scratch, 'ws'), path.join(scratch, 'plain'), { recursive: true, verbatimSymlinks: true });
  return { availability, scratch, close: () => rmSync(scratch, { recursive: true, force: true }) };
}

/** Sandboxed: a read-only fork with the real classifier advising. Baseline: the same fork's environment with neither wall. */
function ctx(root: string, availability: SandboxAvailability | undefined): ToolContext {
  return {
    root,
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    writePolicy: { kind: 'none' },
    classifyShell: availability ? classifyShellCommand : () => Promise.resolve({ readOnly: true }),
    shellSandbox: availability ? { availability, require: false } : { availability: { available: false, reason: 'baseline', allowUnsandboxed: true }, require: false },
  };
}

function tree(dir: string): string {
  const m = new Map<string, string>();
  fingerprint(dir, m);
  return JSON.stringify([...m]);
}

export interface EverydayResult {
  /** Lines that failed or wrote without any wall (the corpus is wrong there). */
  broken: string[];
  /** Lines the sandboxed read-only fork refused or failed, with the end of what it said. */
  refused: { cmd: string; said: string }[];
  /** Added time per command, sandboxed minus baseline (ms). */
  addedMs: number[];
}

/** Runs `entries` both ways in `world`. */
export async function runEveryday(world: EverydayWorld, entries: readonly EverydayEntry[]): Promise<EverydayResult> {
  const ws = path.join(world.scratch, 'ws');
  const plain = path.join(world.scratch, 'plain');
  const out: EverydayResult = { broken: [], refused: [], addedMs: [] };
  for (const { cmd } of entries) {
    const before = tree(plain);
    const t0 = process.hrtime.bigint();
    const baseline = await runBuiltinTool('Bash', { command: cmd, timeout_ms: 20_000 }, ctx(plain, undefined));
    const t1 = process.hrtime.bigint();
    if (baseline.isError || tree(plain) !== before) out.broken.push(`${cmd}: ${baseline.isError ? baseline.content.slice(-200) : 'changed the workspace'}`);
    const t2 = process.hrtime.bigint();
    const sandboxed = await runBuiltinTool('Bash', { command: cmd, timeout_ms: 20_000 }, ctx(ws, world.availability));
    const t3 = process.hrtime.bigint();
    out.addedMs.push(Number(t3 - t2 - (t1 - t0)) / 1e6);
    if (sandboxed.isError && !baseline.isError) out.refused.push({ cmd, said: sandboxed.content.split('\n').slice(-3).join(' | ').slice(0, 300) });
  }
  return out;
}

/** The result as lines for a log. */
export function describeEveryday(r: EverydayResult, total: number): string {
  return (
    `everyday corpus, read-only fork, sandbox on: ${r.refused.length}/${total} refused (${((r.refused.length / total) * 100).toFixed(1)}%)\n` +
    r.refused.map((x) => `  ${JSON.stringify(x.cmd)} -- ${x.said}`).join('\n')
  );
}
