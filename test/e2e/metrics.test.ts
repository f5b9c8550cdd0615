/**
 * Metrics as an operator scrapes them: a `forkflow worker` process started with
 * FORKFLOW_METRICS_ADDRESS serves Temporal's runtime series and forkflow's own on
 * `/metrics`; after a fork with a tool call they hold plausible values, a replay does not
 * count anything twice, and `forkflow top --once --json` reads them back with visibility.
 *
 * Why a worker process and not the in-process harness worker: the Temporal runtime (and
 * its endpoint) is installed once and lives until every worker and connection of it has
 * closed; jest runs all test files in one process, each with its own runtime. A fixed
 * port for the whole run would be bound by several runtimes, and an endpoint of this file
 * would outlive it. A process of its own is isolated, is closed with the test, and
 * exercises the documented configuration end to end.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePrometheusText, sumBy, total, type Sample } from '../../src/cli/top/prometheus-text';
import type { TopSnapshot } from '../../src/cli/top/snapshot';
import { FORKFLOW_METRICS as M } from '../../src/shared/wire/metrics';
import { totalInputTokens } from '../../src/shared/messages-api/anthropic';
import { longAgentScript, seedLongAgent } from '../kit/long-agent';
import { freePort } from '../../src/worker/dev-server';
import { startHarness, type Harness } from '../kit/env';
import { runForkflow, startWorkerProcess, type WorkerProcess } from '../kit/processes';
import { waitFor } from '../kit/wait';

const TOOL_PROMPT = 'Look.\n@tool Glob {"pattern":"*"}\n@reply done';

let h: Harness;
let worker: WorkerProcess;
let metricsUrl: string;
const run = Date.now().toString(36);

beforeAll(async () => {
  // No in-process worker: the worker process below serves this task queue.
  h = await startHarness({ name: 'metrics', noWorker: true });
  writeFileSync(join(h.workspaceRoot, 'notes.txt'), 'alpha\n');
  const address = `127.0.0.1:${await freePort()}`;
  worker = await startWorkerProcess({
    address: h.env.address,
    taskQueue: h.taskQueue,
    modelUrl: h.model.url,
    workspace: h.workspaceRoot,
    bundlePath: h.env.bundlePath,
    extraEnv: { FORKFLOW_METRICS_ADDRESS: address },
  });
  metricsUrl = `http://${address}/metrics`;
});
afterAll(async () => {
  await worker?.kill();
  await h?.close();
});

async function scrape(): Promise<Sample[]> {
  const response = await fetch(metricsUrl);
  expect(response.status).toBe(200);
  return parsePrometheusText(await response.text());
}

/** Samples of this test's task queue, or of none (Temporal's own tag is `task_queue`, the SDK meter's `taskQueue`). */
function ours(samples: Sample[]): Sample[] {
  return samples.filter((s) => {
    const queue = s.labels.taskQueue ?? s.labels.task_queue;
    return queue === undefined || queue === h.taskQueue;
  });
}

/** Polls the endpoint until `ready` holds (workflow metrics leave the sandbox after the task completes), then returns the last scrape. */
async function scrapeUntil(ready: (s: Sample[]) => boolean, timeoutMs = 10_000): Promise<Sample[]> {
  let last: Sample[] = [];
  await waitFor(async () => ready((last = ours(await scrape()))) || undefined, 'metrics to show the fork', timeoutMs).catch(() => undefined);
  return last;
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
}

/** The forkflow counters a replay must leave alone. */
function forkflowCounters(samples: Sample[]): Record<string, number> {
  const names = Object.values(M).map((m) => (m.kind === 'histogram' ? `${m.name}_count` : m.name));
  return Object.fromEntries(names.map((n) => [n, total(samples, n)]));
}

test('the worker announces its endpoint', () => {
  expect(worker.output()).toContain(`metrics: ${metricsUrl}`);
});

test('after a fork with a tool call: forkflow series with plausible values, and Temporal runtime series', async () => {
  const agentId = `metrics-tool-${run}`;
  const result = await h.forkflow.fork({ agentId, prompt: TOOL_PROMPT, forkLabel: 'metrics-probe' }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', toolUses: 1 });

  const s = await scrapeUntil((x) => value(x, M.forksEnded.name, { state: 'completed' }) >= 1 && value(x, M.modelCalls.name) >= 2);

  // Temporal's runtime metrics, from the same endpoint.
  expect(value(s, 'temporal_workflow_completed', { workflow_type: 'forkWorkflow' })).toBeGreaterThanOrEqual(1);
  expect(value(s, 'temporal_activity_execution_latency_count', { activity_type: 'callModel' })).toBeGreaterThanOrEqual(2);
  expect(value(s, 'temporal_workflow_task_execution_latency_count')).toBeGreaterThan(0);
  // Eager dispatch is on (src/worker/dev-server.ts): a model call scheduled by a workflow task
  // came back in that task's response, not through the task queue.
  expect(value(s, 'temporal_activity_task_received', { activity_type: 'callModel', eager: 'true' })).toBeGreaterThanOrEqual(1);

  // forkflow's own.
  expect(value(s, M.forksStarted.name, { fork_label: 'metrics-probe' })).toBeGreaterThanOrEqual(1);
  expect(value(s, M.forksEnded.name, { fork_label: 'metrics-probe', state: 'completed' })).toBeGreaterThanOrEqual(1);
  expect(value(s, `${M.forkDuration.name}_count`, { state: 'completed' })).toBeGreaterThanOrEqual(1);
  expect(value(s, M.modelCalls.name, { outcome: 'ok' })).toBeGreaterThanOrEqual(2);
  const tokens: Record<string, number> = Object.fromEntries(sumBy(s, M.modelTokens.name, ['kind']).map((g) => [g.labels.kind ?? '', g.value]));
  // Every kind has a series from the first call on. Prompt tokens: each request is marked for
  // caching up to its end, so the provider (like the offline model) may count all of them as
  // cache read or creation and none as uncached input.
  expect(Object.keys(tokens).sort()).toEqual(['cache_creation', 'cache_read', 'input', 'output']);
  expect(tokens.output).toBeGreaterThan(0);
  expect(tokens.input! + tokens.cache_read! + tokens.cache_creation!).toBeGreaterThan(0);
  expect(value(s, M.toolCalls.name, { tool: 'Glob', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
});

test('a replay (a query on the closed fork) counts nothing twice', async () => {
  const agentId = `metrics-replay-${run}`;
  await h.forkflow.fork({ agentId, prompt: TOOL_PROMPT, forkLabel: 'metrics-replay' }, { mode: 'sync' });
  const tasks = (x: Sample[]) => value(x, 'temporal_workflow_task_execution_latency_count', { workflow_type: 'forkWorkflow' });
  // Settled: the fork's counts are in, and its closed run has left the worker's cache.
  const before = await scrapeUntil(
    (x) => value(x, M.forksEnded.name, { fork_label: 'metrics-replay' }) >= 1 && value(x, 'temporal_sticky_cache_size') === 0,
  );
  expect(value(before, 'temporal_sticky_cache_size')).toBe(0);

  // With nothing cached, the worker answers a query by replaying the whole history.
  await h.forkflow.status(agentId);
  const after = await scrapeUntil((x) => tasks(x) > tasks(before));
  expect(tasks(after)).toBeGreaterThan(tasks(before));
  expect(forkflowCounters(after)).toEqual(forkflowCounters(before));
});

test('every cache break is counted with its reason: a fork\'s changed system on turn 1, an evicted entry on a later turn', async () => {
  const breaks = (x: Sample[], reason: string) => value(x, M.cacheBreaks.name, { reason });
  const before = ours(await scrape());
  const parentId = `metrics-cb-parent-${run}`;
  await h.forkflow.fork({ agentId: parentId, prompt: 'Parent.\n@reply ready' }, { mode: 'sync' });
  const snapshot = await h.forkflow.snapshotOf(parentId);
  const altered = { ...snapshot, system: `${typeof snapshot.system === 'string' ? snapshot.system : ''}\nOne more rule.` };
  const fork = await h.forkflow.fork({ agentId: `metrics-cb-fork-${run}`, parent: altered, prompt: 'Go on.\n@reply fine' }, { mode: 'sync' });
  expect(fork.cacheBreak).toMatchObject({ reason: 'system changed', turn: 1 });

  // The parent again, after its cache entry is gone: its next call (turn 2) reads nothing.
  h.model.cache.clear();
  expect(await h.forkflow.sendMessage(parentId, { message: '@reply again' })).toBe('resumed');
  expect(await h.forkflow.result(parentId)).toMatchObject({ cacheBreaks: 1, cacheBreak: { reason: 'expired / unknown', turn: 2 } });

  const after = await scrapeUntil((x) => breaks(x, 'system changed') > breaks(before, 'system changed') && breaks(x, 'expired / unknown') > breaks(before, 'expired / unknown'));
  expect(breaks(after, 'system changed')).toBe(breaks(before, 'system changed') + 1);
  expect(breaks(after, 'expired / unknown')).toBe(breaks(before, 'expired / unknown') + 1);
});

test('compactions are counted by who made them and why, with the tokens spent summarising and saved on later requests', async () => {
  seedLongAgent(h.workspaceRoot, 2_000);
  const compactions = (x: Sample[]) => value(x, M.compactions.name, { by: 'forkflow', reason: 'threshold' });
  const tokens = (x: Sample[], kind: string) => value(x, M.compactionTokens.name, { kind });
  const before = ours(await scrape());
  // Planned against a 20K window (the model's is 200K): compactions come within a few dozen turns.
  const result = await h.forkflow.fork({ agentId: `metrics-compaction-${run}`, prompt: longAgentScript(40, `metrics-${run}`), contextWindow: 20_000, maxTurns: 40, budget: { maxTokens: 100_000_000 } }, { mode: 'sync' });
  const context = result.context!;
  expect(context.compactions).toBeGreaterThanOrEqual(1);
  const after = await scrapeUntil((x) => compactions(x) >= compactions(before) + context.compactions && tokens(x, 'saved') >= tokens(before, 'saved') + context.tokensSaved);
  expect(compactions(after) - compactions(before)).toBe(context.compactions);
  expect(tokens(after, 'spent') - tokens(before, 'spent')).toBe(totalInputTokens(context.summarising.usage) + context.summarising.usage.outputTokens);
  expect(tokens(after, 'saved') - tokens(before, 'saved')).toBe(context.tokensSaved);
});

test('forkflow top --once --json: open agents by label and state, and the worker metrics', async () => {
  // One fork done (for the metrics), one still running (for visibility).
  await h.forkflow.fork({ agentId: `metrics-done-${run}`, prompt: TOOL_PROMPT, forkLabel: 'metrics-top' }, { mode: 'sync' });
  const agentId = `metrics-running-${run}`;
  const running = await h.forkflow.fork({ agentId, prompt: 'Wait.\n@sleep 60000 @reply late', forkLabel: 'metrics-top' }, { mode: 'forget' });
  try {
    const query = `TaskQueue = '${h.taskQueue}'`;
    const args = ['--address', h.env.address, '--namespace', h.env.namespace, '--json', 'top', '--once', '--metrics-url', metricsUrl, '--query', query];
    // Visibility is eventually consistent: poll until the running fork is listed.
    const snapshot = await waitFor(
      async () => {
        const r = await runForkflow(args);
        if (r.status !== 0) throw new Error(`top exited ${r.status}: ${r.stderr}`);
        const s = JSON.parse(r.stdout) as TopSnapshot;
        return 'groups' in s.agents && s.agents.groups.some((g) => g.label === 'metrics-top') ? s : undefined;
      },
      'top to list the running fork',
      60_000,
    );
    if ('error' in snapshot.agents) throw new Error(snapshot.agents.error);
    expect(snapshot.agents.open).toBeGreaterThanOrEqual(1);
    expect(snapshot.agents.groups).toContainEqual({ label: 'metrics-top', state: 'running', count: 1 });
    expect(snapshot.metrics?.errors).toEqual([]);
    expect(snapshot.metrics?.urls).toEqual([metricsUrl]);
    const m = snapshot.metrics!.summary;
    expect(m.forks.started).toBeGreaterThanOrEqual(2);
    expect(m.forks.ended.completed).toBeGreaterThanOrEqual(1);
    expect(m.tokens.output).toBeGreaterThan(0);
    expect(m.tokens.input + m.tokens.cache_read + m.tokens.cache_creation).toBeGreaterThan(0);
    expect(m.toolCalls).toContainEqual({ labels: { tool: 'Glob', outcome: 'ok' }, value: expect.any(Number) as number });

    // The same reading for people: tables, no JSON.
    const plain = await runForkflow(args.filter((a) => a !== '--json'));
    expect(plain.status).toBe(0);
    expect(plain.stdout).toMatch(/agents: \d+ open/);
    expect(plain.stdout).toContain('metrics-top');
    expect(plain.stdout).toContain(`metrics from ${metricsUrl}`);
  } finally {
    await running.cancel();
  }
});

test('an unreachable metrics URL is reported and fails a --once reading', async () => {
  const dead = `http://127.0.0.1:${await freePort()}/metrics`;
  const r = await runForkflow(['--address', h.env.address, '--namespace', h.env.namespace, '--json', 'top', '--once', '--metrics-url', dead, '--query', `TaskQueue = '${h.taskQueue}'`]);
  expect(r.status).toBe(1);
  const s = JSON.parse(r.stdout) as TopSnapshot;
  expect(s.metrics?.errors).toEqual([{ url: dead, error: expect.any(String) as string }]);
});
