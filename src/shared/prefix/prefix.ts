/**
 * A conversation prefix held by reference: "messages [0, count) of that run". A fork started
 * this way records a few hundred bytes in its history instead of the parent's whole context;
 * its activities read the prefix from the owning run through queries (which a closed run
 * answers too, until retention), cached per worker and shared by siblings.
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';

/** A workflow run whose state answers the `messages` and `requestContext` queries. */
export interface RunRef {
  workflowId: string;
  runId: string;
}

export const runRefSchema = schemaOnce('prefix/prefix#runRefSchema', () => z.strictObject({ workflowId: z.string().min(1), runId: z.string().min(1) }));

/** Enough about the request context for workflow code; the full context stays with `from`. */
export const contextSummarySchema = schemaOnce('prefix/prefix#contextSummarySchema', () => z.strictObject({
  /** The run that answers `requestContext` with the full system prompt, tools and model. */
  from: runRefSchema,
  /** Hash of that full context (the worker caches contexts by it). */
  contextKey: z.string().min(1),
  model: z.string().min(1),
  cacheKeyHash: z.string().min(1),
  toolNames: z.array(z.string()),
  maxTokens: z.number().int().positive(),
}));
export type ContextSummary = z.infer<typeof contextSummarySchema>;

/** Component hashes of the parent's actual request, for explaining a cache break. */
export const requestHashesSchema = schemaOnce('prefix/prefix#requestHashesSchema', () => z.strictObject({
  system: z.string(),
  tools: z.string(),
  model: z.string(),
  thinking: z.string(),
  prefix: z.string(),
}));
export type RequestHashes = z.infer<typeof requestHashesSchema>;

export const prefixRefSchema = schemaOnce('prefix/prefix#prefixRefSchema', () => z.strictObject({
  run: runRefSchema,
  /** The prefix is messages [0, count) of `run`'s conversation. */
  count: z.number().int().min(0),
  /** Chained digest of those messages (proves a cached copy exact). */
  digest: z.string().min(1),
  /** Role of message count-1: decides how the fork's opening joins the prefix. */
  lastRole: z.enum(['user', 'assistant']).optional(),
  /** tool_use ids of that last assistant message, answered by placeholders in each fork. */
  pendingToolUseIds: z.array(z.string()),
  context: contextSummarySchema,
  requestHashes: requestHashesSchema.optional(),
  /**
   * The owner's context was managed (src/shared/context/): its requests send messages from
   * `from` on (a compaction boundary), with tool results before `clearedThrough` cleared. A fork
   * starts from the same cut, so it and its siblings send the compacted prefix byte for byte.
   */
  window: z.strictObject({ from: z.number().int().min(0), clearedThrough: z.number().int().min(0).optional(), compactions: z.number().int().min(0) }).optional(),
}));
export type PrefixRef = z.infer<typeof prefixRefSchema>;

export function sameRun(a: RunRef, b: RunRef): boolean {
  return a.workflowId === b.workflowId && a.runId === b.runId;
}
