/**
 * Teams (seed 001 "多 Agent / Teammate 参数", SendMessage; seed 002 "Comms Integration"): an
 * Agent call with `name` and `team_name` starts a teammate into its caller's flat roster (a
 * teammate cannot start teammates). This file holds what teammates and their lead share: the
 * team part of a teammate's input, the structured messages the runtime itself understands,
 * and the comms text a teammate and its lead are given.
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';

/** A team's name and a teammate's name: what the Agent tool's `name` accepts. */
export const TEAM_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,40}$/;

/** The team part of a teammate's input (ForkInput `team`). */
export const teamInputSchema = schemaOnce('tree/team#teamInputSchema', () => z.strictObject({
  name: z.string().regex(TEAM_NAME_PATTERN).describe('The team it joined.'),
  lead: z.string().min(1).max(1000).describe("Its lead's agent id (its parent)."),
  /** Plan mode (the Agent call's `mode: "plan"`): its first tool call that changes anything waits for its lead's approval. */
  planApproval: z.boolean().optional().describe("Plan mode: its first tool call that changes anything waits for its lead's approval."),
}));
export type TeamInput = z.output<typeof teamInputSchema>;

/**
 * A structured message: a JSON object with a `type` (SendMessage's `message` as an object).
 * Bounded like a text message; never broadcast.
 */
export const structuredMessageSchema = schemaOnce('tree/team#structuredMessageSchema', () => z
  .looseObject({ type: z.string().min(1).max(64) })
  .refine((v) => JSON.stringify(v).length <= 20_000, { message: 'a structured message is at most 20000 characters of JSON' }));
export type StructuredMessage = z.output<typeof structuredMessageSchema>;

/** Structured messages the runtime acts on (a lead's to its teammate), besides delivering them. */
export const SHUTDOWN_REQUEST = 'shutdown_request';
export const PLAN_APPROVAL_REQUEST = 'plan_approval_request';
export const PLAN_APPROVAL_RESPONSE = 'plan_approval_response';

/** A lead's answer to a plan-mode teammate's request (`request_id` as the request gave it). */
export const planApprovalResponseSchema = schemaOnce('tree/team#planApprovalResponseSchema', () => z.looseObject({
  type: z.literal(PLAN_APPROVAL_RESPONSE),
  request_id: z.string().min(1).max(200),
  approve: z.boolean(),
  feedback: z.string().max(2000).optional(),
}));

/** What a teammate is told about its team when it starts (seed 002: comms context in the child's prompt). */
export function teammateComms(args: { team: string; name: string; lead: string; planApproval: boolean }): string {
  const plan = args.planApproval
    ? ' You start in plan mode: look around and make your plan first; your first tool call that would change anything goes to your lead as a plan approval request, and runs only once your lead approves it.'
    : '';
  return [
    `<team name="${args.team}">`,
    `You are "${args.name}", a teammate in team "${args.team}"; your lead is ${args.lead} (address it as "lead").`,
    `Talk to your team with SendMessage: "to" is a teammate's name, "lead", or "*" for everyone in the team. Messages to you arrive between your turns, each saying who sent it. When you have nothing left to do, end your turn: you wait for messages until your lead ends the team.${plan}`,
    `You cannot start agents of your own.`,
    `</team>`,
  ].join('\n');
}

/**
 * What a plain sub-agent (not a teammate) of a tree with teams on is told when it starts (seed
 * 002: comms context in the child's prompt): who its caller is and how messages travel.
 */
export function childComms(args: { caller: string }): string {
  return [
    '<comms>',
    `You run as a sub-agent of ${args.caller}. SendMessage reaches it, and any other agent of this tree, by name or id; messages to you arrive between your turns, each saying who sent it. Your final reply is your report to ${args.caller}.`,
    '</comms>',
  ].join('\n');
}

/** The spawn answer's hint for the lead (seed 002: comms instructions in the spawn response). */
export function leadComms(name: string, team: string): string {
  return `It works in the background and waits for messages when idle. SendMessage to "${name}" (or "*" for all of team "${team}"); its messages to you arrive between your turns. End it with SendMessage {"type":"${SHUTDOWN_REQUEST}"} to "${name}".`;
}
