/**
 * A wall between one tool call's machinery and the worker process. A tool call runs
 * machinery of its own beside the command it serves (the sandbox's network proxy, output
 * pipes, timers), driven by what a model-chosen command does. A bug there that throws from a
 * callback, or leaves a promise rejected, would by Node's default end the whole worker, and
 * Temporal would retry the call on the next worker, which would die the same way: one hostile
 * command could take down every worker of a queue (issue 42, finding 2).
 *
 * `guardCall` runs a call inside an AsyncLocalStorage context of its own. The process's
 * `uncaughtException` and `unhandledRejection` events run in the context of the code that
 * threw (or of the promise that was left rejected), so the guard can tell an error of a
 * call's machinery from any other: that call is stopped (its signal aborts, so the tool kills
 * what it started and cleans up) and fails with `CallMachineryError`; the process goes on.
 * Anything else keeps Node's default: when no other listener claims it, the error is printed
 * and the process exits with code 1, as it would have without the guard.
 *
 * An error raised in the context of a call that already ended is logged and dropped: that
 * call's own resources are gone, and what it left behind belongs to nobody else.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** A tool call stopped because its machinery threw outside any awaited code path. */
export class CallMachineryError extends Error {
  override name = 'CallMachineryError';
  constructor(readonly original: unknown) {
    super(original instanceof Error ? `${original.name}: ${original.message}` : String(original));
  }
}

interface Guard {
  live: boolean;
  fail(err: unknown): void;
}

const calls = new AsyncLocalStorage<Guard>();

/** Where errors the guard handles are reported (default: stderr; the worker may set its logger). */
export interface GuardLog {
  error(message: string, meta?: Record<string, unknown>): void;
}
let log: GuardLog = { error: (message, meta) => process.stderr.write(`${message} ${JSON.stringify(meta ?? {})}\n`) };

/** Sets where handled machinery errors are logged. */
export function setCallGuardLog(logger: GuardLog): void {
  log = logger;
}

function describe(err: unknown): Record<string, unknown> {
  return err instanceof Error ? { error: `${err.name}: ${err.message}`, stack: err.stack } : { error: String(err) };
}

/** True when the error belonged to a guarded call (and was handled); false when it is someone else's. */
function claim(err: unknown): boolean {
  const guard = calls.getStore();
  if (!guard) return false;
  if (guard.live) guard.fail(err);
  else log.error('a tool call that already ended raised an error in its machinery; dropped', describe(err));
  return true;
}

function onUncaught(err: unknown): void {
  if (claim(err)) return;
  // Another listener takes the rest in hand; alone, end the process as Node would have.
  if (process.listenerCount('uncaughtException') > 1) return;
  process.stderr.write(`Uncaught ${err instanceof Error ? (err.stack ?? String(err)) : String(err)}\n`);
  process.exit(1);
}

function onUnhandled(reason: unknown): void {
  if (claim(reason)) return;
  if (process.listenerCount('unhandledRejection') > 1) return;
  // Node's default (`--unhandled-rejections=throw`): raised as an uncaught exception.
  throw reason;
}

let installed = false;
function install(): void {
  if (installed) return;
  installed = true;
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUnhandled);
}

/** How long a failed call is given to clean up (kill its processes, close its proxy) before it fails anyway. */
export const GUARD_SETTLE_MS = 5_000;

/**
 * Runs `run` as one guarded call. `run` gets a signal that aborts when `parent` does or when
 * the call's machinery raised an error no code path awaited; it must stop on it. Resolves as
 * `run` does; rejects with `CallMachineryError` when the machinery failed.
 */
export async function guardCall<T>(parent: AbortSignal, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  install();
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parent.reason);
  if (parent.aborted) onParentAbort();
  else parent.addEventListener('abort', onParentAbort, { once: true });
  let failure: CallMachineryError | undefined;
  let failed: (() => void) | undefined;
  const failedPromise = new Promise<void>((resolve) => (failed = resolve));
  const guard: Guard = {
    live: true,
    fail(err) {
      if (failure) return;
      failure = new CallMachineryError(err);
      log.error('a tool call\'s machinery raised an error; the call is stopped, the worker goes on', describe(err));
      controller.abort(failure);
      failed?.();
    },
  };
  const running = calls.run(guard, () => run(controller.signal));
  // Once failed, the call is not awaited past its clean-up time.
  running.catch(() => undefined);
  try {
    const settled = await Promise.race([running.then((value) => ({ value })), failedPromise.then(() => undefined)]);
    if (!failure && settled) return settled.value;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([running.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, GUARD_SETTLE_MS)))]);
    clearTimeout(timer);
    throw failure!;
  } catch (err) {
    throw failure ?? err;
  } finally {
    guard.live = false;
    parent.removeEventListener('abort', onParentAbort);
  }
}
