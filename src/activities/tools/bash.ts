/**
 * Bash: runs `bash -c <command>` in the workspace root, in a process group of its own so
 * that a timeout or a cancellation can stop everything the command started. Output
 * (stdout and stderr, interleaved as written) is capped with a visible marker; the exit
 * code is reported; heartbeats go out about once a second while it runs.
 *
 * Two walls stand around commands of forks that must not write freely (STYLE 17): under a
 * write policy other than `workspace` the command runs only if the injected read-only
 * classifier approves it, and then inside the OS sandbox (sandbox/: read-only filesystem,
 * private /tmp, no network, own PID namespace). A worker without a working sandbox runs
 * such commands behind the classifier alone, or refuses them for forks that require it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { shellEnvironment } from './shell-env';
import type { BashInput } from '../../shared/tools/schemas';
import { HeadTailBuffer } from './output-buffer';
import { fail, messageOf, ok, ToolAbortError } from './outcome';
import { HEARTBEAT_INTERVAL_MS } from './heartbeat';
import { groupAlive, terminateGroup } from './process-group';
import { bwrapArgs, planShell, type ShellContainment, type ShellPlan } from './sandbox';
import type { ToolContext, ToolOutcome } from './types';

/** Limits of Bash; the timeout default matches the schema's description. */
export const BASH_LIMITS = {
  defaultTimeoutMs: 120_000,
  /** Characters of output kept: half from the start, half from the end. */
  maxOutputChars: 30_000,
  /** After the command exits, how long to wait for its output pipes to drain. */
  drainMs: 1000,
} as const;

/** Returns a denial message, or `null` when the command may run under this policy. */
export async function authorizeShell(command: string, ctx: ToolContext): Promise<string | null> {
  if (ctx.writePolicy.kind === 'workspace') return null;
  const scope = ctx.writePolicy.kind === 'within' ? 'a memory agent' : 'a read-only agent';
  if (ctx.classifyShell === undefined) {
    return `Bash is not available to ${scope}. Use Read, Glob and Grep instead.`;
  }
  try {
    const verdict = await ctx.classifyShell(command);
    if (verdict.readOnly) return null;
    return `Denied: ${scope} may only run read-only commands, and this one is not (${verdict.reason ?? 'not recognised as read-only'}). Use Read, Glob or Grep, or a simpler read-only command.`;
  } catch (err) {
    return `Denied: the command could not be checked (${messageOf(err)}), so it does not run. Use Read, Glob or Grep instead.`;
  }
}

type Ending =
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null }
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  | { kind: 'spawn-error'; error: Error };

// The outer shell only re-executes bash with stderr joined to stdout, so both arrive in
// one pipe in the order they were written; the command itself stays verbatim in $1.
const JOIN_STREAMS = 'exec "$BASH" -c "$1" 2>&1';

function startShell(command: string, root: string, readOnly: boolean, plan: ShellPlan & { kind: 'sandbox' | 'plain' }): ChildProcess {
  const shell = ['bash', '-c', JOIN_STREAMS, 'bash', command];
  const [file, ...args] = plan.kind === 'sandbox' ? [plan.bwrap, ...bwrapArgs(plan.spec), ...shell] : shell;
  return spawn(file!, args, {
    cwd: root,
    detached: true, // own session and process group: pgid === pid
    stdio: ['ignore', 'pipe', 'pipe'],
    env: shellEnvironment(process.env, { readOnly }),
  });
}

function once<T>(register: (resolve: (v: T) => void) => void): Promise<T> {
  return new Promise<T>(register);
}

/** Resolves with `value` after `ms`; the timer is cleared by `cancel`. */
function timeout<T>(ms: number, value: T): { promise: Promise<T>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = once<T>((resolve) => (timer = setTimeout(() => resolve(value), ms)));
  return { promise, cancel: () => clearTimeout(timer) };
}

/** Waits for `event`, but at most `ms`. */
async function bounded(event: Promise<unknown>, ms: number): Promise<void> {
  const t = timeout(ms, undefined);
  await Promise.race([event, t.promise]);
  t.cancel();
}

/**
 * Runs Bash on parsed input. Throws `ToolAbortError` after killing the process group
 * when `ctx.signal` aborts; everything else is returned as an outcome.
 */
export async function runBash(input: BashInput, ctx: ToolContext): Promise<ToolOutcome> {
  const denial = await authorizeShell(input.command, ctx);
  if (denial !== null) return fail(denial);
  const plan = planShell(ctx.writePolicy, ctx.root, ctx.shellSandbox);
  if (plan.kind === 'refuse') return fail(plan.message);
  if (ctx.signal.aborted) throw new ToolAbortError();
  const containment: ShellContainment = plan.kind === 'sandbox' ? 'sandbox' : plan.containment;
  return { ...(await execute(input, ctx, plan)), containment };
}

async function execute(input: BashInput, ctx: ToolContext, plan: ShellPlan & { kind: 'sandbox' | 'plain' }): Promise<ToolOutcome> {

  const timeoutMs = input.timeout_ms ?? BASH_LIMITS.defaultTimeoutMs;
  const output = new HeadTailBuffer(BASH_LIMITS.maxOutputChars / 2, BASH_LIMITS.maxOutputChars / 2);
  const started = Date.now();
  const child = startShell(input.command, ctx.root, ctx.writePolicy.kind !== 'workspace', plan);
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => output.push(chunk));
  }
  const beat = (): void => ctx.heartbeat({ tool: 'Bash', pid: child.pid, elapsedMs: Date.now() - started, outputChars: output.length });
  beat();
  const heartbeat = setInterval(beat, HEARTBEAT_INTERVAL_MS);
  const deadline = timeout<Ending>(timeoutMs, { kind: 'timeout' });
  let onAbort: (() => void) | undefined;
  const exited = once<Ending>((resolve) => child.once('exit', (code, signal) => resolve({ kind: 'exited', code, signal })));
  // 'close' comes after 'exit', once every holder of the output pipes has gone.
  const closed = once<void>((resolve) => child.once('close', () => resolve()));

  try {
    const ending = await Promise.race<Ending>([
      exited,
      once((resolve) => child.once('error', (error) => resolve({ kind: 'spawn-error', error }))),
      deadline.promise,
      once((resolve) => {
        onAbort = () => resolve({ kind: 'aborted' });
        ctx.signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
    if (ending.kind === 'spawn-error' || child.pid === undefined) {
      return fail(`Could not start bash in ${ctx.root}: ${ending.kind === 'spawn-error' ? ending.error.message : 'no process'}.`);
    }
    const pgid = child.pid;
    if (ending.kind !== 'exited') {
      await terminateGroup(pgid);
      await bounded(exited, BASH_LIMITS.drainMs); // the leader is dead; Node reaps it promptly
      if (ending.kind === 'aborted') throw new ToolAbortError('Bash was cancelled; its process group was killed.');
      await bounded(closed, BASH_LIMITS.drainMs);
      return fail(`Command timed out after ${timeoutMs} ms; it and its background processes were killed.\n${output.text()}`);
    }
    // Background processes left holding the output pipe would keep this call open, and
    // would outlive the activity unsupervised: a tool call leaves nothing running.
    const leftovers = groupAlive(pgid);
    if (leftovers) await terminateGroup(pgid);
    await bounded(closed, BASH_LIMITS.drainMs);
    return finish(output.text(), ending, leftovers);
  } finally {
    clearInterval(heartbeat);
    deadline.cancel();
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
    child.stdout?.destroy();
    child.stderr?.destroy();
  }
}

function finish(text: string, ending: { code: number | null; signal: NodeJS.Signals | null }, leftovers: boolean): ToolOutcome {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  const lines = [body.length > 0 ? body : '(no output)'];
  if (leftovers) lines.push('[Background processes still running when the command finished were stopped.]');
  if (ending.signal !== null) {
    lines.push(`[killed by ${ending.signal}]`);
    return fail(lines.join('\n'));
  }
  lines.push(`[exit code ${ending.code ?? 'unknown'}]`);
  return ending.code === 0 ? ok(lines.join('\n')) : fail(lines.join('\n'));
}
