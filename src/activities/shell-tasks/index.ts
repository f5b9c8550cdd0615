/**
 * The background shell task activities, all on the task's host: `startShellTask` (the Bash
 * call's walls, then the command left running: spawn.ts), `watchShellTask` (heartbeating until
 * it ends or stalls; a retry after a worker restart picks it up again from its files:
 * watch.ts), `readShellTask` (its output so far, for TaskOutput and Read) and `stopShellTask`.
 */
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { ReadShellTaskInput, ReadShellTaskResult, StartShellTaskInput, StartShellTaskResult, StopShellTaskInput, WatchShellTaskInput, WatchShellTaskResult } from '../../shared/tools/shell-tasks';
import { SHELL_TASK_LIMITS } from '../../shared/tools/shell-tasks';
import { startHeartbeat } from '../heartbeat';
import { toolContextOf, workspacePolicyOf, type ToolDeps } from '../run-tool';
import { BadShellTaskIdError, defaultShellTaskDir, outputBytes, outputTail, readExit, readMeta, taskFiles } from './files';
import { spawnTask } from './spawn';
import { stopTask, watchTask } from './watch';
import { groupAlive } from '../tools/process-group';

export interface ShellTaskDeps extends Pick<ToolDeps, 'workspaceRoot' | 'workspaceRoots' | 'protectedPaths' | 'sandbox' | 'sandboxLimits' | 'userMemoryRoot' | 'consent'> {
  /** Where task files live (default: `<state dir>/shell-tasks`, which no fork can see). */
  shellTaskDir?: string;
  /** This host's own queue, when it has one: the task's later activities go there. */
  hostQueue?: string;
}

/** A bad task id is the caller's bug, not something another attempt could fix. */
function filesOf(base: string, agentId: string, taskId: string, create = false) {
  try {
    return taskFiles(base, agentId, taskId, create);
  } catch (err) {
    if (err instanceof BadShellTaskIdError) throw ApplicationFailure.create({ type: err.name, message: err.message, nonRetryable: true });
    throw err;
  }
}

export function createShellTaskActivities(deps: ShellTaskDeps) {
  const policy = workspacePolicyOf(deps);
  const base = deps.shellTaskDir ?? defaultShellTaskDir();
  return {
    async startShellTask(input: StartShellTaskInput): Promise<StartShellTaskResult> {
      const ctx = Context.current();
      const files = filesOf(base, input.call.agentId, input.taskId, true);
      // A retry after the first attempt started it (its worker was lost right after): the task is already there.
      const earlier = readMeta(files);
      if (earlier) return { ok: true, outputFile: files.log, containment: earlier.containment, ...(deps.hostQueue ? { hostQueue: deps.hostQueue } : {}) };
      const built = await toolContextOf(deps, policy, input.call, { signal: ctx.cancellationSignal, heartbeat: () => undefined });
      if (!built.ok) return { ok: false, content: built.message };
      const started = await spawnTask(input.command, built.ctx, files, input.timeoutMs);
      return started.ok && deps.hostQueue ? { ...started, hostQueue: deps.hostQueue } : started;
    },

    async watchShellTask(input: WatchShellTaskInput): Promise<WatchShellTaskResult> {
      const ctx = Context.current();
      const files = filesOf(base, input.agentId, input.taskId);
      let last = { bytes: 0, quietMs: 0 };
      const stopBeat = startHeartbeat(() => last);
      try {
        const result = await watchTask(files, {
          stallMs: Math.max(SHELL_TASK_LIMITS.minStallMs, input.stallMs),
          ...(input.stallReportedAt !== undefined ? { stallReportedAt: input.stallReportedAt } : {}),
          signal: ctx.cancellationSignal,
          beat: (d) => (last = d),
        });
        // Cancelled (the task is being stopped, or its agent's run moved on): the task itself is left alone.
        if (!result) throw new CancelledFailure('watch cancelled; the task was left running');
        return result;
      } finally {
        stopBeat();
      }
    },

    readShellTask(input: ReadShellTaskInput): Promise<ReadShellTaskResult> {
      const files = filesOf(base, input.agentId, input.taskId);
      const meta = readMeta(files);
      if (!meta) return Promise.resolve({ found: false, running: false, tail: '', bytes: 0 });
      const running = readExit(files) === undefined && groupAlive(meta.pgid);
      return Promise.resolve({ found: true, running, tail: outputTail(files, input.tailChars ?? SHELL_TASK_LIMITS.shownChars), bytes: outputBytes(files) });
    },

    async stopShellTask(input: StopShellTaskInput): Promise<WatchShellTaskResult> {
      return stopTask(filesOf(base, input.agentId, input.taskId));
    },
  };
}
