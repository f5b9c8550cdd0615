/** `forkflow top` for people: a few small tables, redrawn in place by the command. */
import { table } from '../output';
import type { LabelledCount } from './metrics-summary';
import type { TopSnapshot } from './snapshot';

function agentsBlock(s: TopSnapshot): string {
  const a = s.agents;
  if ('error' in a) return `agents: visibility unavailable (${a.error})`;
  const head = `agents: ${a.open} open${a.listed < a.open ? ` (grouped over the first ${a.listed})` : ''}`;
  if (a.groups.length === 0) return head;
  // A colour column only when some agent has a colour (its definition's `color`).
  if (a.groups.some((g) => g.color)) return `${head}\n${table(['label', 'colour', 'state', 'agents'], a.groups.map((g) => [g.label, g.color ?? '', g.state, g.count]))}`;
  return `${head}\n${table(['label', 'state', 'agents'], a.groups.map((g) => [g.label, g.state, g.count]))}`;
}

function rows(counts: LabelledCount[], keys: string[]): (string | number)[][] {
  return counts.map((c) => [...keys.map((k) => c.labels[k] ?? ''), c.value]);
}

function metricsBlock(s: TopSnapshot): string | undefined {
  const m = s.metrics;
  if (!m) return undefined;
  const x = m.summary;
  const ended = Object.entries(x.forks.ended)
    .map(([state, n]) => `${state} ${n}`)
    .join(' · ');
  const reasons = x.cacheBreakReasons.map((r) => `${r.labels.reason ?? ''} ${r.value}`).join(', ');
  const lines = [
    `metrics from ${m.urls.join(', ')}`,
    ...m.errors.map((e) => `  unreachable: ${e.url} (${e.error})`),
    `forks: started ${x.forks.started}${ended ? ` · ended: ${ended}` : ''} · cache breaks ${x.cacheBreaks}${reasons ? ` (${reasons})` : ''} · approvals pending ${x.approvals.pending}`,
    `tokens: input ${x.tokens.input} · output ${x.tokens.output} · cache read ${x.tokens.cache_read} · cache write ${x.tokens.cache_creation}`,
  ];
  const b = x.batch.tokens;
  if (b.input + b.output + b.cache_read + b.cache_creation > 0) {
    lines.push(`batched (half price): input ${b.input} · output ${b.output} · cache read ${b.cache_read} · cache write ${b.cache_creation} · saved ≈ $${x.batch.savedUsd.toFixed(4)}`);
  }
  if (x.providers.length > 1 || (x.providers[0] && x.providers[0].provider !== 'anthropic')) {
    lines.push(`by provider: ${x.providers.map((p) => `${p.provider} input ${p.tokens.input + p.tokens.cache_read + p.tokens.cache_creation} · cache read ${(p.cacheReadShare * 100).toFixed(1)}%`).join(' | ')}`);
  }
  if (x.modelCalls.length) lines.push(table(['model', 'outcome', 'calls'], rows(x.modelCalls, ['model', 'outcome'])));
  if (x.toolCalls.length) lines.push(table(['tool', 'outcome', 'calls'], rows(x.toolCalls, ['tool', 'outcome'])));
  return lines.join('\n');
}

/** The whole screen for one snapshot. */
export function renderTop(s: TopSnapshot): string {
  const hint = s.metrics ? '' : '\n(add --metrics-url http://<worker>:9464/metrics for model, token and tool counts)';
  return [`forkflow top · ${s.at} · Ctrl-C to quit`, agentsBlock(s), metricsBlock(s)].filter(Boolean).join('\n\n') + hint;
}
