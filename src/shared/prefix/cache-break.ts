/**
 * Cache-break diagnosis, pure: did a model call miss the prompt cache it should have hit, and
 * why (SEMANTICS "Cache break detection"). Workflow code decides on every turn from the
 * call's usage and the facts the model activity measured on the request it sent; nothing
 * here reads a clock (times are passed in, from workflow time).
 *
 * Two expectations:
 * - A fork's first call should read its parent's prefix: a break is written cache
 *   (creation > 0) with a hit ratio below {@link CACHE_BREAK_RATIO}; the reason compares the
 *   parent's recorded request hashes with the fork's.
 * - Any later call should read what this agent's previous call left in the cache: every
 *   request marks its own end (src/shared/messages-api/request.ts), so after it the cache holds
 *   `read + creation` of its input tokens. A break is creation > 0 with a read below
 *   {@link CACHE_BREAK_RATIO} of that; the reason compares the two requests' hashes, and when
 *   nothing changed, the time between them with the cache TTL.
 */
import { z } from 'zod';
import { chainDigest, EMPTY_DIGEST } from '../base/hash';
import { blocksOf, cacheHitRatio, stripCacheControl, type MessageParam, type MessagesRequest, type Usage } from '../messages-api/anthropic';
import { cacheKeyComponents, type CacheKeyParts } from './cache-key';
import { requestHashesSchema } from './prefix';
import { schemaOnce } from '../base/schema-once';

/** Below this share of the expected cached tokens read, a call that wrote cache broke it. */
export const CACHE_BREAK_RATIO = 0.5;

/** Said when nothing in the request changed and the previous one is older than the cache TTL. */
export const TTL_EXPIRED = 'TTL expired';

/** Said of the first request after a compaction (src/shared/context/): its prefix is new by design. */
export const COMPACTED = 'compacted';

export type CacheTtl = '5m' | '1h';
export const CACHE_TTL_MS: Readonly<Record<CacheTtl, number>> = { '5m': 5 * 60_000, '1h': 60 * 60_000 };

/**
 * What the model activity measured on the request it sent (returned with the call's result).
 * `system`, `tools`, `model`, `thinking` hash the request context as `cacheKeyComponents` does
 * (so they compare with a parent's recorded hashes); `prefix` and `prefixAt` chain the body's
 * messages, cache markers ignored.
 */
export interface RequestFacts {
  system: string;
  tools: string;
  model: string;
  thinking: string;
  /** Chained digest of all the body's messages. */
  prefix: string;
  /** The same over the first `ModelCallInput.prefixAt` messages (absent when not asked, or out of range). */
  prefixAt?: string;
  /** Number of messages in the body. */
  messages: number;
  /** TTL of the request's last breakpoint: how long what it wrote stays readable. */
  ttl: CacheTtl;
}

/** Facts as stored beside a kept response (src/activities/model/response-store.ts). */
export const requestFactsSchema = schemaOnce('prefix/cache-break#requestFactsSchema', () => z.object({
  system: z.string(),
  tools: z.string(),
  model: z.string(),
  thinking: z.string(),
  prefix: z.string(),
  prefixAt: z.string().optional(),
  messages: z.number().int().min(0),
  ttl: z.enum(['5m', '1h']),
}) satisfies z.ZodType<RequestFacts>);

/** The previous call of this agent, as the next one is judged against. JSON-safe (carried across runs). */
export interface PreviousRequest {
  hashes: SnapshotHashes;
  messages: number;
  ttl: CacheTtl;
  /** Workflow time (ms) when its result arrived. */
  at: number;
  /** Input tokens it left in the cache: read + creation. */
  cached: number;
}

/** The cache-break watch as it crosses runs (carried state, a result, a child's outcome; src/workflows/fork/cache-break.ts): breaks so far, the latest, the request the next call is judged against. */
export const carriedCacheSchema = schemaOnce('prefix/cache-break#carriedCacheSchema', () => z.object({
  breaks: z.number().int().min(0),
  latest: z.object({ ratio: z.number().min(0), reason: z.string(), turn: z.number().int().min(0).optional() }).optional() satisfies z.ZodType<CacheBreak | undefined>,
  previous: z
    .object({ hashes: requestHashesSchema, messages: z.number().int().min(0), ttl: z.enum(['5m', '1h']), at: z.number(), cached: z.number().int().min(0) })
    .optional() satisfies z.ZodType<PreviousRequest | undefined>,
  /** The context was compacted since the previous request: the next one's miss is `compacted`. */
  compacted: z.boolean().optional(),
}));
export type CarriedCache = z.output<typeof carriedCacheSchema>;

/** Component hashes of a request's cache-relevant parts, compared to say why a cache broke. */
export interface SnapshotHashes {
  system: string;
  tools: string;
  model: string;
  thinking: string;
  /** Hash of the message prefix, cache markers ignored. */
  prefix: string;
}

const REASONS: [keyof SnapshotHashes, string][] = [
  ['system', 'system changed'],
  ['tools', 'tools changed'],
  ['model', 'model changed'],
  ['thinking', 'thinking changed'],
  ['prefix', 'message prefix changed'],
];

/** Said when every hash matches: the entry expired, was evicted, or the cause is not visible here. */
export const UNKNOWN_CACHE_BREAK = 'expired / unknown';

/**
 * Why a fork's first request missed the parent's cache, from the two sides' hashes:
 * `'system changed'`, `'tools changed'`, `'model changed'`, `'thinking changed'`,
 * `'message prefix changed'` (several joined with `, `), or `'expired / unknown'`.
 */
export function diagnoseCacheBreak(parent: SnapshotHashes, fork: SnapshotHashes): string {
  const reasons = REASONS.filter(([k]) => parent[k] !== fork[k]).map(([, reason]) => reason);
  return reasons.length > 0 ? reasons.join(', ') : UNKNOWN_CACHE_BREAK;
}

/** A cache break as a fork's status and result report it (the last one its calls had). */
export interface CacheBreak {
  /** Cached tokens read ÷ those expected (first turn of a fork: ÷ its whole input). */
  ratio: number;
  /** `system changed`, `tools changed`, `model changed`, `thinking changed`, `message prefix changed` (joined by `, `), `compacted`, `TTL expired` or `expired / unknown`. */
  reason: string;
  /** The agent's turn whose call broke (absent in results recorded before it was kept). */
  turn?: number;
}

/** A break: the share of the expected cached tokens read, and why. */
export interface Diagnosis {
  ratio: number;
  reason: string;
}

function lastTtl(items: readonly { cache_control?: { ttl?: CacheTtl } | null }[] | undefined): CacheTtl | undefined {
  for (let i = (items?.length ?? 0) - 1; i >= 0; i--) {
    const marker = items![i]!.cache_control;
    if (marker) return marker.ttl ?? '5m';
  }
  return undefined;
}

/** TTL of the last breakpoint in API order (tools, system, messages): the one that covers the most. */
export function lastBreakpointTtl(body: Pick<MessagesRequest, 'tools' | 'system' | 'messages'>): CacheTtl {
  for (let m = body.messages.length - 1; m >= 0; m--) {
    const ttl = lastTtl(blocksOf(body.messages[m]!) as { cache_control?: { ttl?: CacheTtl } | null }[]);
    if (ttl) return ttl;
  }
  return (typeof body.system === 'string' ? undefined : lastTtl(body.system)) ?? lastTtl(body.tools) ?? '5m';
}

/** A message as the request-facts digest sees it: its blocks without their cache markers. */
export function unmarkedMessage(message: MessageParam): unknown {
  return { role: message.role, content: blocksOf(message).map(stripCacheControl) };
}

/** One step of the request-facts digest: `chainDigest` over the message without its markers. */
export type MessageChain = (previous: string, message: MessageParam) => string;
const chainUnmarked: MessageChain = (previous, message) => chainDigest(previous, unmarkedMessage(message));

/**
 * Measures a request: its context's component hashes and a chained digest of its messages
 * (one pass: the digest after `prefixAt` messages and after all of them). `chain` must
 * compute `chainDigest` of `unmarkedMessage`; activities pass a native one that also keeps
 * each message's own hash (the whole request is measured every turn).
 */
export function requestFacts(
  context: CacheKeyParts,
  body: Pick<MessagesRequest, 'tools' | 'system' | 'messages'>,
  prefixAt?: number,
  chain: MessageChain = chainUnmarked,
): RequestFacts {
  let digest = EMPTY_DIGEST;
  let at: string | undefined = prefixAt === 0 ? digest : undefined;
  body.messages.forEach((m, i) => {
    digest = chain(digest, m);
    if (i + 1 === prefixAt) at = digest;
  });
  return { ...cacheKeyComponents(context), prefix: digest, ...(at !== undefined ? { prefixAt: at } : {}), messages: body.messages.length, ttl: lastBreakpointTtl(body) };
}

/** Facts → the hashes a later call is compared with (`prefix`: all its messages). */
export function previousRequest(facts: RequestFacts, usage: Usage, at: number): PreviousRequest {
  const { system, tools, model, thinking, prefix } = facts;
  return { hashes: { system, tools, model, thinking, prefix }, messages: facts.messages, ttl: facts.ttl, at, cached: usage.cacheReadInputTokens + usage.cacheCreationInputTokens };
}

/**
 * A fork's first call against its parent's prefix: a break when it wrote cache and read less
 * than {@link CACHE_BREAK_RATIO} of its input; why, from both sides' hashes when known.
 */
export function diagnoseFirstTurn(usage: Usage, parent?: SnapshotHashes, fork?: SnapshotHashes): Diagnosis | undefined {
  const ratio = cacheHitRatio(usage);
  if (usage.cacheCreationInputTokens === 0 || ratio >= CACHE_BREAK_RATIO) return undefined;
  return { ratio, reason: parent && fork ? diagnoseCacheBreak(parent, fork) : UNKNOWN_CACHE_BREAK };
}

/**
 * A later call against this agent's previous one. `startedAt` is the workflow time the call
 * was scheduled. A break when it wrote cache and read less than {@link CACHE_BREAK_RATIO} of
 * what the previous call left cached; nothing is expected when that left nothing (a prompt
 * below the model's minimum cacheable length). The reason: what changed between the two
 * requests (the message prefix compared up to the previous request's length); when nothing
 * did, `TTL expired` if more than the previous request's TTL passed, else `expired / unknown`
 * (evicted early, or a cause not visible here).
 */
export function diagnoseLaterTurn(previous: PreviousRequest, usage: Usage, facts: RequestFacts | undefined, startedAt: number): Diagnosis | undefined {
  if (usage.cacheCreationInputTokens === 0 || previous.cached === 0) return undefined;
  const ratio = usage.cacheReadInputTokens / previous.cached;
  if (ratio >= CACHE_BREAK_RATIO) return undefined;
  if (!facts) return { ratio, reason: UNKNOWN_CACHE_BREAK };
  // A shorter request than the previous one cannot contain its prefix.
  const now: SnapshotHashes = { system: facts.system, tools: facts.tools, model: facts.model, thinking: facts.thinking, prefix: facts.prefixAt ?? `shorter:${facts.prefix}` };
  const changed = diagnoseCacheBreak(previous.hashes, now);
  if (changed !== UNKNOWN_CACHE_BREAK) return { ratio, reason: changed };
  return { ratio, reason: startedAt - previous.at > CACHE_TTL_MS[previous.ttl] ? TTL_EXPIRED : UNKNOWN_CACHE_BREAK };
}
