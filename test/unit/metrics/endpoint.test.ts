/**
 * The metrics endpoint's configuration: `ip:port` parsing and URLs, the catalogue's label
 * helpers, the activity-side helper's series, and `installRuntime` serving `/metrics` once.
 */
import type { MetricCounter, MetricMeter, MetricTags } from '@temporalio/common';
import { CancelledFailure } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { recordModelFailure, recordModelSuccess } from '../../../src/activities/metrics';
import { FORKFLOW_METRICS, histogramBuckets, toolLabel } from '../../../src/shared/wire/metrics';
import { freePort } from '../../../src/worker/dev-server';
import { formatMetricsAddress, InvalidMetricsAddressError, metricsUrl, parseMetricsAddress } from '../../../src/worker/metrics-endpoint';
import { installRuntime, RuntimeInstallError } from '../../../src/worker/runtime';

test('ip:port, IPv6 in brackets; host names and bad ports are refused with the expected form', () => {
  expect(parseMetricsAddress('0.0.0.0:9464')).toEqual({ host: '0.0.0.0', port: 9464 });
  expect(parseMetricsAddress('[::]:9000')).toEqual({ host: '::', port: 9000 });
  expect(formatMetricsAddress({ host: '::1', port: 9 })).toBe('[::1]:9');
  for (const bad of ['localhost:9464', '9464', '0.0.0.0', '0.0.0.0:0', '0.0.0.0:70000', '300.1.1.1:80', ':9464']) {
    expect(() => parseMetricsAddress(bad)).toThrow(InvalidMetricsAddressError);
  }
  expect(() => parseMetricsAddress('localhost:1')).toThrow(/ip:port .*e\.g\. 0\.0\.0\.0:9464/);
});

test('a wildcard bind address is scraped over loopback', () => {
  expect(metricsUrl('0.0.0.0:9464')).toBe('http://127.0.0.1:9464/metrics');
  expect(metricsUrl('[::]:9464')).toBe('http://[::1]:9464/metrics');
  expect(metricsUrl('10.0.0.5:1234')).toBe('http://10.0.0.5:1234/metrics');
});

test('catalogue: unique names, counters end in _total, tool labels bounded', () => {
  const specs = Object.values(FORKFLOW_METRICS);
  expect(new Set(specs.map((s) => s.name)).size).toBe(specs.length);
  for (const s of specs) {
    expect(s.name).toMatch(/^forkflow_[a-z_]+$/);
    if (s.kind === 'counter') expect(s.name).toMatch(/_total$/);
  }
  expect(histogramBuckets()).toEqual({ forkflow_fork_duration_seconds: [...FORKFLOW_METRICS.forkDuration.buckets] });
  expect(['Glob', 'Bash', 'Agent', 'TaskStop', 'rm -rf', 'glob'].map(toolLabel)).toEqual(['Glob', 'Bash', 'Agent', 'TaskStop', 'unknown', 'unknown']);
});

/** A meter that records what was added, by series. */
function recordingMeter(): { meter: MetricMeter; added: { name: string; value: number; tags: MetricTags }[] } {
  const added: { name: string; value: number; tags: MetricTags }[] = [];
  const counter = (name: string): MetricCounter => ({
    name,
    kind: 'counter',
    valueType: 'int',
    add: (value, tags = {}) => void added.push({ name, value, tags }),
    withTags: () => counter(name),
  });
  const meter: MetricMeter = {
    createCounter: counter,
    createHistogram: () => {
      throw new Error('not used');
    },
    createGauge: () => {
      throw new Error('not used');
    },
    withTags: () => meter,
  };
  return { meter, added };
}

test('activity side: an ok call with its tokens by kind, failures by type, cancellation apart', () => {
  const { meter, added } = recordingMeter();
  recordModelSuccess('claude-x', { inputTokens: 12, outputTokens: 5, cacheReadInputTokens: 30, cacheCreationInputTokens: 0 }, { meter });
  recordModelFailure('claude-x', ApplicationFailure.create({ type: 'ModelOverloaded', message: 'busy' }), { meter });
  recordModelFailure('claude-x', new CancelledFailure('stop'), { meter, provider: 'openai' });
  const provider = 'anthropic';
  expect(added).toEqual([
    { name: 'forkflow_model_calls_total', value: 1, tags: { model: 'claude-x', provider, outcome: 'ok' } },
    { name: 'forkflow_model_tokens_total', value: 12, tags: { model: 'claude-x', provider, kind: 'input' } },
    { name: 'forkflow_model_tokens_total', value: 5, tags: { model: 'claude-x', provider, kind: 'output' } },
    { name: 'forkflow_model_tokens_total', value: 30, tags: { model: 'claude-x', provider, kind: 'cache_read' } },
    { name: 'forkflow_model_tokens_total', value: 0, tags: { model: 'claude-x', provider, kind: 'cache_creation' } },
    { name: 'forkflow_model_calls_total', value: 1, tags: { model: 'claude-x', provider, outcome: 'error', error_type: 'ModelOverloaded' } },
    { name: 'forkflow_model_calls_total', value: 1, tags: { model: 'claude-x', provider: 'openai', outcome: 'cancelled' } },
  ]);
});

test('a batched call counts its tokens twice: among all tokens, and among the batched ones', () => {
  const { meter, added } = recordingMeter();
  const u = { inputTokens: 7, outputTokens: 3, cacheReadInputTokens: 0, cacheCreationInputTokens: 2 };
  recordModelSuccess('claude-x', { ...u, batch: u }, { meter, provider: 'openai' });
  const batched = added.filter((a) => a.name === 'forkflow_model_batch_tokens_total').map((a) => [a.tags.kind, a.value]);
  expect(batched).toEqual([['input', 7], ['output', 3], ['cache_read', 0], ['cache_creation', 2]]);
  expect(new Set(added.map((a) => a.tags.provider))).toEqual(new Set(['openai']));
  expect(added.filter((a) => a.name === 'forkflow_model_tokens_total').map((a) => a.value)).toEqual([7, 3, 0, 2]);
});

// jest gives this file its own module registry, hence its own Temporal runtime.
test('installRuntime serves /metrics once; a later call for another address is refused', async () => {
  const address = `127.0.0.1:${await freePort()}`;
  const first = installRuntime({ logLevel: 'ERROR', metricsAddress: address });
  expect(first).toEqual({ metricsAddress: address, metricsUrl: `http://${address}/metrics` });
  const response = await fetch(first.metricsUrl!);
  expect(response.status).toBe(200);
  expect(installRuntime({ logLevel: 'ERROR' })).toBe(first);
  expect(installRuntime({ metricsAddress: address })).toBe(first);
  const other = `127.0.0.1:${await freePort()}`;
  expect(() => installRuntime({ metricsAddress: other })).toThrow(RuntimeInstallError);
});
