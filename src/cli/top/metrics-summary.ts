/**
 * forkflow's metrics boiled down to what `forkflow top` shows (and `--json` prints): totals
 * summed over task queues, workflow/activity types and workers, split only by the labels
 * an operator reads — fork state, model and outcome, token kind, tool and outcome, cache-break reason.
 */
import { FORKFLOW_METRICS as M, TOKEN_KINDS, type TokenKind } from '../../shared/wire/metrics';
import { batchSavingUsd } from '../../shared/providers/pricing';
import { sumBy, total, type Sample } from './prometheus-text';
import { DEFAULT_PROVIDER } from '../../shared/providers/model-allowlist';

export interface LabelledCount {
  labels: Record<string, string>;
  value: number;
}

export interface MetricsSummary {
  forks: { started: number; ended: Record<string, number> };
  modelCalls: LabelledCount[];
  tokens: Record<TokenKind, number>;
  toolCalls: LabelledCount[];
  cacheBreaks: number;
  /** The same by reason (what changed, TTL expired, or expired / unknown), most first. */
  cacheBreakReasons: LabelledCount[];
  approvals: { requested: number; decided: number; pending: number };
  /** Tokens delivered by Message Batches (a part of `tokens`) and what they saved against interactive prices, estimated (src/shared/providers/pricing.ts). */
  batch: { tokens: Record<TokenKind, number>; savedUsd: number };
  /**
   * Per provider (series without the label, from workers before it, count as `anthropic`): its
   * tokens, and its cache-read share, cache reads over all its input tokens (0 without input).
   */
  providers: ProviderTokens[];
}

export interface ProviderTokens {
  provider: string;
  tokens: Record<TokenKind, number>;
  cacheReadShare: number;
}

const zeroTokens = (): Record<TokenKind, number> => Object.fromEntries(TOKEN_KINDS.map((k) => [k, 0])) as Record<TokenKind, number>;

/** A provider's cache reads over all its input (plain, read, written), to four places. */
export function cacheReadShare(t: Record<TokenKind, number>): number {
  const input = t.input + t.cache_read + t.cache_creation;
  return input > 0 ? Math.round((t.cache_read / input) * 10_000) / 10_000 : 0;
}

/** Tokens by provider, most input first. */
function byProvider(samples: readonly Sample[]): ProviderTokens[] {
  const rows = new Map<string, Record<TokenKind, number>>();
  for (const g of sumBy(samples, M.modelTokens.name, ['provider', 'kind'])) {
    const kind = g.labels.kind as TokenKind;
    if (!TOKEN_KINDS.includes(kind)) continue;
    const provider = g.labels.provider || DEFAULT_PROVIDER;
    const row = rows.get(provider) ?? zeroTokens();
    row[kind] += g.value;
    rows.set(provider, row);
  }
  const out = [...rows].map(([provider, tokens]) => ({ provider, tokens, cacheReadShare: cacheReadShare(tokens) }));
  const input = (p: ProviderTokens) => p.tokens.input + p.tokens.cache_read + p.tokens.cache_creation;
  return out.sort((a, b) => input(b) - input(a) || a.provider.localeCompare(b.provider));
}

/** Batched tokens by kind, and their saving priced per model. */
function batchPart(samples: readonly Sample[]): MetricsSummary['batch'] {
  const tokens = Object.fromEntries(TOKEN_KINDS.map((k) => [k, 0])) as Record<TokenKind, number>;
  const byModel = new Map<string, Record<TokenKind, number>>();
  for (const g of sumBy(samples, M.modelBatchTokens.name, ['model', 'kind'])) {
    const kind = g.labels.kind as TokenKind;
    if (!TOKEN_KINDS.includes(kind)) continue;
    tokens[kind] += g.value;
    const model = g.labels.model ?? '';
    const row = byModel.get(model) ?? (Object.fromEntries(TOKEN_KINDS.map((k) => [k, 0])) as Record<TokenKind, number>);
    row[kind] += g.value;
    byModel.set(model, row);
  }
  let savedUsd = 0;
  for (const [model, t] of byModel) {
    const u = { inputTokens: t.input, outputTokens: t.output, cacheReadInputTokens: t.cache_read, cacheCreationInputTokens: t.cache_creation };
    savedUsd += batchSavingUsd(model, { ...u, batch: u });
  }
  return { tokens, savedUsd: Math.round(savedUsd * 1_000_000) / 1_000_000 };
}

function sorted(rows: LabelledCount[]): LabelledCount[] {
  return rows.sort((a, b) => b.value - a.value || JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels)));
}

/** Summarises samples scraped from one or more workers' `/metrics`. */
export function summarizeMetrics(samples: readonly Sample[]): MetricsSummary {
  const ended: Record<string, number> = {};
  for (const g of sumBy(samples, M.forksEnded.name, ['state'])) ended[g.labels.state ?? ''] = g.value;
  const byKind = new Map(sumBy(samples, M.modelTokens.name, ['kind']).map((g) => [g.labels.kind, g.value]));
  const tokens = Object.fromEntries(TOKEN_KINDS.map((k) => [k, byKind.get(k) ?? 0])) as Record<TokenKind, number>;
  const requested = total(samples, M.approvalsRequested.name);
  const decided = total(samples, M.approvalsDecided.name);
  return {
    forks: { started: total(samples, M.forksStarted.name), ended },
    modelCalls: sorted(sumBy(samples, M.modelCalls.name, ['model', 'outcome'])),
    tokens,
    toolCalls: sorted(sumBy(samples, M.toolCalls.name, ['tool', 'outcome'])),
    cacheBreaks: total(samples, M.cacheBreaks.name),
    cacheBreakReasons: sorted(sumBy(samples, M.cacheBreaks.name, ['reason'])),
    // Best effort: counters live per worker process and a restart resets its share. The
    // exact figure is visibility's `ForkState = 'awaiting_approval'` count (the agents table).
    approvals: { requested, decided, pending: Math.max(0, requested - decided) },
    batch: batchPart(samples),
    providers: byProvider(samples),
  };
}
