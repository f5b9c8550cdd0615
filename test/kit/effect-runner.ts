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
 * classifier that allows everything; `sandbox-workspace` = a writing fork's sandbox (its
 * workspace is writable: changes there are not effects, anything else is); `none` = neither
 * (controls: proves effects are seen).
 */
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { runBuiltinTool } from '../../src/activities/tools';
import { buildWorld, EFFECT_PORT, fingerprint } from './shell-world';
import { probeSandbox } from '../../src/activities/tools/sandbox';
import { classifyShellCommand } from '../../src/activities/tools/shell';
import type { ShellClassifier, ToolContext } from '../../src/activities/tools/types';


const Config = z.object({
  mode: z.enum(['classifier', 'sandbox', 'sandbox-workspace', 'none']),
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
  const sandboxed = config.mode === 'sandbox' || config.mode === 'sandbox-workspace';
  // Without the sandbox the runner stands for a worker that opted out of it explicitly.
  const availability = sandboxed ? await probeSandbox({ ...process.env, FORKFLOW_SANDBOX: '' }) : { available: false as const, reason: `mode ${config.mode}`, allowUnsandboxed: true };
  if (sandboxed && !availability.available) throw new Error(`sandbox mode needs the sandbox: ${availability.reason}`);
  const allowAll: ShellClassifier = () => Promise.resolve({ readOnly: true });
  const ctx = (): ToolContext => ({
    root: path.join(scratch, 'ws'),
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    writePolicy: config.mode === 'none' || config.mode === 'sandbox-workspace' ? { kind: 'workspace' } : { kind: 'none' },
    classifyShell: config.mode === 'classifier' ? classifyShellCommand : allowAll,
    shellSandbox: { availability, require: false },
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
    // A writing fork may change its own workspace; everything else is an effect.
    const what = diff(before, snapshot(scratch, config.skipTmp)).filter((w) => config.mode !== 'sandbox-workspace' || !/^(changed|created|removed) ws\//.test(w));
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
    if (what.length > 0 || config.mode === 'sandbox-workspace') {
      if (what.length > 0) report.effects.push({ cmd, what });
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
