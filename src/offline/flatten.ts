/**
 * Flattens a Messages request into the block sequence the prompt cache works on:
 * tools → system → messages, each block with its token estimate, the cache key of the
 * prefix that ends with it, and the cache breakpoints.
 */
import type { CacheControl, MessageParam, SystemParam, ToolDefinition } from '../shared/messages-api/anthropic';
import { canonicalJson } from '../shared/base/hash';
import { chainDigestNative as chainDigest, sha256HexNative as sha256Hex } from './native-hash';
import { MESSAGE_OVERHEAD_TOKENS } from '../shared/messages-api/tokens';
import { asBlocks, blockTokens, stripCacheControl, type MediaRules } from '../shared/messages-api/request-tokens';

/** The request fields the cache looks at (a validated request body). */
export interface CacheableRequest {
  model: string;
  messages: MessageParam[];
  system?: SystemParam;
  tools?: ToolDefinition[];
  tool_choice?: unknown;
  thinking?: unknown;
  cache_control?: CacheControl | null;
}

export type CacheLevel = 'tools' | 'system' | 'messages';
export type CacheTtl = '5m' | '1h';

export interface Breakpoint {
  /** Index of the marked block in {@link FlatRequest.keys}. */
  index: number;
  ttl: CacheTtl;
}

export interface FlatRequest {
  /** `keys[i]`: cache key of the prefix made of blocks 0..i. */
  keys: string[];
  /** `cumulative[i]`: estimated tokens of blocks 0..i. */
  cumulative: number[];
  /** Sorted by index, at most one per block. */
  breakpoints: Breakpoint[];
  totalTokens: number;
}

interface Flat {
  level: CacheLevel;
  item: unknown;
  tokens: number;
  cacheControl?: CacheControl | null;
}

function flatBlocks(req: CacheableRequest, rules: MediaRules): Flat[] {
  const out: Flat[] = [];
  const push = (level: CacheLevel, raw: Record<string, unknown>, extra: Record<string, unknown>, overhead: number): void => {
    const stripped = stripCacheControl(raw);
    out.push({
      level,
      item: { level, ...extra, block: stripped },
      tokens: blockTokens(raw, overhead, rules),
      cacheControl: raw.cache_control as CacheControl | null | undefined,
    });
  };
  for (const tool of req.tools ?? []) push('tools', tool, {}, 0);
  if (req.system !== undefined) for (const b of asBlocks(req.system)) push('system', b, {}, 0);
  for (const message of req.messages) {
    asBlocks(message.content).forEach((b, i) => {
      // The role and the message boundary are part of the prefix; the per-message
      // overhead is charged to the message's first block.
      push('messages', b, { role: message.role, first: i === 0 }, i === 0 ? MESSAGE_OVERHEAD_TOKENS : 0);
    });
  }
  return out;
}

/**
 * Flattens a request. Keys hash the model and every block (cache_control stripped) of the
 * prefix; message-level keys also hash `tool_choice` and `thinking`, because changing
 * those invalidates the messages level only. `rules`: whose published rules count images and
 * documents (default Anthropic's; the Chat Completions route counts OpenAI's tiles).
 */
export function flattenRequest(req: CacheableRequest, rules: MediaRules = 'anthropic'): FlatRequest {
  const blocks = flatBlocks(req, rules);
  const messageParams = canonicalJson({ tool_choice: req.tool_choice, thinking: req.thinking });
  let digest = sha256Hex(canonicalJson({ cache: 'forkflow-offline:v1', model: req.model }));
  let total = 0;
  const keys: string[] = [];
  const cumulative: number[] = [];
  const marks = new Map<number, CacheTtl>();
  blocks.forEach((b, i) => {
    digest = chainDigest(digest, b.item);
    keys.push(b.level === 'messages' ? sha256Hex(`${digest}|${messageParams}`) : digest);
    total += b.tokens;
    cumulative.push(total);
    if (b.cacheControl) marks.set(i, b.cacheControl.ttl ?? '5m');
  });
  // Automatic caching: the top-level marker applies to the last block (a marker already
  // on that block wins).
  if (req.cache_control && blocks.length > 0 && !marks.has(blocks.length - 1)) {
    marks.set(blocks.length - 1, req.cache_control.ttl ?? '5m');
  }
  const breakpoints = [...marks].map(([index, ttl]) => ({ index, ttl })).sort((a, b) => a.index - b.index);
  return { keys, cumulative, breakpoints, totalTokens: total };
}

/** Number of `cache_control` markers in a request (the API allows at most 4). */
export function countCacheMarkers(req: CacheableRequest): number {
  return blockMarkers(req).length + (req.cache_control ? 1 : 0);
}

/** The `cache_control` of every marked block, in prefix order (no hashing, no token estimates). */
function blockMarkers(req: CacheableRequest): CacheControl[] {
  const out: CacheControl[] = [];
  const visit = (raw: Record<string, unknown>) => {
    if (raw.cache_control) out.push(raw.cache_control as CacheControl);
  };
  for (const tool of req.tools ?? []) visit(tool);
  if (req.system !== undefined) for (const b of asBlocks(req.system)) visit(b);
  for (const message of req.messages) for (const b of asBlocks(message.content)) visit(b);
  return out;
}

/**
 * The first breakpoint, in prefix order, whose TTL is longer than an earlier one's: the API
 * rejects a 1-hour entry after a 5-minute one (longer-lived entries must come first).
 */
export function ttlOrderViolation(req: CacheableRequest): { index: number; ttl: CacheTtl; after: CacheTtl } | undefined {
  const ttls: CacheTtl[] = blockMarkers(req).map((c) => c.ttl ?? '5m');
  if (req.cache_control) ttls.push(req.cache_control.ttl ?? '5m');
  let shortest: CacheTtl = '1h';
  for (let i = 0; i < ttls.length; i++) {
    const ttl = ttls[i] as CacheTtl;
    if (ttl === '1h' && shortest === '5m') return { index: i, ttl, after: shortest };
    if (ttl === '5m') shortest = '5m';
  }
  return undefined;
}

/**
 * Automatic prefix caching as OpenAI-compatible providers do it (no markers: every prefix
 * may be cached): the request's own breakpoints are replaced by one at the end of every
 * message, so a sibling that shares the first N messages reads them whatever follows.
 */
export function atMessageEnds(req: CacheableRequest, flat: FlatRequest): FlatRequest {
  let at = (req.tools?.length ?? 0) + (req.system === undefined ? 0 : asBlocks(req.system).length);
  const breakpoints: Breakpoint[] = [];
  for (const message of req.messages) {
    at += asBlocks(message.content).length;
    breakpoints.push({ index: at - 1, ttl: '5m' });
  }
  return { ...flat, breakpoints };
}
