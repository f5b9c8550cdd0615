/**
 * Background shell tasks (`Bash` with `run_in_background: true`), driven by the workflow. The
 * call passes every check a foreground Bash call passes (the tool round decides before it gets
 * here) and starts on the same queue with the same activity input; from then on every
 * activity of the task goes to the host that started it (its own queue when it has one), as a
 * worktree fork's tools do. A watch activity follows the task until it ends or stalls; its
 * outcome reaches the agent once, as a task notification at its next turn boundary (or as the
 * answer to TaskOutput / TaskStop, which take it first). Records cross continue-as-new; a new
 * run (or a retried watch after a worker restart) picks the task up again from its files.
 * When the agent ends, its running tasks are stopped: nothing it started outlives it.
 */
import { CancellationScope, condition, isCancellation, uuid4 } from '@temporalio/workflow';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages-api/anthropic';
import type { ToolCallInput } from '../../shared/wire/activity-io';
import type { TaskOutputToolInput } from '../../shared/tree/agent-tools';
import { TASK_OUTPUT_DEFAULT_TIMEOUT_MS } from '../../shared/tree/agent-tools';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import { renderTaskNotification } from '../../shared/tree/notifications';
import { SHELL_TASK_LIMITS, type ShellEnding, type ShellTaskRecord, type WatchShellTaskResult } from '../../shared/tools/shell-tasks';
import { firstLine } from '../../shared/base/text';
import { bashInput } from '../../shared/tools/schemas';
import { shellTasks, shellWatch } from '../activities';
import { isoNow } from '../clock';
import type { ForkAgent } from './agent';
import { whileWaiting } from './keep-alive';
import { opsRefusal } from './spawn-defaults';
import { errorResult, jsonResult, okResult } from './tool-results';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether this Bash call starts a background task. */
export function wantsBackground(input: unknown): boolean {
  return isObject(input) && input.run_in_background === true;
}

type Ended = Extract<WatchShellTaskResult, { kind: 'ended' }>;

function endingText(e: ShellEnding): string {
  switch (e.kind) {
    case 'exited':
      return `exit code ${e.code}`;
    case 'timeout':
      return `killed after its ${Math.round(e.afterMs / 1000)} s time limit`;
    case 'overflow':
      return `stopped: its output passed ${Math.round(e.bytes / 1024 / 1024)} MiB`;
    case 'stopped':
      return 'stopped';
    case 'lost':
      return `lost: ${e.reason}`;
  }
}

/** What TaskOutput, TaskStop and the notification say of a task. */
function view(record: ShellTaskRecord, running?: { tail: string; bytes: number }) {
  return {
    status: record.state,
    task_id: record.taskId,
    command: record.label,
    output_file: record.outputFile,
    ...(record.ending ? { ending: endingText(record.ending) } : {}),
    bytes: running?.bytes ?? record.bytes ?? 0,
    output: running?.tail ?? record.tail ?? '',
  };
}

function notify(agent: ForkAgent, record: ShellTaskRecord, status: 'stalled' | ShellTaskRecord['state'], summary: string, result: string, durationMs: number): void {
  agent.inbox.enqueue({
    priority: 'later',
    kind: 'notification',
    taskId: record.taskId,
    text: renderTaskNotification({ taskId: record.taskId, toolUseId: record.toolUseId, outputFile: record.outputFile, status: status === 'running' ? 'stalled' : status, summary, result, durationMs }),
  });
}

/** Records the end once; a notification when the agent has not taken the outcome another way. */
function end(agent: ForkAgent, record: ShellTaskRecord, r: Omit<Ended, 'kind'>): void {
  if (record.state !== 'running') return;
  if (!agent.shells.settle(record, r)) return;
  notify(agent, record, record.state, `Background command "${record.label}" ${record.state} (${endingText(r.ending)})`, r.tail, r.durationMs);
}

/** Follows a running task with watch activities on its host, until it ends (or the watch is cancelled). */
function follow(agent: ForkAgent, record: ShellTaskRecord): void {
  const scope = new CancellationScope({ cancellable: true, ...(agent.shells.home ? { parent: agent.shells.home } : {}) });
  const done = scope
    .run(async () => {
      for (;;) {
        const args = { agentId: agent.agentId, taskId: record.key, stallMs: record.stallMs, ...(record.stallReportedAt !== undefined ? { stallReportedAt: record.stallReportedAt } : {}) };
        const r = await shellWatch.watchShellTask.executeWithOptions({ taskQueue: record.hostQueue, summary: `background ${record.taskId}` }, [args]);
        if (r.kind === 'ended') return end(agent, record, r);
        agent.shells.stalled(record, r.bytes);
        const quiet = `Background command "${record.label}" has written nothing for ${Math.round(r.quietMs / 1000)} s; it still runs. TaskOutput reads its output, TaskStop stops it.`;
        notify(agent, record, 'stalled', quiet, r.tail, r.quietMs);
      }
    })
    .catch((err: unknown) => {
      if (isCancellation(err)) return;
      end(agent, record, { ending: { kind: 'lost', reason: `it could not be followed (${firstLine(err instanceof Error ? err.message : String(err), 200)})` }, tail: '', bytes: 0, durationMs: 0 });
    });
  agent.shells.attach(record.taskId, { scope, done });
}

/**
 * Starts a background task for an allowed Bash call. `call` is the activity input a foreground
 * call would have had, `taskQueue` where it would have run.
 */
export async function startBackgroundShell(agent: ForkAgent, use: ToolUseBlock, given: unknown, call: ToolCallInput, taskQueue: string): Promise<ToolResultBlock> {
  const parsed = bashInput.safeParse(given);
  if (!parsed.success) return errorResult(use.id, `Invalid Bash call: ${describeIssues(parsed.error).join('; ')}`);
  const { command, timeout_ms, stall_ms } = parsed.data;
  const ops = opsRefusal(agent, agent.input.subAgents, 'the task');
  if (ops) return errorResult(use.id, ops);
  const n = agent.shells.next();
  const taskId = `bash-${n}`;
  // Files are named by a key unique to this workflow: an agent id used again never meets an earlier task's files.
  const key = `${taskId}-${uuid4().slice(0, 8)}`;
  // The command travels once, in its own field.
  const { input: _inline, inputAt: _at, ...rest } = call;
  const started = await shellTasks.startShellTask.executeWithOptions({ taskQueue, summary: `turn ${agent.turns} · Bash in the background` }, [{ call: rest, taskId: key, command, timeoutMs: timeout_ms ?? SHELL_TASK_LIMITS.defaultTimeoutMs }]);
  if (!started.ok) return errorResult(use.id, started.content);
  agent.workArea.recordContainment(started.containment);
  const record: ShellTaskRecord = {
    v: 1,
    taskId,
    key,
    toolUseId: use.id,
    label: firstLine(command, 120),
    hostQueue: started.hostQueue ?? taskQueue,
    outputFile: started.outputFile,
    stallMs: Math.max(SHELL_TASK_LIMITS.minStallMs, stall_ms ?? SHELL_TASK_LIMITS.defaultStallMs),
    startedAt: isoNow(),
    state: 'running',
    notified: false,
  };
  agent.shells.add(record);
  follow(agent, record);
  return jsonResult(use.id, {
    status: 'background_started',
    task_id: taskId,
    output_file: record.outputFile,
    note: `It runs in the background. You get a task notification when it ends, or when it writes nothing for ${Math.round(record.stallMs / 1000)} s. TaskOutput with this task_id (or Read of output_file) shows its output so far; TaskStop stops it.`,
  });
}

/** At a run's start: watches go under its root scope, and a new run (continue-as-new) follows the running tasks it carried. */
export function resumeShellTasks(agent: ForkAgent): void {
  // Called at the workflow's start, in its root scope: every watch of this run lives there.
  agent.shells.home = CancellationScope.current();
  for (const record of agent.shells.running) follow(agent, record);
}

/** Stops a running task on its host and records its end (no notification: the caller answers). */
async function stop(agent: ForkAgent, record: ShellTaskRecord): Promise<void> {
  agent.shells.watch(record.taskId)?.scope.cancel();
  const r = await shellTasks.stopShellTask.executeWithOptions({ taskQueue: record.hostQueue, summary: `stop ${record.taskId}` }, [{ agentId: agent.agentId, taskId: record.key }]);
  agent.shells.markSeen(record);
  agent.inbox.dropNotificationsFor(record.taskId);
  if (r.kind === 'ended') end(agent, record, r);
}

/** TaskOutput for a task of this agent: waits (by default) for it to end, else shows its output so far. */
export async function shellTaskOutput(agent: ForkAgent, use: ToolUseBlock, record: ShellTaskRecord, input: TaskOutputToolInput): Promise<ToolResultBlock> {
  if (record.state === 'running' && input.block !== false) {
    await whileWaiting(agent, () => condition(() => record.state !== 'running', input.timeout_ms ?? TASK_OUTPUT_DEFAULT_TIMEOUT_MS));
  }
  if (record.state === 'running') {
    const now = await shellTasks.readShellTask.executeWithOptions({ taskQueue: record.hostQueue, summary: `output of ${record.taskId}` }, [{ agentId: agent.agentId, taskId: record.key }]);
    return jsonResult(use.id, { ...view(record, now), note: 'still running; its notification arrives when it ends' });
  }
  agent.shells.markSeen(record);
  agent.inbox.dropNotificationsFor(record.taskId);
  return jsonResult(use.id, view(record), record.state !== 'completed');
}

/** TaskStop for a task of this agent. */
export async function shellTaskStop(agent: ForkAgent, use: ToolUseBlock, record: ShellTaskRecord): Promise<ToolResultBlock> {
  if (record.state !== 'running') return errorResult(use.id, `Only a running task can be stopped; ${record.taskId} is ${record.state}.`);
  await stop(agent, record);
  return jsonResult(use.id, view(record));
}

/** Read of one of this agent's own output files: read on the task's host (the file is in forkflow's private state there). */
export async function readOwnOutput(agent: ForkAgent, use: ToolUseBlock): Promise<ToolResultBlock | undefined> {
  const path = isObject(use.input) && typeof use.input.file_path === 'string' ? use.input.file_path : undefined;
  const record = path === undefined ? undefined : agent.shells.byOutputFile(path);
  if (!record) return undefined;
  const now = await shellTasks.readShellTask.executeWithOptions({ taskQueue: record.hostQueue, summary: `Read ${record.taskId}` }, [{ agentId: agent.agentId, taskId: record.key }]);
  if (!now.found) return errorResult(use.id, `The output of ${record.taskId} is gone from its host.`);
  return okResult(use.id, now.tail.length > 0 ? now.tail : '(no output yet)');
}

/** Stops every running task as the agent ends (nothing it started outlives it). */
export async function stopShellTasks(agent: ForkAgent): Promise<void> {
  await Promise.all(agent.shells.running.map((r) => stop(agent, r)));
}
