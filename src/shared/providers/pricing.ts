/**
 * Cost estimates for status and tree totals: US dollars per million tokens by model family,
 * with cache writes at 1.25× input (5-minute TTL) or 2× (1-hour TTL) and cache reads at 0.1×
 * (ANTHROPIC-API.md); calls delivered by Message Batches at half of all that. Estimates,
 * not invoices: unknown models use the sonnet row unless their provider entry prices them
 * (`pricing` in FORKFLOW_PROVIDERS, passed here as `price`).
 */
import type { Usage } from '../messages-api/anthropic';

/**
 * US dollars per million tokens. Cache traffic, when not given, is priced from `input` with
 * the Anthropic multipliers ({@link CACHE_PRICE}); a provider entry may give its own
 * (`pricing` in FORKFLOW_PROVIDERS: e.g. an OpenAI-compatible `cacheRead` at half of input).
 */
export interface Price {
  input: number;
  output: number;
  /** A cached input token read (OpenAI-compatible: `cached_tokens`). */
  cacheRead?: number;
  /** A token written to the cache with the 5-minute TTL. */
  cacheWrite5m?: number;
  /** A token written to the cache with the 1-hour TTL. */
  cacheWrite1h?: number;
}

export const PRICES_PER_MTOK: Record<string, Price> = {
  opus: { input: 15, output: 75 },
  sonnet: { input: 3, output: 15 },
  haiku: { input: 1, output: 5 },
};

export function priceFor(model: string): Price {
  const family = Object.keys(PRICES_PER_MTOK).find((f) => model.includes(f));
  return PRICES_PER_MTOK[family ?? 'sonnet']!;
}

/** Price multipliers of cache traffic, relative to uncached input. */
export const CACHE_PRICE = { write5m: 1.25, write1h: 2, read: 0.1 } as const;

/** Message Batches bill every token kind (cache traffic included) at this share of the interactive price. */
export const BATCH_PRICE_SHARE = 0.5;

/** What `u`'s batched part saved against the same calls made interactively. */
export function batchSavingUsd(model: string, u: Usage, price?: Price): number {
  return u.batch ? Math.round(listCostUsd(model, u.batch, price) * (1 - BATCH_PRICE_SHARE) * 1_000_000) / 1_000_000 : 0;
}

/**
 * Cost of `u`, its batched part at the batch rate. `price`: the model's price as its provider
 * entry configures it (src/shared/providers/agent-provider.ts `priceOf`); absent, the table above.
 */
export function estimateCostUsd(model: string, u: Usage, price?: Price): number {
  const dollars = listCostUsd(model, u, price) - (u.batch ? listCostUsd(model, u.batch, price) * (1 - BATCH_PRICE_SHARE) : 0);
  return Math.round(dollars * 1_000_000) / 1_000_000;
}

/** Cost of `u` at interactive prices. */
function listCostUsd(model: string, u: Usage, price?: Price): number {
  const p = price ?? priceFor(model);
  const hour = Math.min(u.cacheCreation1hInputTokens ?? 0, u.cacheCreationInputTokens);
  // Without prices of its own for cache traffic, the same arithmetic as always (the same roundings).
  const writes = p.cacheWrite5m === undefined && p.cacheWrite1h === undefined
    ? ((u.cacheCreationInputTokens - hour) * CACHE_PRICE.write5m + hour * CACHE_PRICE.write1h) * p.input
    : (u.cacheCreationInputTokens - hour) * (p.cacheWrite5m ?? p.input * CACHE_PRICE.write5m) + hour * (p.cacheWrite1h ?? p.input * CACHE_PRICE.write1h);
  const reads = p.cacheRead === undefined ? u.cacheReadInputTokens * p.input * CACHE_PRICE.read : u.cacheReadInputTokens * p.cacheRead;
  return (u.inputTokens * p.input + writes + reads + u.outputTokens * p.output) / 1_000_000;
}
