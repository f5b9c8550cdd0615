/**
 * An agent's context-management state as it crosses runs (carried state `context`, v2
 * optional part) and as `status` shows it. The writer is src/workflows/fork/context-keeper.ts.
 */
import { z } from 'zod';
import type { Usage } from '../messages-api/anthropic';
import { schemaOnce } from '../base/schema-once';
import { usageSchema } from '../tree/tree-ledger';

const count = schemaOnce('context/state#count', () => z.number().int().min(0));

/** What started a compaction. */
export type CompactionReason = 'threshold' | 'prompt-too-long' | 'over-threshold' | 'provider';

/** A compaction boundary: where the model's context starts since then. */
export const contextBoundarySchema = schemaOnce('context/state#contextBoundarySchema', () => z.object({
  /** The message the context starts at (the summary message, or the reply holding the compaction block). */
  at: count,
  /** The turn it came before (forkflow) or in (provider). */
  turn: count,
  by: z.enum(['forkflow', 'provider']),
  reason: z.enum(['threshold', 'prompt-too-long', 'over-threshold', 'provider']),
  /** The request's size before it. */
  tokensBefore: count,
  /** The first request's size after it (absent until that request was made). */
  tokensAfter: count.optional(),
}));
export type ContextBoundary = z.output<typeof contextBoundarySchema>;

/** Boundaries kept in state (the newest); the transcript keeps every summary message. */
export const BOUNDARIES_KEPT = 20;

export const carriedContextSchema = schemaOnce('context/state#carriedContextSchema', () => z.object({
  /** The first message the model sees (0: all of them). */
  from: count,
  /** Tool results before this message are sent cleared (forkflow's clearing). */
  clearedThrough: count.optional(),
  /** Compactions over all runs (forkflow's and the provider's). */
  compactions: count,
  boundaries: z.array(contextBoundarySchema).max(BOUNDARIES_KEPT),
  /** Usage of the summarising: forkflow's compaction calls and the provider's compaction passes. */
  summarising: usageSchema,
  /** Input tokens later requests did not send thanks to compaction (each request: what all boundaries so far dropped). */
  saved: count,
  /** What the boundaries so far drop from every request (tokens). */
  dropped: count,
  /** The provider's context editing: tool uses and tokens it cleared, summed over requests. */
  cleared: z.object({ toolUses: count, tokens: count }).optional(),
  /** The newest request's size and the message count it covered (the base of the next estimate). */
  measured: z.object({ count, tokens: count }).optional(),
}));
export type CarriedContext = z.output<typeof carriedContextSchema>;

/** `status.context` (and the result's): the window, the policy, and what was done to stay inside it. */
export interface ContextStatus {
  policy: string;
  window: number;
  /** Tokens at which the policy acts. */
  threshold: number;
  /** The newest request's input tokens, as the provider reported them. */
  lastRequestTokens?: number;
  from: number;
  compactions: number;
  /** The newest boundaries (at most BOUNDARIES_KEPT). */
  boundaries: ContextBoundary[];
  summarising: { usage: Usage; costUsd: number };
  tokensSaved: number;
  cleared?: { toolUses: number; tokens: number };
}
