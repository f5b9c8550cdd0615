/**
 * Cost estimates for status and tree totals: US dollars per million tokens by model family,
 * with cache writes at 1.25× input and cache reads at 0.1× (ANTHROPIC-API.md). Estimates,
 * not invoices: unknown models use the sonnet row, and the table is easy to override.
 */
import type { Usage } from './anthropic';

export interface Price {
  input: number;
  output: number;
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

export function estimateCostUsd(model: string, u: Usage): number {
  const p = priceFor(model);
  const dollars = (u.inputTokens * p.input + u.cacheCreationInputTokens * p.input * 1.25 + u.cacheReadInputTokens * p.input * 0.1 + u.outputTokens * p.output) / 1_000_000;
  return Math.round(dollars * 1_000_000) / 1_000_000;
}
