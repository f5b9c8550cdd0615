/**
 * Reading a worker's `/metrics` for `forkflow top`: the exposition parser, sums over the
 * SDK's tags and workers, and the summary `top --json` prints (and top's line of cache breaks).
 */
import { parsePrometheusText, PrometheusParseError, sumBy, total } from '../../../src/cli/top/prometheus-text';
import { summarizeMetrics } from '../../../src/cli/top/metrics-summary';
import { renderTop } from '../../../src/cli/top/render';
import type { TopSnapshot } from '../../../src/cli/top/snapshot';

const EXPOSITION = `# HELP forkflow_tool_calls_total Tool calls
# TYPE forkflow_tool_calls_total counter
forkflow_tool_calls_total{namespace="default",outcome="ok",taskQueue="a",tool="Glob",workflowType="forkWorkflow"} 2
forkflow_tool_calls_total{namespace="default",outcome="ok",taskQueue="b",tool="Glob",workflowType="forkWorkflow"} 3
forkflow_tool_calls_total{namespace="default",outcome="denied",taskQueue="a",tool="unknown",workflowType="forkWorkflow"} 1
forkflow_forks_started_total{fork_label="x"} 4
forkflow_forks_ended_total{fork_label="x",state="completed"} 3
forkflow_forks_ended_total{fork_label="y",state="killed"} 1
forkflow_model_calls_total{model="m",outcome="ok"} 7
forkflow_model_calls_total{error_type="ModelRateLimited",model="m",outcome="error"} 2
forkflow_model_tokens_total{kind="input",model="m"} 100
forkflow_model_tokens_total{kind="output",model="m"} 40
forkflow_model_tokens_total{kind="cache_read",model="m"} 900 1712345678000
forkflow_approvals_requested_total{tool="Bash"} 3
forkflow_approvals_decided_total{decision="approved",tool="Bash"} 1
temporal_request_latency_bucket{le="+Inf",operation="Poll"} 12
`;

test('samples with labels and values; comments and timestamps skipped', () => {
  const samples = parsePrometheusText(EXPOSITION);
  expect(samples).toHaveLength(14);
  expect(samples[0]).toEqual({
    name: 'forkflow_tool_calls_total',
    labels: { namespace: 'default', outcome: 'ok', taskQueue: 'a', tool: 'Glob', workflowType: 'forkWorkflow' },
    value: 2,
  });
  expect(samples.find((s) => s.labels.kind === 'cache_read')?.value).toBe(900);
  expect(samples.at(-1)).toEqual({ name: 'temporal_request_latency_bucket', labels: { le: '+Inf', operation: 'Poll' }, value: 12 });
});

test('escaped label values, special values, no labels', () => {
  const [a, b, c] = parsePrometheusText('m{v="a\\"b\\\\c\\nd",w=""} NaN\nn +Inf\no{} -3.5e2\n');
  expect(a).toEqual({ name: 'm', labels: { v: 'a"b\\c\nd', w: '' }, value: NaN });
  expect(b).toEqual({ name: 'n', labels: {}, value: Infinity });
  expect(c).toEqual({ name: 'o', labels: {}, value: -350 });
});

test('a broken line fails loudly, quoting it', () => {
  expect(() => parsePrometheusText('m{v="x} 1')).toThrow(PrometheusParseError);
  expect(() => parsePrometheusText('m{v=x} 1')).toThrow(/Bad label in "m\{v=x\} 1"/);
  expect(() => parsePrometheusText('m{v="x"} one')).toThrow(/Not a sample value/);
});

test('sums over the tags not asked for (task queues, workers)', () => {
  const samples = [...parsePrometheusText(EXPOSITION), ...parsePrometheusText('forkflow_forks_started_total{fork_label="x"} 1')];
  expect(sumBy(samples, 'forkflow_tool_calls_total', ['tool', 'outcome'])).toEqual([
    { labels: { tool: 'Glob', outcome: 'ok' }, value: 5 },
    { labels: { tool: 'unknown', outcome: 'denied' }, value: 1 },
  ]);
  expect(total(samples, 'forkflow_forks_started_total')).toBe(5);
  expect(total(samples, 'forkflow_cache_breaks_total')).toBe(0);
});

test('the summary top prints', () => {
  expect(summarizeMetrics(parsePrometheusText(EXPOSITION))).toEqual({
    forks: { started: 4, ended: { completed: 3, killed: 1 } },
    modelCalls: [
      { labels: { model: 'm', outcome: 'ok' }, value: 7 },
      { labels: { model: 'm', outcome: 'error' }, value: 2 },
    ],
    tokens: { input: 100, output: 40, cache_read: 900, cache_creation: 0 },
    toolCalls: [
      { labels: { tool: 'Glob', outcome: 'ok' }, value: 5 },
      { labels: { tool: 'unknown', outcome: 'denied' }, value: 1 },
    ],
    cacheBreaks: 0,
    cacheBreakReasons: [],
    approvals: { requested: 3, decided: 1, pending: 2 },
    batch: { tokens: { input: 0, output: 0, cache_read: 0, cache_creation: 0 }, savedUsd: 0 },
    // Series from workers before the provider label count as the default provider's.
    providers: [{ provider: 'anthropic', tokens: { input: 100, output: 40, cache_read: 900, cache_creation: 0 }, cacheReadShare: 0.9 }],
  });
});

test('tokens and cache-read share per provider, summed over workers; top prints them when there is more than Anthropic', () => {
  const samples = parsePrometheusText(
    [
      'forkflow_model_tokens_total{kind="input",model="claude-sonnet-4-6",provider="anthropic",taskQueue="a"} 100',
      'forkflow_model_tokens_total{kind="cache_read",model="claude-sonnet-4-6",provider="anthropic",taskQueue="a"} 700',
      'forkflow_model_tokens_total{kind="cache_creation",model="claude-sonnet-4-6",provider="anthropic",taskQueue="b"} 200',
      'forkflow_model_tokens_total{kind="input",model="gpt-4.1-mini",provider="openai",taskQueue="a"} 300',
      'forkflow_model_tokens_total{kind="cache_read",model="gpt-4.1-mini",provider="openai",taskQueue="b"} 100',
      'forkflow_model_tokens_total{kind="output",model="gpt-4.1-mini",provider="openai",taskQueue="b"} 50',
    ].join('\n'),
  );
  const summary = summarizeMetrics(samples);
  expect(summary.providers).toEqual([
    { provider: 'anthropic', tokens: { input: 100, output: 0, cache_read: 700, cache_creation: 200 }, cacheReadShare: 0.7 },
    { provider: 'openai', tokens: { input: 300, output: 50, cache_read: 100, cache_creation: 0 }, cacheReadShare: 0.25 },
  ]);
  const screen = renderTop({ at: 'now', agents: { error: 'x' }, metrics: { urls: [], errors: [], summary } });
  expect(screen).toContain('by provider: anthropic input 1000 · cache read 70.0% | openai input 400 · cache read 25.0%');
});

test('batched tokens: what they saved, priced per model, and the line top prints', () => {
  const samples = parsePrometheusText(
    [
      'forkflow_model_batch_tokens_total{kind="input",model="claude-sonnet-4-6",taskQueue="a"} 1000000',
      'forkflow_model_batch_tokens_total{kind="output",model="claude-sonnet-4-6",taskQueue="b"} 100000',
      'forkflow_model_batch_tokens_total{kind="cache_read",model="claude-opus-4-1",taskQueue="a"} 1000000',
    ].join('\n'),
  );
  const summary = summarizeMetrics(samples);
  // Half of sonnet's $3 input + $1.50 output, and of opus's $1.50 of cache reads.
  expect(summary.batch).toEqual({ tokens: { input: 1_000_000, output: 100_000, cache_read: 1_000_000, cache_creation: 0 }, savedUsd: 3 });
  const screen = renderTop({ at: 'now', agents: { error: 'visibility not asked' }, metrics: { urls: ['http://w/metrics'], errors: [], summary } });
  expect(screen).toContain('batched (half price): input 1000000 · output 100000 · cache read 1000000 · cache write 0 · saved ≈ $3.0000');
  expect(renderTop({ at: 'now', agents: { error: 'x' }, metrics: { urls: [], errors: [], summary: summarizeMetrics([]) } })).not.toContain('batched');
});

test('cache breaks by reason, summed over workers, most first; top prints them beside the total', () => {
  const samples = parsePrometheusText(
    [
      'forkflow_cache_breaks_total{reason="system changed",taskQueue="a"} 1',
      'forkflow_cache_breaks_total{reason="expired / unknown",taskQueue="a"} 2',
      'forkflow_cache_breaks_total{reason="expired / unknown",taskQueue="b"} 1',
      'forkflow_cache_breaks_total{reason="TTL expired",taskQueue="b"} 2',
    ].join('\n'),
  );
  const summary = summarizeMetrics(samples);
  expect(summary.cacheBreaks).toBe(6);
  expect(summary.cacheBreakReasons).toEqual([
    { labels: { reason: 'expired / unknown' }, value: 3 },
    { labels: { reason: 'TTL expired' }, value: 2 },
    { labels: { reason: 'system changed' }, value: 1 },
  ]);
  const snapshot: TopSnapshot = { at: 'now', agents: { error: 'visibility not asked' }, metrics: { urls: ['http://w/metrics'], errors: [], summary } };
  const screen = renderTop(snapshot);
  expect(screen).toContain('cache breaks 6 (expired / unknown 3, TTL expired 2, system changed 1)');
});
