/**
 * Delivery `batch` on the dev server against the offline model's Message Batches: a fork
 * with tool calls completes through batches at half the interactive run's cost on the same
 * script (forkflow's usage and the offline model's own accounting agree); a poll that fails
 * is retried against the batch already submitted (never a second submit); an errored request
 * and an expired batch fall back to one interactive call; a cancelled agent's batch is
 * cancelled at the provider. The emulated clock jumps by the processing time as each batch is
 * submitted: minutes of provider time in milliseconds, with no sleeps.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BATCH_EXPIRY_MS, type RequestLogEntry } from '../../src/offline';
import { ZERO_USAGE, type Usage } from '../../src/shared/messages-api/anthropic';
import { batchSavingUsd, estimateCostUsd } from '../../src/shared/providers/pricing';
import { startHarness, type Harness } from '../kit/env';
import { agentStep, script, toolStep } from '../kit/tree';

const MINUTE = 60_000;
const PROCESSING_MS = 2 * MINUTE;

let h: Harness;
/** How far the clock jumps when a batch is submitted (0: it stays, the batch stays in progress). */
let jumpMs = PROCESSING_MS;
const seen = new Set<number>();

const isCreate = (e: RequestLogEntry) => e.method === 'POST' && e.path === '/v1/messages/batches';
const isInteractive = (e: RequestLogEntry) => e.method === 'POST' && e.path === '/v1/messages';

beforeAll(async () => {
  h = await startHarness({ name: 'batch-delivery', model: { batchProcessingMs: PROCESSING_MS }, batchPollMs: 20, batchWindowMs: 100 });
  writeFileSync(join(h.workspaceRoot, 'notes.md'), 'the notes\n');
  // The provider "processes" a batch as soon as it is submitted: the clock jumps past its processing time.
  h.model.log.on('update', (e: RequestLogEntry) => {
    if (!isCreate(e) || e.outcome !== 'completed' || seen.has(e.seq)) return;
    seen.add(e.seq);
    if (jumpMs > 0) h.model.clock.advance(jumpMs);
  });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => {
  jumpMs = PROCESSING_MS;
  h.model.log.clear();
  h.model.cache.clear();
  h.model.faults.clear();
});

const withoutBatch = ({ batch: _b, ...u }: Usage): Usage => u;

/** Bytes of a run's history (the events as JSON) and its model-call count. */
async function historyOf(agentId: string): Promise<{ bytes: number; calls: number; events: number }> {
  const events = (await h.client.workflow.getHandle(agentId).fetchHistory()).events ?? [];
  const calls = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel').length;
  return { bytes: Buffer.byteLength(JSON.stringify(events)), calls, events: events.length };
}

const prompt = (tag: string) => script(`Survey the notes (${tag}).`, toolStep('Glob', { pattern: '*' }), toolStep('Read', { file_path: 'notes.md' }), '@reply surveyed');

test('a batched fork with tool calls completes through batches at half the interactive cost of the same script', async () => {
  const live = await h.forkflow.fork({ agentId: 'bd-live', prompt: prompt('x') }, { mode: 'sync' });
  expect(live).toMatchObject({ status: 'completed', text: 'surveyed', toolUses: 2 });
  const liveRequests = h.model.log.entries().filter(isInteractive);
  expect(liveRequests).toHaveLength(3);

  h.model.log.clear();
  h.model.cache.clear();
  const before = h.model.batches.entries().length;
  const batched = await h.forkflow.fork({ agentId: 'bd-batch', prompt: prompt('x'), delivery: 'batch' }, { mode: 'sync' });
  expect(batched).toMatchObject({ status: 'completed', text: 'surveyed', toolUses: 2 });

  // Every model call went by batch, each submitted once, and none interactively.
  const log = h.model.log.entries();
  expect(log.filter(isInteractive)).toHaveLength(0);
  const creates = log.filter(isCreate);
  expect(creates).toHaveLength(3);
  const customIds = creates.map((e) => (e.body as { requests: { custom_id: string }[] }).requests.map((r) => r.custom_id)).flat();
  expect(new Set(customIds).size).toBe(3);
  const processed = h.model.batches.entries().slice(before);
  expect(processed.map((p) => p.result)).toEqual(['succeeded', 'succeeded', 'succeeded']);

  // The same tokens, cache reads included; the whole of it in the batch part.
  expect(withoutBatch(batched.usage)).toEqual(live.usage);
  expect(batched.usage.batch).toEqual(withoutBatch(batched.usage));
  expect(live.usage.cacheReadInputTokens).toBeGreaterThan(0);
  // The offline model's own accounting: the usage it billed per batch request is what forkflow recorded.
  const billed = processed.reduce((n, p) => n + (p.usage?.cache_read_input_tokens ?? 0), 0);
  expect(billed).toBe(batched.usage.cacheReadInputTokens);
  const model = live.model ?? 'claude-sonnet-4-6';
  const liveCost = estimateCostUsd(model, live.usage);
  const batchCost = estimateCostUsd(model, batched.usage);
  expect(liveCost).toBeGreaterThan(0);
  expect(batchCost).toBeCloseTo(liveCost / 2, 6);
  expect(batchSavingUsd(model, batched.usage)).toBeCloseTo(liveCost / 2, 6);

  // History: one activity per batched turn, as per interactive turn.
  const [a, b] = [await historyOf('bd-live'), await historyOf('bd-batch')];
  expect(b.calls).toBe(a.calls);
  console.log(
    `history: interactive ${a.events} events, ${a.bytes} B (${a.calls} model calls); batch ${b.events} events, ${b.bytes} B (${b.calls} calls); ` +
      `per batched turn ${(b.events - a.events) / b.calls} events and ${Math.round((b.bytes - a.bytes) / b.calls)} B more`,
  );
});

test("a batched agent's background sub-agent inherits batch delivery: no call of the tree is interactive, and it costs half", async () => {
  const prompt = script('Delegate.', agentStep({ description: 'helper', subagent_type: 'general-purpose', prompt: 'Help.\n@reply helped', run_in_background: true }), '@reply waiting', '@reply done');
  const result = await h.forkflow.startAgent({ agentId: 'bd-tree', prompt, delivery: 'batch', subAgents: { forkGate: false } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'done' });
  const child = result.children?.[0]?.agentId;
  expect(child).toBeDefined();
  const log = h.model.log.entries();
  expect(log.filter(isInteractive)).toHaveLength(0);
  // Three calls of the parent (the launch, the wait, the report) and one of the child, each submitted once (calls that meet in a window share a batch).
  const submitted = log.filter(isCreate).flatMap((e) => (e.body as { requests: { custom_id: string }[] }).requests.map((r) => r.custom_id));
  expect(submitted).toHaveLength(4);
  expect(new Set(submitted).size).toBe(4);
  expect(result.treeUsage?.batch).toEqual(withoutBatch(result.treeUsage!));
  // The child's own bill: the offline model's accounting for its one request, at half the interactive price.
  const childResult = await h.forkflow.result(child!);
  const mine = h.model.batches.entries().slice(-4);
  expect(mine.map((p) => p.result)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
  const billed = { ...ZERO_USAGE };
  for (const p of mine) {
    billed.inputTokens += p.usage!.input_tokens;
    billed.outputTokens += p.usage!.output_tokens;
    billed.cacheReadInputTokens += p.usage!.cache_read_input_tokens ?? 0;
    billed.cacheCreationInputTokens += p.usage!.cache_creation_input_tokens ?? 0;
  }
  expect(withoutBatch(result.treeUsage!)).toMatchObject(billed);
  const model = childResult.model ?? 'claude-sonnet-4-6';
  expect(childResult.usage.batch).toEqual(withoutBatch(childResult.usage));
  expect(estimateCostUsd(model, childResult.usage)).toBeCloseTo(estimateCostUsd(model, withoutBatch(childResult.usage)) / 2, 5);
  expect(estimateCostUsd(model, childResult.usage)).toBeGreaterThan(0);
});

test('a poll that fails is retried against the batch already submitted: the request is submitted once', async () => {
  h.model.faults.add({ kind: 'status', status: 500, match: (e) => e.method === 'GET' && e.path.startsWith('/v1/messages/batches/') });
  const result = await h.forkflow.fork({ agentId: 'bd-retry', prompt: '@reply once', delivery: 'batch' }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 'once' });
  const log = h.model.log.entries();
  expect(log.filter((e) => e.outcome === 'fault')).toHaveLength(1);
  expect(log.filter(isCreate)).toHaveLength(1);
  expect(log.filter(isInteractive)).toHaveLength(0);
});

test('an errored request and an expired batch fall back to one interactive call each', async () => {
  h.model.batches.inject({ kind: 'errored' });
  const errored = await h.forkflow.fork({ agentId: 'bd-errored', prompt: '@reply anyway', delivery: 'batch' }, { mode: 'sync' });
  expect(errored).toMatchObject({ status: 'completed', text: 'anyway' });
  expect(h.model.log.entries().filter(isCreate)).toHaveLength(1);
  expect(h.model.log.entries().filter(isInteractive)).toHaveLength(1);
  // Billed at the interactive price: no batch part.
  expect(errored.usage.batch).toBeUndefined();

  h.model.log.clear();
  jumpMs = BATCH_EXPIRY_MS;
  h.model.batches.inject({ kind: 'expired' });
  const expired = await h.forkflow.fork({ agentId: 'bd-expired', prompt: '@reply late', delivery: 'batch' }, { mode: 'sync' });
  expect(expired).toMatchObject({ status: 'completed', text: 'late' });
  expect(h.model.log.entries().filter(isCreate)).toHaveLength(1);
  expect(h.model.log.entries().filter(isInteractive)).toHaveLength(1);
  expect(h.model.batches.entries().slice(-1)[0]?.result).toBe('expired');
});

test("batchFallback 'fail': an errored request fails the fork instead of paying an interactive call", async () => {
  h.model.batches.inject({ kind: 'errored' });
  const failed = await h.forkflow.fork({ agentId: 'bd-nofallback', prompt: '@reply never', delivery: 'batch', batchFallback: 'fail' }, { mode: 'sync' });
  expect(failed.status).toBe('failed');
  expect(failed.error).toContain("batchFallback 'fail'");
  expect(h.model.log.entries().filter(isCreate)).toHaveLength(1);
  expect(h.model.log.entries().filter(isInteractive)).toHaveLength(0);
});

test("a cancelled agent's batch is cancelled at the provider", async () => {
  jumpMs = 0;
  const handle = await h.forkflow.startAgent({ agentId: 'bd-cancel', prompt: '@reply never', delivery: 'batch' });
  await h.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed');
  await h.model.log.waitFor((e) => e.method === 'GET' && e.path.startsWith('/v1/messages/batches/'));
  await h.forkflow.cancel('bd-cancel');
  const result = await handle.result();
  expect(result.status).toBe('killed');
  const cancel = await h.model.log.waitFor((e) => e.method === 'POST' && /^\/v1\/messages\/batches\/[^/]+\/cancel$/.test(e.path) && e.outcome === 'completed');
  expect(cancel.path).toContain(h.model.batches.ids().slice(-1)[0]);
  expect(h.model.batches.entries().slice(-1)[0]).toMatchObject({ result: 'canceled' });
  expect(h.model.log.entries().filter(isInteractive)).toHaveLength(0);
});
