/**
 * Interrupting an agent's turn, and moving a running sync sub-agent to the background: the
 * update and signal definitions (public contract: other SDKs and the `temporal` CLI send
 * them by name), their zod schemas, and the words the model reads afterwards.
 *
 * An interrupt is not a cancel: the agent's in-flight model call and tool calls stop, what
 * they had not finished is recorded as interrupted, and the agent waits for its next message
 * (or a sub-agent's notification). Its background sub-agents keep running.
 */
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';

export const interruptArgsSchema = schemaOnce('tree/interrupt#interruptArgsSchema', () => z.strictObject({
  /** Why, in a few words: shown to the model with the interruption and kept in status. */
  reason: z.string().min(1).max(500).optional(),
  /** Who interrupts: `operator` (the default), a parent agent id, a user name. */
  by: z.string().min(1).max(200).optional(),
  /** A message to act on at once (priority `now`): the agent goes on with it instead of waiting. */
  message: z.string().min(1).max(200_000).optional(),
  /** A few words for the message, for UIs. */
  summary: z.string().min(1).max(200).optional(),
}));
export type InterruptArgs = z.infer<typeof interruptArgsSchema>;

/** What the agent was doing when it was interrupted. */
export type InterruptedDuring = 'model call' | 'tool calls';

/** The `interrupt` update's answer: the interruption was accepted (the turn stops at once). */
export interface InterruptAnswer {
  agentId: string;
  /** The turn that was interrupted (its model call counts once it has replied). */
  turn: number;
  during: InterruptedDuring;
  /** True when a message came with it: the agent goes on at once instead of waiting. */
  continues: boolean;
}

/**
 * Interrupt the agent's current turn. Rejected (nothing recorded) when the input is invalid
 * or the agent has no model or tool call in flight.
 */
export const interruptUpdate = defineUpdate<InterruptAnswer, [InterruptArgs]>('interrupt');
/** The same as a signal, for senders that cannot wait for an update (a parent workflow); a refusal is kept in `status.rejectedSignals`. */
export const interruptSignal = defineSignal<[InterruptArgs]>('interruptTurn');

export const backgroundChildArgsSchema = schemaOnce('tree/interrupt#backgroundChildArgsSchema', () => z.strictObject({
  /** The sub-agent: its agent id or its name. */
  child: z.string().min(1).max(1000),
  by: z.string().min(1).max(200).optional(),
}));
export type BackgroundChildArgs = z.infer<typeof backgroundChildArgsSchema>;

export interface BackgroundChildAnswer {
  agentId: string;
  /** The parent whose tool call stops waiting for it. */
  parentId: string;
  /** False when the sub-agent ended before the parent's call let go of it (its result went to the call). */
  moved: boolean;
}

/**
 * Sent to the parent: stop waiting for a running sync sub-agent now. The parent's Agent call
 * answers `async_launched`; the sub-agent's outcome arrives later as a task notification.
 */
export const backgroundChildUpdate = defineUpdate<BackgroundChildAnswer, [BackgroundChildArgs]>('backgroundChild');

/** The note the model reads where its turn stopped. */
export function interruptionNote(by: string, during: InterruptedDuring, reason?: string): string {
  const why = reason ? ` (${reason})` : '';
  const what = during === 'model call' ? 'before you replied' : 'during your tool calls; calls marked interrupted did not finish';
  return `[Your turn was interrupted by ${by}${why} ${what}. Nothing more of that turn was done.]`;
}

/** A tool call's result when its turn was interrupted: `started` says whether it had begun. */
export function interruptedCallText(by: string, started: boolean): string {
  return started
    ? `Interrupted by ${by} before it finished: its effects so far, if any, are unknown.`
    : `Not run: the turn was interrupted by ${by}.`;
}
