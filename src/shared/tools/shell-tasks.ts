/**
 * Background shell tasks (`Bash` with `run_in_background`): what the workflow keeps of one
 * (carried across continue-as-new, so a versioned, parsed record), and the JSON-safe inputs
 * and results of the activities that start, watch, read and stop one on its host. Pure and
 * workflow-safe: no Node builtins.
 */
import { z } from 'zod';
import type { ToolCallInput } from '../wire/activity-io';
import { schemaOnce } from '../base/schema-once';

/** Defaults and bounds of a background task. */
export const SHELL_TASK_LIMITS = {
  /** No output for this long: the agent is told the task may be stuck (once per quiet spell). */
  defaultStallMs: 300_000,
  minStallMs: 1_000,
  /** A background task is killed after this long unless its call says otherwise (timeout_ms). */
  defaultTimeoutMs: 3_600_000,
  maxTimeoutMs: 24 * 3_600_000,
  /** Characters of output a notification or TaskOutput shows (the end of it; the file keeps all). */
  shownChars: 8_000,
  /** Finished tasks kept on record (oldest dropped first). */
  keptFinished: 50,
} as const;

/**
 * A task's file key (`bash-<n>-<8 hex>`, unique per agent workflow): the workflow's own choice,
 * checked again on the host before it names a file. The model addresses the task as `bash-<n>`.
 */
export const SHELL_TASK_ID = /^bash-[0-9]{1,6}-[0-9a-f]{8}$/;

/** How a task ended, as its host saw it. */
export const shellEndingSchema = schemaOnce('tools/shell-tasks#shellEndingSchema', () => z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('exited'), code: z.number().int() }),
  z.object({ kind: z.literal('timeout'), afterMs: z.number() }),
  z.object({ kind: z.literal('overflow'), bytes: z.number() }),
  z.object({ kind: z.literal('stopped') }),
  /** Its supervising process is gone without a recorded exit (the host restarted, or someone killed it). */
  z.object({ kind: z.literal('lost'), reason: z.string() }),
]));
export type ShellEnding = z.infer<typeof shellEndingSchema>;

export const shellTaskRecordSchema = schemaOnce('tools/shell-tasks#shellTaskRecordSchema', () => z.object({
  v: z.literal(1),
  /** What the model calls it: `bash-<n>`. */
  taskId: z.string(),
  /** What its files are named by on its host (SHELL_TASK_ID). */
  key: z.string(),
  toolUseId: z.string(),
  /** The command, cut to a line for summaries. */
  label: z.string(),
  /** The task queue of the host that runs it: every later activity of the task goes there. */
  hostQueue: z.string(),
  /** The output file on that host (forkflow's private state: TaskOutput and Read of this path read it there). */
  outputFile: z.string(),
  stallMs: z.number(),
  startedAt: z.string(),
  state: z.enum(['running', 'completed', 'failed', 'killed', 'timeout']),
  /** The outcome reached the agent (notification, TaskOutput or TaskStop): no notification is due. */
  notified: z.boolean(),
  /** Output size when the last stall was reported: another is due only after more output and a new quiet spell. */
  stallReportedAt: z.number().optional(),
  ending: shellEndingSchema.optional(),
  /** The end of its output when it ended. */
  tail: z.string().optional(),
  bytes: z.number().optional(),
  durationMs: z.number().optional(),
}));
export type ShellTaskRecord = z.infer<typeof shellTaskRecordSchema>;

/** What the tool round asks the host to start: the Bash call's activity input plus the task's own fields. */
export interface StartShellTaskInput {
  call: ToolCallInput;
  /** The task's file key (SHELL_TASK_ID). */
  taskId: string;
  command: string;
  timeoutMs: number;
}

export type StartShellTaskResult =
  | { ok: true; hostQueue?: string; outputFile: string; containment: 'sandbox' | 'classifier-only' | 'none' }
  | { ok: false; content: string };

/** What a watch returns: the task ended, or it has been quiet for `stallMs`. */
export type WatchShellTaskResult =
  | { kind: 'ended'; ending: ShellEnding; tail: string; bytes: number; durationMs: number }
  | { kind: 'stalled'; quietMs: number; tail: string; bytes: number };

export interface WatchShellTaskInput {
  agentId: string;
  taskId: string;
  stallMs: number;
  /** A stall was reported at this output size: the next one needs output beyond it. */
  stallReportedAt?: number;
}

export interface ReadShellTaskInput {
  agentId: string;
  taskId: string;
  /** Characters from the end (default SHELL_TASK_LIMITS.shownChars). */
  tailChars?: number;
}

export interface ReadShellTaskResult {
  found: boolean;
  running: boolean;
  tail: string;
  bytes: number;
}

export interface StopShellTaskInput {
  agentId: string;
  taskId: string;
}
