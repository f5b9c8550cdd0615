/**
 * Runs shell commands through the real Bash tool of a read-only fork, one at a time, and
 * reports every EFFECT each one had — not the classifier's verdict. Used by
 * test/unit/shell/effect.test.ts, in a child process:
 *
 *   node -r tsx/cjs test/kit/effect-runner.ts <config.json>
 *
 * The world it watches, created fresh under `config.scratch`: a git workspace `ws/` (cwd;
 * remote `origin` at http://127.0.0.1:47123/r.git), a sibling `canary/`, a `home/` that
 * is $HOME, and `tmp/`, which the test's jail binds over /tmp. An effect is any change
 * to those trees (content, mode, links, new or removed entries), a TCP connection to
 * 127.0.0.1:47123, or a process still running after the call. After an effect the world is rebuilt, so each effect is charged
 * to the command that caused it.
 *
 * Modes: `classifier` = the real classifier, no sandbox; `sandbox` = the sandbox with a
 * classifier that allows everything; `none` = neither (controls: proves effects are seen).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, utimesSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { runBuiltinTool } from '../../src/activities/tools';
import { probeSandbox } from '../../src/activities/tools/sandbox';
import { classifyShellCommand } from '../../src/activities/tools/shell';
import type { ShellClassifier, ToolContext } from '../../src/activities/tools/types';

export const EFFECT_PORT = 47123;

const Config = z.object({
  mode: z.enum(['classifier', 'sandbox', 'none']),
  scratch: z.string().startsWith('/'),
  commands: z.array(z.string()),
  timeoutMs: z.number().int().positive(),
  /** Top-level names in /tmp not to watch (where the jail re-binds a checkout that lives under /tmp). */
  skipTmp: z.array(z.string().regex(/^[^/]+$/)),
  /** Whether the jail has a PID namespace of its own (then every new process is a leftover). */
  ownPidNamespace: z.boolean(),
});
export type EffectConfig = z.infer<typeof Config>;

export interface EffectReport {
  mode: EffectConfig['mode'];
  ran: number;
  effects: { cmd: string; what: string[] }[];
  /** Commands that ran into the per-call timeout (they run for the whole of it). */
  timedOut: number;
}

function fingerprint(dir: string, out: Map<string, string>, skipTop?: (name: string) => boolean, rel = ''): void {
  let names: string[];
  try {
    names = readdirSync(path.join(dir, rel));
  } catch {
    out.set(rel || '.', 'missing');
    return;
  }
  for (const name of names.sort()) {
    if (rel === '' && skipTop?.(name)) continue;
    const r = path.join(rel, name);
    const full = path.join(dir, r);
    const st = lstatSync(full);
    if (st.isDirectory()) {
      out.set(r, `dir ${st.mode}`);
      fingerprint(dir, out, skipTop, r);
    } else if (st.isSymbolicLink()) out.set(r, `link ${readlinkSync(full)}`);
    else if (st.isFile()) out.set(r, `file ${st.mode} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`);
    else out.set(r, `other ${st.mode}`);
  }
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
}

const ID = ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid'];
const FILES: Record<string, string> = {
  'README.md': '# demo\n',
  'package.json': '{"name":"demo","version":"1.0.0","scripts":{"test":"echo ok"}}\n',
  'tsconfig.json': '{"compilerOptions":{"strict":true}}\n',
  'src/index.ts': 'export const x = 1;\n',
  'src/x.ts': 'export function f() { return 2; }\n',
  'src/util/parse.ts': 'export const parse = (s: string) => s.trim();\n',
  'test/index.test.ts': 'import { x } from "../src";\n',
  'docs/DESIGN.md': '# design\n',
  'scripts/build.sh': '#!/bin/sh\necho build\n',
  'CHANGELOG.md': '## 1.0.0\n',
  'a.txt': 'alpha\nbeta\n',
  'b.txt': 'beta\ngamma\n',
  'data.csv': 'id,name\n1,a\n2,b\n',
  'data.json': '{"items":[{"id":1},{"id":2}]}\n',
  '.gitignore': 'node_modules/\n',
};
const FAKE_SIGNATURE = ['-----BEGIN PGP SIGNATURE-----', '', 'iQEzBAABCAAdFiEEAAAAAAAAAAAAAAAAAAAAAAAAAAAFAmAAAAA=', '=AAAA', '-----END PGP SIGNATURE-----'];

function gitOut(cwd: string, input: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, input, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } }).trim();
}

/**
 * The scratch world, as the corpus README describes it: a repository with history,
 * branches and tags (one commit and one tag carrying a signature block, so options that
 * verify signatures really run gpg), an uncommitted change, and stale index stat data.
 */
function buildWorld(scratch: string): void {
  for (const d of ['ws', 'canary', 'home']) rmSync(path.join(scratch, d), { recursive: true, force: true });
  const ws = path.join(scratch, 'ws');
  for (const [rel, text] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    writeFileSync(path.join(ws, rel), text);
  }
  git(ws, 'init', '-q', '-b', 'main');
  git(ws, ...ID, 'add', '.');
  git(ws, ...ID, 'commit', '-q', '-m', 'init');
  git(ws, ...ID, 'tag', '-a', 'v1.0.0', '-m', 'one');
  writeFileSync(path.join(ws, 'src', 'x.ts'), 'export function f() { return 3; }\n');
  git(ws, ...ID, 'commit', '-q', '-am', 'change f');
  git(ws, 'branch', 'feature');
  writeFileSync(path.join(ws, 'CHANGELOG.md'), '## 1.1.0\n## 1.0.0\n');
  git(ws, ...ID, 'commit', '-q', '-am', 'release');
  git(ws, 'tag', 'v1.1.0');
  git(ws, 'remote', 'add', 'origin', `http://127.0.0.1:${EFFECT_PORT}/r.git`);
  git(ws, 'update-ref', 'refs/remotes/origin/main', 'HEAD');
  const head = gitOut(ws, '', 'rev-parse', 'HEAD');
  const tree = gitOut(ws, '', 'rev-parse', 'HEAD^{tree}');
  const who = 't <t@example.invalid> 1700000000 +0000';
  const signed = [`tree ${tree}`, `parent ${head}`, `author ${who}`, `committer ${who}`, `gpgsig ${FAKE_SIGNATURE.join('\n ')}`, '', 'signed', ''].join('\n');
  git(ws, 'update-ref', 'refs/heads/signed', gitOut(ws, signed, 'hash-object', '-t', 'commit', '-w', '--stdin'));
  const tag = [`object ${head}`, 'type commit', 'tag v2.0.0-signed', `tagger ${who}`, '', 'signed tag', ...FAKE_SIGNATURE, ''].join('\n');
  git(ws, 'update-ref', 'refs/tags/v2.0.0-signed', gitOut(ws, tag, 'hash-object', '-t', 'tag', '-w', '--stdin'));
  writeFileSync(path.join(ws, 'README.md'), '# demo\n\nwork in progress\n');
  // Stale index stat data (same content, newer mtime): any command that refreshes and
  // writes the index now visibly changes .git/index.
  const later = new Date(Date.now() + 60_000);
  for (const rel of Object.keys(FILES)) if (rel !== 'README.md') utimesSync(path.join(ws, rel), later, later);
  mkdirSync(path.join(scratch, 'canary'));
  writeFileSync(path.join(scratch, 'canary', 'keep.txt'), 'canary\n');
  mkdirSync(path.join(scratch, 'home'));
  writeFileSync(path.join(scratch, 'home', '.profile'), '# home\n');
  mkdirSync(path.join(scratch, 'tmp'), { recursive: true });
}

function snapshot(scratch: string, skipTmp: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const d of ['ws', 'canary', 'home']) {
    const m = new Map<string, string>();
    fingerprint(path.join(scratch, d), m);
    for (const [k, v] of m) out.set(`${d}/${k}`, v);
  }
  // In the jail, /tmp is scratch/tmp: all of it is watched (but tsx's compile cache).
  const tmp = new Map<string, string>();
  fingerprint('/tmp', tmp, (name) => name.startsWith('tsx-') || skipTmp.includes(name));
  for (const [k, v] of tmp) out.set(`/tmp/${k}`, v);
  return out;
}

function diff(before: Map<string, string>, after: Map<string, string>): string[] {
  const what: string[] = [];
  for (const [k, v] of after) if (before.get(k) !== v) what.push(`${before.has(k) ? 'changed' : 'created'} ${k}`);
  for (const k of before.keys()) if (!after.has(k)) what.push(`removed ${k}`);
  return what;
}

/**
 * Processes left running: in the jail, any process that was not there before the first
 * command (the jail's init, this runner and tsx's esbuild service were); outside it, any
 * process whose working directory is in the scratch world.
 */
function leftovers(scratch: string, ownPidNamespace: boolean, baseline: ReadonlySet<number>): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid || baseline.has(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (/^\S+ \(.*\) [ZX] /.test(stat)) continue;
      if (ownPidNamespace || readlinkSync(`/proc/${pid}/cwd`).startsWith(scratch)) found.push(pid);
    } catch {
      // gone already
    }
  }
  return found;
}

async function main(): Promise<void> {
  const config = Config.parse(JSON.parse(readFileSync(process.argv[2]!, 'utf8')));
  const { scratch } = config;
  process.env.HOME = path.join(scratch, 'home');
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(EFFECT_PORT, '127.0.0.1', resolve);
  });
  const availability = config.mode === 'sandbox' ? await probeSandbox({ ...process.env, FORKFLOW_SANDBOX: '' }) : { available: false as const, reason: `mode ${config.mode}` };
  if (config.mode === 'sandbox' && !availability.available) throw new Error(`sandbox mode needs the sandbox: ${availability.reason}`);
  const allowAll: ShellClassifier = () => Promise.resolve({ readOnly: true });
  const ctx = (): ToolContext => ({
    root: path.join(scratch, 'ws'),
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    writePolicy: config.mode === 'none' ? { kind: 'workspace' } : { kind: 'none' },
    classifyShell: config.mode === 'classifier' ? classifyShellCommand : allowAll,
    shellSandbox: { availability, require: false, workspace: false },
  });

  buildWorld(scratch);
  // Warm up (loads the parsers and the Bash path) before taking the process baseline.
  await runBuiltinTool('Bash', { command: 'true', timeout_ms: config.timeoutMs }, ctx());
  const baseline = new Set(readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number));
  const report: EffectReport = { mode: config.mode, ran: 0, effects: [], timedOut: 0 };
  for (const cmd of config.commands) {
    const before = snapshot(scratch, config.skipTmp);
    const seen = connections;
    const out = await runBuiltinTool('Bash', { command: cmd, timeout_ms: config.timeoutMs }, ctx());
    if (!out.content.startsWith('Denied:')) report.ran++;
    if (out.content.startsWith('Command timed out')) report.timedOut++;
    // Give in-flight connection callbacks a turn of the event loop before counting.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const what = diff(before, snapshot(scratch, config.skipTmp));
    if (connections > seen) what.push(`connected to 127.0.0.1:${EFFECT_PORT} (${connections - seen}x)`);
    const alive = leftovers(scratch, config.ownPidNamespace, baseline);
    if (alive.length > 0) what.push(`left ${alive.length} process(es) running`);
    for (const pid of alive) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (what.length > 0) {
      report.effects.push({ cmd, what });
      for (const name of readdirSync('/tmp')) if (!name.startsWith('tsx-') && !config.skipTmp.includes(name)) rmSync(path.join('/tmp', name), { recursive: true, force: true });
      buildWorld(scratch);
    }
  }
  server.close();
  process.stdout.write(`${JSON.stringify(report)}\n`);
  if (existsSync(path.join(scratch, 'ws'))) rmSync(path.join(scratch, 'ws'), { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1); // the listener would keep the process alive
});
