/**
 * The provider's context management on the wire (Messages API beta): the `context_management`
 * request parameter with its three edits, their beta headers, and what a response reports.
 * Shapes follow @anthropic-ai/sdk 1.12's beta types (`BetaContextManagementConfig`,
 * `BetaCompact20260112Edit`, `BetaClearToolUses20250919Edit`, `BetaClearThinking20251015Edit`,
 * `BetaCompactionBlock`, `BetaCompactionIterationUsage`). The model activity sends them; the
 * offline model validates and applies them (src/offline/context-editing.ts). Pure.
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';
import { providerTrigger, thresholdTokens, type ContextPolicy } from './policy';

/** Beta header of `compact_20260112` (server-side compaction). */
export const COMPACT_BETA = 'compact-2026-01-12';
/** Beta header of the context-editing edits (`clear_tool_uses_20250919`, `clear_thinking_20251015`). */
export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';

const inputTokens = schemaOnce('context/edits#inputTokens', () => z.strictObject({ type: z.literal('input_tokens'), value: z.number().int().min(1) }));

export const compactEditSchema = schemaOnce('context/edits#compactEditSchema', () => z.strictObject({
  type: z.literal('compact_20260112'),
  instructions: z.string().nullish(),
  pause_after_compaction: z.boolean().optional(),
  /** Default 150,000 input tokens; the API refuses less than 50,000. */
  trigger: inputTokens.nullish(),
}));

export const clearToolUsesEditSchema = schemaOnce('context/edits#clearToolUsesEditSchema', () => z.strictObject({
  type: z.literal('clear_tool_uses_20250919'),
  clear_at_least: inputTokens.nullish(),
  clear_tool_inputs: z.union([z.boolean(), z.array(z.string())]).nullish(),
  exclude_tools: z.array(z.string()).nullish(),
  /** Tool uses kept (default 3). */
  keep: z.strictObject({ type: z.literal('tool_uses'), value: z.number().int().min(0) }).optional(),
  /** Default 100,000 input tokens. */
  trigger: z.union([inputTokens, z.strictObject({ type: z.literal('tool_uses'), value: z.number().int().min(1) })]).optional(),
}));

export const clearThinkingEditSchema = schemaOnce('context/edits#clearThinkingEditSchema', () => z.strictObject({
  type: z.literal('clear_thinking_20251015'),
  /** Assistant turns whose thinking is kept (default: 1). */
  keep: z.union([z.strictObject({ type: z.literal('thinking_turns'), value: z.number().int().min(1) }), z.strictObject({ type: z.literal('all') }), z.literal('all')]).optional(),
}));

export const contextEditSchema = schemaOnce('context/edits#contextEditSchema', () => z.discriminatedUnion('type', [compactEditSchema, clearToolUsesEditSchema, clearThinkingEditSchema]));
export type ContextEdit = z.infer<typeof contextEditSchema>;

/** The `context_management` request parameter. */
export const contextManagementParamSchema = schemaOnce('context/edits#contextManagementParamSchema', () => z.strictObject({ edits: z.array(contextEditSchema).optional() }));
export type ContextManagementParam = z.infer<typeof contextManagementParamSchema>;

/** The beta header each edit needs. */
export function betaFor(edit: ContextEdit): string {
  return edit.type === 'compact_20260112' ? COMPACT_BETA : CONTEXT_MANAGEMENT_BETA;
}

/** `context_management.applied_edits` entries of a response. */
export type AppliedEdit =
  | { type: 'clear_tool_uses_20250919'; cleared_tool_uses: number; cleared_input_tokens: number }
  | { type: 'clear_thinking_20251015'; cleared_thinking_turns: number; cleared_input_tokens: number };

/** The placeholder a cleared tool result holds (the provider's and forkflow's own clearing). */
export const CLEARED_TOOL_RESULT = '[Tool result cleared to save context. Call the tool again if you need it.]';

/**
 * The edits a policy puts on every request, and their beta headers. `thinking`: the request
 * has extended thinking on (clear_thinking applies then, and goes first among the edits).
 */
export function providerEdits(p: ContextPolicy, window: number, thinking: boolean): { edits: ContextEdit[]; betas: string[] } {
  if (p.by !== 'provider' || p.strategy === 'off') return { edits: [], betas: [] };
  const edits: ContextEdit[] = [];
  if (p.strategy === 'compact') {
    edits.push({ type: 'compact_20260112', trigger: { type: 'input_tokens', value: providerTrigger(p, window) }, ...(p.instructions ? { instructions: p.instructions } : {}) });
  } else {
    if (thinking) edits.push({ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 1 } });
    edits.push({ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: thresholdTokens(p, window) }, keep: { type: 'tool_uses', value: p.keepToolUses } });
  }
  return { edits, betas: [...new Set(edits.map(betaFor))] };
}
