/**
 * Scheduled prompts: a Temporal Schedule sends a prompt to an existing agent on a cron or an
 * interval. A Schedule can only start a workflow, so each firing starts a
 * `scheduledPromptWorkflow`, which signals `sendMessage` to the agent and ends. Its input, its
 * result and the ids it is known by are the contract here. Workflow-safe.
 */
import { z } from 'zod';
import { sendMessageSchema } from './messages';
import { schemaOnce } from '../base/schema-once';

/** Who a scheduled prompt says it is from, unless the Schedule names someone. */
export const SCHEDULE_SENDER_PREFIX = 'schedule:';

/** A Schedule's own name: letters, digits, dots, dashes and underscores (it becomes part of ids). */
export const promptScheduleNameSchema = schemaOnce('wire/scheduled-prompt#promptScheduleNameSchema', () =>
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'a schedule name is 1-100 letters, digits, dots, dashes or underscores, starting with a letter or digit'),
);

/** The input of every run a prompt Schedule starts (kept in the Schedule's action). */
export const scheduledPromptInputSchema = schemaOnce('wire/scheduled-prompt#scheduledPromptInputSchema', () => z.strictObject({
  v: z.literal(1),
  /** The agent's id (a name is resolved when the Schedule is created). */
  agentId: z.string().min(1).max(1000),
  /** The Schedule's name: the sender unless `message.from` says otherwise. */
  schedule: promptScheduleNameSchema,
  /** The message as `sendMessage` takes it (operators reach any agent: no `fromTree`). */
  message: sendMessageSchema.omit({ fromTree: true }),
}));
export type ScheduledPromptInput = z.infer<typeof scheduledPromptInputSchema>;

/** A run's result: the prompt was queued with the agent (it reads it at its next turn boundary, or wakes if idle). */
export interface ScheduledPromptResult {
  agentId: string;
  delivered: true;
}

/** The Schedule's id for a name. */
export function promptScheduleId(name: string): string {
  return `forkflow-prompt-${promptScheduleNameSchema.parse(name)}`;
}

/** The name of a prompt Schedule id, or undefined for any other Schedule. */
export function promptScheduleName(scheduleId: string): string | undefined {
  return scheduleId.startsWith('forkflow-prompt-') ? scheduleId.slice('forkflow-prompt-'.length) : undefined;
}

/** Workflow id of a run (the Schedule appends the scheduled time). */
export function scheduledPromptRunId(name: string): string {
  return `prompt-scheduled-${promptScheduleNameSchema.parse(name)}`;
}
