/**
 * Delivery `batch` coalescing on the dev server: batched agents whose model calls reach one
 * worker together share one provider batch per round (the offline model's log counts the
 * creates), and each agent gets its own result. The worker's window is long and its batch
 * size is the number of agents, so a batch goes exactly when all of them have joined it: no
 * timing in the test. The emulated clock jumps past the processing time as a batch is created.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RequestLogEntry } from '../../src/offline';
import { startHarness, type Harness } from '../kit/env';
import { script, toolStep } from '../kit/tree';

const PROCESSING_MS = 2 * 60_000;
const AGENTS = ['north', 'south', 'east'];

let h: Harness;
const seen = new Set<number>();
const isCreate = (e: RequestLogEntry) => e.method === 'POST' && e.path === '/v1/messages/batches';
const customIdsOf = (e: RequestLogEntry) => (e.body as { requests: { custom_id: string }[] }).requests.map((r) => r.custom_id);

beforeAll(async () => {
  h = await startHarness({ name: 'batch-coalesce', model: { batchProcessingMs: PROCESSING_MS }, batchPollMs: 20, batchWindowMs: 10 * 60_000, batchMaxRequests: AGENTS.length });
  writeFileSync(join(h.workspaceRoot, 'notes.md'), 'the notes\n');
  h.model.log.on('update', (e: RequestLogEntry) => {
    if (!isCreate(e) || e.outcome !== 'completed' || seen.has(e.seq)) return;
    seen.add(e.seq);
    h.model.clock.advance(PROCESSING_MS);
  });
});
afterAll(() => h?.close());

test('three batched agents calling at once share one batch per round, each answered with its own reply', async () => {
  const handles = await Promise.all(
    AGENTS.map((name) => h.forkflow.startAgent({ agentId: `bco-${name}`, prompt: script(`Look (${name}).`, toolStep('Read', { file_path: 'notes.md' }), `@reply done ${name}`), delivery: 'batch' })),
  );
  const results = await Promise.all(handles.map((a) => a.result()));
  expect(results.map((r) => [r.status, r.text])).toEqual(AGENTS.map((name) => ['completed', `done ${name}`]));

  // Two rounds (the Read, then the reply), each one batch holding every agent's call.
  const creates = h.model.log.entries().filter(isCreate);
  expect(creates.map((e) => customIdsOf(e).length)).toEqual([3, 3]);
  expect(new Set(creates.flatMap(customIdsOf)).size).toBe(6);
  expect(h.model.log.entries().filter((e) => e.method === 'POST' && e.path === '/v1/messages')).toHaveLength(0);
  // Each batch watched once for its three callers: one results read per batch.
  expect(h.model.log.entries().filter((e) => e.method === 'GET' && e.path.endsWith('/results'))).toHaveLength(2);

  // Every agent's usage is the batch part of its own two requests, as the model billed them.
  const processed = h.model.batches.entries();
  expect(processed.map((p) => p.result)).toEqual(Array(6).fill('succeeded'));
  const billedOutput = processed.reduce((n, p) => n + (p.usage?.output_tokens ?? 0), 0);
  expect(results.reduce((n, r) => n + (r.usage.batch?.outputTokens ?? 0), 0)).toBe(billedOutput);
  for (const r of results) expect(r.usage.batch?.outputTokens).toBe(r.usage.outputTokens);
});
