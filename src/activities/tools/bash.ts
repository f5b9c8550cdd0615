/**
 * Bash: runs `bash -c <command>` in the workspace root, in a process group of its own so
 * that a timeout or a cancellation can stop everything the command started. Output
 * (stdout and stderr, interleaved as written) is capped with a visible marker, and a call
 * that writes more than the output limit is stopped; the exit code is reported;
 * heartbeats go out about once a second while it runs.
 *
 * Every call runs in the OS sandbox (sandbox/: the fork's view read-only, only what its
 * write policy allows writable, a private /tmp, no network — or, for a fork that allows
 * named hosts, HTTP(S) to those only, through a proxy (sandbox/net-proxy.ts) — its own PID
 * namespace, resource limits). There the read-only classifier only advises: a fork that must not write may run
 * any command, because the OS stops its effects; when such a command fails, a note says it
 * would have written. Outside the sandbox — only by an explicit opt-out (sandbox/policy.ts)
 * — the classifier decides again for forks that must not write, and repositories whose
 * configuration names programs are refused (git-guard.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { shellEnvironment } from './shell-env';
import type { BashInput } from '../../shared/tools/schemas';
import { HeadTailBuffer } from './output-buffer';
import { fail, messageOf, ok, ToolAbortError } from './outcome';
import { HEARTBEAT_INTERVAL_MS } from './heartbeat';
import { groupAlive, terminateGroup } from './process-group';
import { bwrapArgs, callCgroup, planShell, SANDBOX_HOME, systemEntries, ulimitScript, type CallCgroup, type ShellContainment, type ShellPlan, type SpecBase } from './sandbox';
import { gitGuards, masksOf } from './sandbox/masks';
import { bridgeArgs, proxyEnvironment, START_BRIDGE } from './sandbox/net-bridge';
import { startNetProxy, type NetProxy } from './sandbox/net-proxy';
import { gitProgramsRefusal } from './git-guard';
import { viewOf } from './visible';
import { othersMayEnter, type FsView } from './sandbox/view';
import type { ShellVerdict, ToolContext, ToolOutcome } from './types';

/** Limits of Bash; the timeout default matches the schema's description. */
export const BASH_LIMITS = {
  defaultTimeoutMs: 120_000,
  /** Characters of output kept: half from the start, half from the end. */
  maxOutputChars: 30_000,
  /** After the command exits, how long to wait for its output pipes to drain. */
  drainMs: 1000,
} as const;

/** Who a call that must not write is, in messages. */
function scopeOf(ctx: ToolContext): string {
  return ctx.writePolicy.kind === 'within' ? 'a memory agent' : 'a read-only agent';
}

/** Returns a denial message, or `null` when the command may run outside the sandbox under this policy. */
export async function authorizeShell(command: string, ctx: ToolContext): Promise<string | null> {
  if (ctx.writePolicy.kind === 'workspace') return null;
  const scope = scopeOf(ctx);
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
  | { kind: 'overflow' }
  | { kind: 'spawn-error'; error: Error };

// The outer shell sets the call's limits, then re-executes bash with stderr joined to
// stdout, so both arrive in one pipe in the order they were written; the command itself
// stays verbatim in $1.
const JOIN_STREAMS = 'exec "$BASH" -c "$1" 2>&1';

export type RunnablePlan = ShellPlan & { kind: 'sandbox' | 'plain' };

function specBase(view: FsView): SpecBase {
  return { root: view.root, readPaths: view.readPaths, system: systemEntries(), masks: [] };
}

/** The argv that runs `command` under `plan`: [cgroup entry] [setpriv] bwrap … -- bash … [bridge] (background tasks too: shell-tasks/). */
export function argvFor(command: string, plan: RunnablePlan, cgroup: CallCgroup | undefined, proxy: NetProxy | undefined): string[] {
  const limits = ulimitScript(plan.limits, { processes: plan.kind === 'sandbox' });
  const shell = proxy
    ? ['bash', '-c', `${limits}; ${START_BRIDGE}; ${JOIN_STREAMS}`, 'bash', command, ...bridgeArgs(process.execPath, proxy.socket)]
    : ['bash', '-c', `${limits}; ${JOIN_STREAMS}`, 'bash', command];
  if (plan.kind === 'plain') return shell;
  const sandboxed = [plan.bwrap, ...bwrapArgs(proxy ? { ...plan.spec, proxyDir: proxy.dir } : plan.spec), ...shell];
  const user = plan.setpriv ? [plan.setpriv, '--reuid=65534', '--regid=65534', '--clear-groups', '--'] : [];
  // The call enters its cgroup before bubblewrap starts, so nothing it forks is outside it.
  const enter = cgroup ? ['/bin/sh', '-c', 'echo $$ > "$0" && exec "$@"', cgroup.procs] : [];
  return [...enter, ...user, ...sandboxed];
}

function startShell(argv: string[], root: string, env: NodeJS.ProcessEnv): ChildProcess {
  const [file, ...args] = argv;
  return spawn(file!, args, {
    cwd: root,
    detached: true, // own session and process group: pgid === pid
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
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

/** The plan for this call, with the protected paths inside its mounts masked (background tasks too: shell-tasks/). */
export function plan(ctx: ToolContext, view: FsView): ShellPlan {
  let planned = planShell(ctx.writePolicy, specBase(view), ctx.shellSandbox);
  if (planned.kind !== 'sandbox') return planned;
  if (planned.setpriv) {
    if (!othersMayEnter(view.root)) {
      return {
        kind: 'refuse',
        message: `Bash is refused: this worker runs as root without a pids cgroup, so calls that write nothing run as user nobody (to cap their processes), and nobody cannot enter ${view.root}. The operator can make the workspace readable to others (chmod o+rx on it and its parents), run the worker as a non-root user, or give it a pids cgroup.`,
      };
    }
    // As nobody, bubblewrap can bind only what nobody may enter (a tool folder in root's home is left out).
    const spec = { ...planned.spec, system: planned.spec.system.filter((e) => e.kind === 'symlink' || othersMayEnter(e.source)), readPaths: (planned.spec.readPaths ?? []).filter(othersMayEnter) };
    planned = { ...planned, spec };
  }
  const mounted = [planned.spec.root, ...(planned.spec.readPaths ?? []), ...planned.spec.writable];
  const guards = planned.writes && planned.spec.writable.includes(planned.spec.root) ? gitGuards(planned.spec.root, ctx.shellSandbox?.readOnlyExtra) : [];
  return { ...planned, spec: { ...planned.spec, masks: [...masksOf(view, mounted, planned.spec.writable), ...guards] } };
}

/**
 * Runs Bash on parsed input. Throws `ToolAbortError` after killing the process group
 * when `ctx.signal` aborts; everything else is returned as an outcome.
 */
export async function runBash(input: BashInput, ctx: ToolContext): Promise<ToolOutcome> {
  const view = viewOf(ctx);
  const planned = plan(ctx, view);
  if (planned.kind === 'refuse') return fail(planned.message);
  let advice: Promise<ShellVerdict | undefined> | undefined;
  if (planned.kind === 'plain') {
    const denial = (await authorizeShell(input.command, ctx)) ?? (planned.writes ? null : await gitProgramsRefusal(input.command, view.root));
    if (denial !== null) return fail(denial);
  } else if (!planned.writes && ctx.writePolicy.kind !== 'workspace' && ctx.classifyShell) {
    // Under the sandbox the classifier advises: asked beside the call, read only if it fails.
    advice = ctx.classifyShell(input.command).catch(() => undefined);
  }
  if (ctx.signal.aborted) throw new ToolAbortError();
  const containment: ShellContainment = planned.kind === 'sandbox' ? 'sandbox' : planned.containment;
  const outcome = await execute(input, ctx, planned);
  const verdict = outcome.isError && advice ? await advice : undefined;
  const how = ctx.writePolicy.kind === 'within' ? 'changes its memory only with FileWrite and FileEdit' : 'writes nothing';
  const note = verdict && !verdict.readOnly ? `\n[Note: ${scopeOf(ctx)} ${how}; its commands run in a read-only sandbox, and this one tries to write or reach out (${verdict.reason ?? 'not read-only'}).]` : '';
  return { ...outcome, content: outcome.content + note, containment };
}

async function execute(input: BashInput, ctx: ToolContext, plan: RunnablePlan): Promise<ToolOutcome> {
  const timeoutMs = input.timeout_ms ?? BASH_LIMITS.defaultTimeoutMs;
  const output = new HeadTailBuffer(BASH_LIMITS.maxOutputChars / 2, BASH_LIMITS.maxOutputChars / 2);
  const started = Date.now();
  // A fork that allows named hosts gets a proxy of its own for this call (as nobody, a socket nobody may reach).
  const proxy = plan.kind === 'sandbox' && plan.network ? await startNetProxy({ allowance: plan.network, ...(ctx.shellSandbox?.onNetworkRefused ? { onRefused: ctx.shellSandbox.onNetworkRefused } : {}), ...(plan.setpriv ? { owner: { uid: 65534, gid: 65534 } } : {}) }) : undefined;
  let cgroup: CallCgroup | undefined;
  try {
    cgroup = plan.kind === 'sandbox' && plan.cap.kind === 'cgroup' ? callCgroup(plan.cap, plan.limits) : undefined;
  } catch (err) {
    await proxy?.close();
    throw err;
  }
  const env = shellEnvironment(process.env, {
    readOnly: ctx.writePolicy.kind !== 'workspace',
    ...(plan.kind === 'sandbox' ? { sandboxHome: SANDBOX_HOME } : {}),
    ...(plan.kind === 'sandbox' && plan.setpriv ? { foreignOwner: true } : {}),
  });
  if (proxy) Object.assign(env, proxyEnvironment());
  const child = startShell(argvFor(input.command, plan, cgroup, proxy), ctx.root, env);
  let bytes = 0;
  let overflow: (() => void) | undefined;
  const overflowed = once<Ending>((resolve) => (overflow = () => resolve({ kind: 'overflow' })));
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      bytes += chunk.length;
      if (bytes > plan.limits.outputBytes) {
        // Past the limit nothing more is read: `yes` must not keep this worker busy.
        child.stdout?.pause();
        child.stderr?.pause();
        overflow?.();
        return;
      }
      output.push(chunk);
    });
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
      overflowed,
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
      cgroup?.release();
      await bounded(exited, BASH_LIMITS.drainMs); // the leader is dead; Node reaps it promptly
      if (ending.kind === 'aborted') throw new ToolAbortError('Bash was cancelled; its process group was killed.');
      if (ending.kind === 'overflow') {
        return fail(`Output passed ${Math.round(plan.limits.outputBytes / 1024 / 1024)} MiB, so the command was stopped; write less (pipe through head, grep or wc).\n${output.text()}`);
      }
      await bounded(closed, BASH_LIMITS.drainMs);
      return fail(`Command timed out after ${timeoutMs} ms; it and its background processes were killed.\n${output.text()}`);
    }
    // Background processes left holding the output pipe would keep this call open, and
    // would outlive the activity unsupervised: a tool call leaves nothing running.
    const leftovers = groupAlive(pgid);
    if (leftovers) await terminateGroup(pgid);
    await bounded(closed, BASH_LIMITS.drainMs);
    return withRefusals(finish(output.text(), ending, leftovers), proxy);
  } finally {
    clearInterval(heartbeat);
    deadline.cancel();
    cgroup?.release();
    await proxy?.close();
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
    child.stdout?.destroy();
    child.stderr?.destroy();
  }
}

/** Says which hosts the proxy refused, so the model does not guess at a network failure. */
function withRefusals(outcome: ToolOutcome, proxy: NetProxy | undefined): ToolOutcome {
  if (!proxy || proxy.refusals.length === 0) return outcome;
  const lines = proxy.refusals.slice(0, 5).map((r) => `- ${r.target}: ${r.reason}`);
  return { ...outcome, content: `${outcome.content}\n[Network: the sandbox's proxy refused ${proxy.refusals.length} request(s):\n${lines.join('\n')}]` };
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
