/**
 * Following a background shell task on its host, from its files alone (files.ts), so that any
 * attempt of the watch activity — the first, or one after a worker restart — sees the same
 * thing: ended (its exit code recorded; or its time limit or output limit passed, then it is
 * stopped here; or its supervisor gone without a record: lost), or quiet for its stall time.
 * A watch that is cancelled stops following and leaves the task running: only `stopTask` (and
 * the limits) stop it.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { ShellEnding, WatchShellTaskResult } from '../../shared/tools/shell-tasks';
import { SHELL_TASK_LIMITS } from '../../shared/tools/shell-tasks';
import { groupAlive, terminateGroup } from '../tools/process-group';
import { releaseCgroup } from '../tools/sandbox';
import { outputBytes, outputTail, readExit, readMeta, type TaskFiles, type TaskMeta } from './files';

/** How often the files are looked at. */
const POLL_MS = 250;

export interface WatchOptions {
  stallMs: number;
  stallReportedAt?: number;
  signal: AbortSignal;
  /** Called on every poll (the activity's heartbeat). */
  beat: (details: { bytes: number; quietMs: number }) => void;
}

/** Stops what is left of the task (its supervisor's group, its cgroup). Idempotent. */
export async function stopProcesses(meta: TaskMeta): Promise<void> {
  if (groupAlive(meta.pgid)) await terminateGroup(meta.pgid);
  if (meta.cgroupProcs) releaseCgroup(meta.cgroupProcs);
}

function ended(files: TaskFiles, meta: TaskMeta | undefined, ending: ShellEnding): WatchShellTaskResult {
  return { kind: 'ended', ending, tail: outputTail(files, SHELL_TASK_LIMITS.shownChars), bytes: outputBytes(files), durationMs: meta ? Date.now() - meta.startedAt : 0 };
}

/** What the task's files say now, or undefined while it runs within its limits. */
async function check(files: TaskFiles, meta: TaskMeta): Promise<ShellEnding | undefined> {
  const code = readExit(files);
  if (code !== undefined) {
    // Whatever it left running in the background goes with it (as a foreground call's would).
    await stopProcesses(meta);
    return { kind: 'exited', code };
  }
  if (!groupAlive(meta.pgid)) {
    // The supervisor may have written its record just after the look above.
    const late = readExit(files);
    if (late !== undefined) return { kind: 'exited', code: late };
    if (meta.cgroupProcs) releaseCgroup(meta.cgroupProcs);
    return { kind: 'lost', reason: 'its process ended without recording an exit code (killed from outside, or its host restarted)' };
  }
  const bytes = outputBytes(files);
  if (bytes > meta.outputLimit) {
    await stopProcesses(meta);
    return { kind: 'overflow', bytes };
  }
  if (Date.now() >= meta.deadline) {
    await stopProcesses(meta);
    return { kind: 'timeout', afterMs: meta.deadline - meta.startedAt };
  }
  return undefined;
}

/**
 * Follows the task until it ends or stays quiet for `stallMs` (after the output size at which
 * a stall was last reported). Resolves undefined when `signal` aborts (the task keeps running).
 */
export async function watchTask(files: TaskFiles, opts: WatchOptions): Promise<WatchShellTaskResult | undefined> {
  const meta = readMeta(files);
  if (!meta) return ended(files, undefined, { kind: 'lost', reason: 'this host has no record of it (it ran on a host whose state is gone)' });
  let bytes = outputBytes(files);
  let quietSince = Date.now();
  while (!opts.signal.aborted) {
    const ending = await check(files, meta);
    if (ending) return ended(files, meta, ending);
    const now = outputBytes(files);
    if (now !== bytes) {
      bytes = now;
      quietSince = Date.now();
    }
    const quietMs = Date.now() - quietSince;
    opts.beat({ bytes, quietMs });
    const fresh = opts.stallReportedAt === undefined || bytes > opts.stallReportedAt;
    if (fresh && quietMs >= opts.stallMs) return { kind: 'stalled', quietMs, tail: outputTail(files, SHELL_TASK_LIMITS.shownChars), bytes };
    await delay(POLL_MS, undefined, { signal: opts.signal }).catch(() => undefined);
  }
  return undefined;
}

/** Stops the task now (TaskStop, or its agent ended); its ending as recorded if it had already ended. */
export async function stopTask(files: TaskFiles): Promise<WatchShellTaskResult> {
  const meta = readMeta(files);
  if (!meta) return ended(files, undefined, { kind: 'lost', reason: 'this host has no record of it' });
  const code = readExit(files);
  await stopProcesses(meta);
  return ended(files, meta, code !== undefined ? { kind: 'exited', code } : { kind: 'stopped' });
}
