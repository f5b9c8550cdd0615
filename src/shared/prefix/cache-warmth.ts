/**
 * Keeping a fork's prompt cache warm while it waits (an approval, a message, its children):
 * the `cacheWhileWaiting` policy and the pure rules the workflow and the model activity share.
 *
 * - `off` (default): 5-minute entries, as before; a wait past 5 minutes re-writes the prefix.
 * - `ttl-1h`: every breakpoint of every request carries `ttl: '1h'`. Every request, because
 *   whether a wait follows is known only from the response (a tool that needs approval, an
 *   end of turn with children running), and because the API wants longer TTLs before shorter
 *   ones, so the end-of-request mark cannot be 1h behind a 5m system mark. The premium is
 *   paid on writes only (2× instead of 1.25× input: 0.75× of each token written, about once
 *   per token over the fork's life); one wait past 5 minutes saves 1.15× of the whole prefix.
 *   Cache keys ignore `cache_control`, so a 1h fork still reads its parent's 5m prefix.
 * - `keep-alive`: 5-minute entries, and while a wait outlasts {@link KEEP_ALIVE_AT} of the
 *   TTL, a keep-alive request — the last request again, `max_tokens` minimal — reads (and so
 *   refreshes) the whole prefix at 0.1× input, repeated until the wait ends.
 */
import { z } from 'zod';
import { messageParamSchema, type MessagesRequest } from '../messages-api/anthropic';
import type { ModelCallInput } from '../wire/activity-io';
import { CACHE_TTL_MS, type CacheTtl } from './cache-break';
import { runRefSchema } from './prefix';
import { schemaOnce } from '../base/schema-once';

export const cacheWhileWaitingSchema = schemaOnce('prefix/cache-warmth#cacheWhileWaitingSchema', () => z.enum(['off', 'ttl-1h', 'keep-alive']));
export type CacheWhileWaiting = z.infer<typeof cacheWhileWaitingSchema>;

/**
 * A keep-alive is sent this far into the TTL, counted from when the previous call was
 * scheduled (before its request was sent, so before the provider refreshed the entry): the
 * rest (a minute of a 5-minute TTL) covers scheduling the activity and sending the request.
 */
export const KEEP_ALIVE_AT = 0.8;

/** The TTL the requests of a policy mark their breakpoints with. */
export function ttlFor(policy: CacheWhileWaiting | undefined): CacheTtl {
  return policy === 'ttl-1h' ? '1h' : '5m';
}

/**
 * A TTL in ms as a worker sees it: the provider's, divided by the worker's `modelClockScale`
 * (an emulator whose clock runs that many times faster; 1 against a real provider).
 */
export function ttlMsAt(ttl: CacheTtl, clockScale = 1): number {
  return Math.max(1, Math.round(CACHE_TTL_MS[ttl] / clockScale));
}

/** When the next keep-alive is due: {@link KEEP_ALIVE_AT} of the TTL after the last call was scheduled. */
export function keepAliveDueAt(lastScheduledAt: number, ttlMs: number): number {
  return lastScheduledAt + Math.floor(ttlMs * KEEP_ALIVE_AT);
}

/**
 * `max_tokens` of a keep-alive: one token, or just over the thinking budget when thinking is
 * on (the API wants max_tokens above it, and dropping `thinking` would change the messages'
 * cache key and miss the very prefix the call is meant to keep).
 */
export function keepAliveMaxTokens(body: Pick<MessagesRequest, 'thinking'>): number {
  const t = body.thinking as { type?: string; budget_tokens?: number } | undefined;
  return t?.type === 'enabled' && typeof t.budget_tokens === 'number' ? t.budget_tokens + 1 : 1;
}

const count = schemaOnce('prefix/cache-warmth#count', () => z.number().int().min(0));

/**
 * The model call a keep-alive repeats, as it crosses continue-as-new (a run that continues
 * while waiting for its children goes on keeping the cache warm). Parsed where the next run
 * starts, every field of ModelCallInput (a field added there must be added here, or a carried
 * keep-alive drops it); the model activity proves the conversation by its digest anyway.
 */
export const carriedWarmthSchema = schemaOnce('prefix/cache-warmth#carriedWarmthSchema', () => z.object({
  input: z.object({
    run: runRefSchema,
    agentId: z.string().min(1),
    turn: z.number().int().min(1),
    messageCount: count,
    digest: z.string().min(1),
    contextKey: z.string().min(1),
    tail: z.object({ from: count, messages: z.array(messageParamSchema) }).optional(),
    openingRecipe: z
      .object({
        from: count,
        shape: z.object({ count, lastRole: z.enum(['user', 'assistant']).optional(), pendingToolUseIds: z.array(z.string()) }),
        directive: z.string(),
        worktree: z.object({ parentRoot: z.string(), worktreeRoot: z.string() }).optional(),
      })
      .optional(),
    sharedPrefixEnd: z.object({ messageIndex: z.number().int(), blockIndex: z.number().int() }).optional(),
    prefix: z.object({ run: runRefSchema, count, digest: z.string().min(1) }).optional(),
    contextFrom: runRefSchema.optional(),
    maxTokens: z.number().int().min(1).optional(),
    budget: z.object({ left: count, ledger: z.object({ rootId: z.string().min(1), toolUses: count }).optional() }).optional(),
    cacheTtl: z.literal('1h').optional(),
    prefixAt: count.optional(),
    keepAlive: z.number().int().min(1).optional(),
  }),
  /** Workflow time (ms) when the newest call of that prefix was scheduled. */
  scheduledAt: z.number(),
  ttlMs: z.number().int().min(1),
}));
export interface CarriedWarmth {
  input: ModelCallInput;
  scheduledAt: number;
  ttlMs: number;
}
carriedWarmthSchema satisfies z.ZodType<CarriedWarmth>;
