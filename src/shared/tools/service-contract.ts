/**
 * The service-tool contract: what travels between forkflow and a service that serves tools
 * or hooks on a task queue of its own, in any language. Both sides import these schemas
 * (forkflow's workflow checks every answer with them; the TypeScript helper in
 * `forkflow/worker` builds its answers with them), and the JSON Schemas below are what
 * other languages build theirs from (README "Your own tools").
 *
 * - A routed tool call is ONE activity of type {@link SERVICE_TOOL_ACTIVITY} on the route's
 *   task queue: input {@link ServiceToolCall}, result {@link ServiceToolResult}.
 * - A hook is ONE activity of type {@link SERVICE_HOOK_ACTIVITY} on the hook's task queue:
 *   input {@link ServiceHookCall}, result {@link ServiceHookAnswer}.
 *
 * All of it is plain JSON (Temporal's default `json/plain` payloads), snake_case, versioned by
 * `v`. A service adds fields to its answers at will (unknown ones are ignored); forkflow adds
 * fields to its inputs only, and raises `v` for anything else.
 *
 * Pure and workflow-safe.
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';

/** The activity type of a routed tool call (register it under exactly this name). */
export const SERVICE_TOOL_ACTIVITY = 'forkflow.callTool';
/** The activity type of a hook call. */
export const SERVICE_HOOK_ACTIVITY = 'forkflow.hook';
/** The contract version in every input (`v`). */
export const SERVICE_CONTRACT_VERSION = 1;

/** Where a call comes from: the same fields on tool calls and hook calls. */
const origin = schemaOnce('tools/service-contract#origin', () => ({
  v: z.literal(SERVICE_CONTRACT_VERSION),
  /** The agent (its workflow id) making the call. */
  agent_id: z.string().min(1),
  /** The root of its agent tree (itself for a top-level agent). */
  root_id: z.string().min(1),
  /** The agent's turn (1-based: its n-th model reply asked for the call). */
  turn: z.number().int().min(0),
}));

/** The input of {@link SERVICE_TOOL_ACTIVITY}. */
export const serviceToolCallSchema = schemaOnce('tools/service-contract#serviceToolCallSchema', () => z.looseObject({
  ...origin,
  /** The tool's name as the model called it. */
  tool: z.string().min(1),
  /** The model's input for it, after any PreToolUse rewrite: a JSON object, NOT yet checked against the tool's schema. */
  input: z.record(z.string(), z.unknown()),
  /** The model's id for the call (stable across attempts: use it to make a tool idempotent). */
  tool_use_id: z.string().min(1),
  /** 1 for the first try; 2, 3… when an idempotent tool is run again after a lost or failed attempt. */
  attempt: z.number().int().min(1),
}));
export type ServiceToolCall = z.infer<typeof serviceToolCallSchema>;

const textBlock = schemaOnce('tools/service-contract#textBlock', () => z.looseObject({ type: z.literal('text'), text: z.string() }));
const imageBlock = schemaOnce('tools/service-contract#imageBlock', () => z.looseObject({
  type: z.literal('image'),
  source: z.looseObject({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string() }),
}));

/** The result of {@link SERVICE_TOOL_ACTIVITY}: what the model reads as the tool_result. */
export const serviceToolResultSchema = schemaOnce('tools/service-contract#serviceToolResultSchema', () => z.looseObject({
  /** A string, or content blocks (`text`, `image` with a base64 source). */
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textBlock, imageBlock]))]),
  /** The tool failed in a way the model should see and act on (bad input, not found, refused…). */
  is_error: z.boolean().optional(),
}));
export type ServiceToolResult = z.infer<typeof serviceToolResultSchema>;

/** The lifecycle points a service can hook. */
export const HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'SubagentStart', 'SubagentStop', 'Stop'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** The input of {@link SERVICE_HOOK_ACTIVITY}; which fields are present depends on `event`. */
export const serviceHookCallSchema = schemaOnce('tools/service-contract#serviceHookCallSchema', () => z.looseObject({
  ...origin,
  event: z.enum(HOOK_EVENTS),
  /** Its parent agent, for a sub-agent. */
  parent_agent_id: z.string().optional(),
  /** PreToolUse, PostToolUse: the call. */
  tool: z.string().optional(),
  input: z.record(z.string(), z.unknown()).optional(),
  tool_use_id: z.string().optional(),
  /** PostToolUse: what the tool returned. */
  result: z.looseObject({ content: z.union([z.string(), z.array(z.unknown())]), is_error: z.boolean() }).optional(),
  /** SubagentStart: the agent's directive. */
  prompt: z.string().optional(),
  /** SubagentStop, Stop: how it ended (`completed`, `failed`, `killed`, `timeout`; Stop: `end_turn`) and its last text. */
  status: z.string().optional(),
  text: z.string().optional(),
}));
export type ServiceHookCall = z.infer<typeof serviceHookCallSchema>;

/**
 * The result of {@link SERVICE_HOOK_ACTIVITY}. Every field is optional: `{}` means "go on".
 * - PreToolUse: `decision: "deny"` with `message` (the model reads it as the call's error
 *   result), or `input` to run the call with a rewritten input;
 * - PostToolUse, SubagentStart: `additional_context` is added for the model to read;
 * - Stop: `decision: "block"` with `message`: the agent is not done; `message` is its next
 *   user turn (at most {@link STOP_BLOCKS} times in a row).
 */
export const serviceHookAnswerSchema = schemaOnce('tools/service-contract#serviceHookAnswerSchema', () => z.looseObject({
  decision: z.enum(['allow', 'deny', 'block']).optional(),
  message: z.string().max(100_000).optional(),
  input: z.record(z.string(), z.unknown()).optional(),
  additional_context: z.string().max(100_000).optional(),
}));
export type ServiceHookAnswer = z.infer<typeof serviceHookAnswerSchema>;

/** How many times in a row a Stop hook may send an agent back to work. */
export const STOP_BLOCKS = 3;

/** JSON Schemas of the four shapes, for services in other languages (`forkflow schema --contract`). */
export function serviceContractJsonSchemas(): Record<string, unknown> {
  const schema = (s: z.ZodType) => z.toJSONSchema(s, { target: 'draft-7', io: 'input' });
  return {
    activities: { tool: SERVICE_TOOL_ACTIVITY, hook: SERVICE_HOOK_ACTIVITY },
    version: SERVICE_CONTRACT_VERSION,
    toolCall: schema(serviceToolCallSchema),
    toolResult: schema(serviceToolResultSchema),
    hookCall: schema(serviceHookCallSchema),
    hookAnswer: schema(serviceHookAnswerSchema),
  };
}
