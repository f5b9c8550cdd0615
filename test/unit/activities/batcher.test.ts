/**
 * The worker's batch desk and a batched call against the offline model, through the real SDK
 * (no Temporal): calls gathered within a window go in one batch and each gets its own result;
 * a call whose worker died between submit and record finds its batch by `custom_id` instead
 * of submitting again; a batch the provider no longer knows is submitted again once; a
 * coalesced batch is cancelled at the provider only when all of its agents are cancelled.
 * The offline model's log is the witness; its clock stands still until the test moves it.
 */
import type { RequestLogEntry } from '../../../src/offline';
import { Batcher } from '../../../src/activities/model/batcher';
import { anthropicBatches } from '../../../src/activities/model/batch-api';
import { callViaBatch, type BatchCallDeps } from '../../../src/activities/model/batch-call';
import { requestDigest, type CallKey } from '../../../src/activities/model/response-store';
import type { MessagesRequest } from '../../../src/shared/messages-api/anthropic';
import { ask, useOfflineModel } from '../offline/helpers';
import { memoryBatchStore } from '../../kit/batch-marks';

const MINUTE = 60_000;
// The provider's clock stands still at the test's start (near the worker's: a lookup by custom_id compares them).
const START = Date.now();
const t = useOfflineModel({ batchProcessingMs: MINUTE, now: () => START });

const isCreate = (e: RequestLogEntry) => e.method === 'POST' && e.path === '/v1/messages/batches';
const isCancel = (e: RequestLogEntry) => e.method === 'POST' && e.path.endsWith('/cancel');
const customIdsOf = (e: RequestLogEntry) => (e.body as { requests: { custom_id: string }[] }).requests.map((r) => r.custom_id);


const keyOf = (agent: string): CallKey => ({ namespace: 'default', workflowId: agent, runId: 'r', activityId: '1', turn: 1 });
const body = (text: string) => ask(`@reply ${text}`) as unknown as MessagesRequest;
const never = () => false;

test('calls gathered within the window go in one batch, each answered with its own reply', async () => {
  const batcher = new Batcher({ windowMs: 10 * MINUTE, maxRequests: 3, pollMs: 5 });
  const deps: BatchCallDeps = { api: anthropicBatches(t.client), batcher, responses: memoryBatchStore() };
  const calls = ['one', 'two', 'three'].map((text) => callViaBatch(deps, { key: keyOf(text), customId: `c-${text}`, body: body(text) }, new AbortController().signal, never, () => undefined));
  await t.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed');
  t.model.clock.advance(MINUTE);
  const out = await Promise.all(calls);
  const texts = out.map((o) => (o.kind === 'message' ? o.message.content.map((b) => (b.type === 'text' ? b.text : b.type)).join('') : o.reason));
  expect(texts).toEqual(['one', 'two', 'three']);
  const creates = t.model.log.entries().filter(isCreate);
  expect(creates.map(customIdsOf)).toEqual([['c-one', 'c-two', 'c-three']]);
  expect(batcher.created).toEqual([{ batchId: out[0]!.batchId, requests: 3 }]);
  // One watch for the three callers: one results read.
  expect(t.model.log.entries().filter((e) => e.path.endsWith('/results'))).toHaveLength(1);
});

test('a call whose worker died between submit and record finds its batch by custom_id: submitted once', async () => {
  const store = memoryBatchStore({ lose: true });
  const first = new Batcher({ windowMs: 0, pollMs: 5 });
  const aborted = new AbortController();
  const dying = callViaBatch({ api: anthropicBatches(t.client), batcher: first, responses: store }, { key: keyOf('a'), customId: 'c-a', body: body('kept') }, aborted.signal, never, () => undefined);
  await t.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed');
  // The worker "dies": the attempt is gone, and only the mark made before the submit is kept.
  aborted.abort(new Error('worker died'));
  await expect(dying).rejects.toThrow('worker died');
  expect([...store.marks.values()].map((m) => Object.keys(m))).toEqual([['since']]);
  // Other agents' batches on the provider are no answer: one ended, one still running.
  await t.client.messages.batches.create({ requests: [{ custom_id: 'other-1', params: ask('@reply x') }] });
  const retry = callViaBatch({ api: anthropicBatches(t.client), batcher: new Batcher({ windowMs: 0, pollMs: 5 }), responses: store }, { key: keyOf('a'), customId: 'c-a', body: body('kept') }, new AbortController().signal, never, () => undefined);
  await t.model.log.waitFor((e) => e.method === 'GET' && e.path.startsWith('/v1/messages/batches?'));
  t.model.clock.advance(MINUTE);
  const out = await retry;
  expect(out).toMatchObject({ kind: 'message', message: { content: [{ type: 'text', text: 'kept' }] } });
  const creates = t.model.log.entries().filter(isCreate).map(customIdsOf);
  expect(creates).toEqual([['c-a'], ['other-1']]);
  expect(out.batchId).toBe(t.model.batches.ids()[0]);
});

test('a submit the provider refused (an HTTP error) is made again by the retry without looking for it', async () => {
  const store = memoryBatchStore();
  t.model.faults.add({ kind: 'status', status: 500, match: isCreate });
  const call = () => callViaBatch({ api: anthropicBatches(t.client), batcher: new Batcher({ windowMs: 0, pollMs: 5 }), responses: store }, { key: keyOf('r'), customId: 'c-r', body: body('second') }, new AbortController().signal, never, () => undefined);
  await expect(call()).rejects.toMatchObject({ status: 500 });
  expect([...store.marks.values()].map((m) => m.refused)).toEqual([true]);
  const retry = call();
  await t.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed');
  t.model.clock.advance(MINUTE);
  expect(await retry).toMatchObject({ kind: 'message' });
  expect(t.model.log.entries().filter((e) => e.method === 'GET' && e.path.startsWith('/v1/messages/batches?'))).toHaveLength(0);
  expect(t.model.log.entries().filter(isCreate).map((e) => e.outcome)).toEqual(['fault', 'completed']);
});

test('a batch the provider does not know is submitted again once under the same custom_id, then the call falls back', async () => {
  const store = memoryBatchStore();
  const key = keyOf('lost');
  const request = body('again');
  await store.putBatch!(key, { since: Date.now(), batchId: 'msgbatch_gone' }, requestDigest(request));
  t.model.faults.add({ kind: 'status', status: 404, match: (e) => e.method === 'GET' && e.path.startsWith('/v1/messages/batches/msgbatch_offline_') && !e.path.endsWith('/results') });
  const out = callViaBatch({ api: anthropicBatches(t.client), batcher: new Batcher({ windowMs: 0, pollMs: 5 }), responses: store }, { key, customId: 'c-lost', body: request }, new AbortController().signal, never, () => undefined);
  // The stored id is unknown (404), the resubmitted batch is too (the injected 404): fallback.
  const fallback = await out;
  expect(fallback.kind).toBe('fallback');
  expect(fallback.kind === 'fallback' ? fallback.reason : '').toContain('does not know');
  expect(t.model.log.entries().filter(isCreate).map(customIdsOf)).toEqual([['c-lost']]);
  expect(t.model.log.entries().filter((e) => e.method === 'GET' && e.path.includes('msgbatch_gone'))).toHaveLength(1);
});

test('a coalesced batch is cancelled at the provider only once every agent in it is cancelled', async () => {
  const batcher = new Batcher({ windowMs: 10 * MINUTE, maxRequests: 2, pollMs: 5 });
  const deps: BatchCallDeps = { api: anthropicBatches(t.client), batcher };
  const [a, b] = [new AbortController(), new AbortController()];
  const calls = [a, b].map((c, i) => callViaBatch(deps, { key: keyOf(`x${i}`), customId: `c-x${i}`, body: body('never') }, c.signal, () => true, () => undefined));
  await t.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed');
  await t.model.log.waitFor((e) => e.method === 'GET' && e.path.startsWith('/v1/messages/batches/msgbatch_'));
  a.abort(new Error('cancelled a'));
  await expect(calls[0]).rejects.toThrow('cancelled a');
  expect(t.model.log.entries().filter(isCancel)).toHaveLength(0);
  b.abort(new Error('cancelled b'));
  await expect(calls[1]).rejects.toThrow('cancelled b');
  const cancel = await t.model.log.waitFor((e) => isCancel(e) && e.outcome === 'completed');
  expect(cancel.path).toContain(t.model.batches.ids()[0]);
  expect(t.model.batches.entries().map((e) => e.result)).toEqual(['canceled', 'canceled']);
});

test('a batch goes before its request bodies pass the byte limit: the next request starts another', async () => {
  const size = Buffer.byteLength(JSON.stringify(body('one')));
  // Room for two requests, not three: the third sends the first two at once.
  const batcher = new Batcher({ windowMs: 10 * MINUTE, maxRequests: 3, maxBytes: 2 * size + 10, pollMs: 5 });
  const deps: BatchCallDeps = { api: anthropicBatches(t.client), batcher };
  const waiting = new AbortController();
  const calls = ['one', 'two', 'six'].map((text) => callViaBatch(deps, { key: keyOf(text), customId: `c-${text}`, body: body(text) }, text === 'six' ? waiting.signal : new AbortController().signal, never, () => undefined));
  await t.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed');
  t.model.clock.advance(MINUTE);
  const out = await Promise.all(calls.slice(0, 2));
  expect(out.map((o) => o.kind)).toEqual(['message', 'message']);
  expect(t.model.log.entries().filter(isCreate).map(customIdsOf)).toEqual([['c-one', 'c-two']]);
  // The third waits for its own batch's window (not waited out here).
  waiting.abort(new Error('done'));
  await expect(calls[2]).rejects.toThrow('done');
});
