/**
 * Delivery `batch` on an OpenAI-compatible provider (issue 43): the worker's batch desk and a
 * batched call against the offline model's OpenAI Batch API, through the real `openai` SDK.
 * Calls gathered within a window go in one JSONL file and one batch; each gets its own reply,
 * restated as a Message with the provider's usage; a call whose worker died between submit
 * and record finds its batch by `custom_id` instead of submitting again; an errored or expired
 * request falls back; a provider without a Batch API falls back at once, and is asked once.
 * The requests on the wire are checked field by field against the SDK's own parameter types.
 */
import OpenAI from 'openai';
import type { RequestLogEntry } from '../../../src/offline';
import { Batcher } from '../../../src/activities/model/batcher';
import { callViaBatch, type BatchCallDeps } from '../../../src/activities/model/batch-call';
import { CHAT_BATCH_ENDPOINT, openaiBatches } from '../../../src/activities/model/providers/openai-batches';
import type { CallKey } from '../../../src/activities/model/response-store';
import type { MessagesRequest } from '../../../src/shared/messages-api/anthropic';
import { useOfflineModel } from '../offline/helpers';
import { memoryBatchStore } from '../../kit/batch-marks';

const MINUTE = 60_000;
const START = Date.now();
const t = useOfflineModel({ batchProcessingMs: MINUTE, now: () => START });
const openai = () => new OpenAI({ baseURL: `${t.model.url}/v1`, apiKey: 'k', maxRetries: 0 });

const isUpload = (e: RequestLogEntry) => e.method === 'POST' && e.path === '/v1/files';
const isCreate = (e: RequestLogEntry) => e.method === 'POST' && e.path === '/v1/batches';
const isList = (e: RequestLogEntry) => e.method === 'GET' && e.path.startsWith('/v1/batches?');

/** The JSONL lines of an upload, from the multipart body the log kept. */
function uploadedLines(e: RequestLogEntry): Record<string, unknown>[] {
  return e.rawBody.split(/\r?\n/).filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}


const keyOf = (agent: string): CallKey => ({ namespace: 'default', workflowId: agent, runId: 'r', activityId: '1', turn: 1 });
const body = (text: string): MessagesRequest => ({ model: 'gpt-4.1-mini', max_tokens: 256, system: 'Be brief.', messages: [{ role: 'user', content: `Go.\n@reply ${text}` }] });
const never = () => false;
const textOf = (o: Awaited<ReturnType<typeof callViaBatch>>) => (o.kind === 'message' ? o.message.content.map((b) => (b.type === 'text' ? b.text : b.type)).join('') : o.reason);

test('calls gathered within the window go in one JSONL file and one batch, each answered with its own reply and usage', async () => {
  const batcher = new Batcher({ windowMs: 10 * MINUTE, maxRequests: 2, pollMs: 5 });
  const deps: BatchCallDeps = { api: openaiBatches(openai()), batcher, responses: memoryBatchStore() };
  const calls = ['one', 'two'].map((text) => callViaBatch(deps, { key: keyOf(text), customId: `c-${text}`, body: body(text) }, new AbortController().signal, never, () => undefined));
  await t.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed');
  t.model.clock.advance(MINUTE);
  const out = await Promise.all(calls);
  expect(out.map(textOf)).toEqual(['one', 'two']);
  // The usage is the provider's, as the Chat Completions wire reports it.
  const processed = t.model.batches.entries();
  expect(processed.map((p) => [p.customId, p.result])).toEqual([['c-one', 'succeeded'], ['c-two', 'succeeded']]);
  const usage = out.map((o) => (o.kind === 'message' ? o.message.usage : undefined));
  expect(usage.map((u) => u!.output_tokens)).toEqual(processed.map((p) => p.usage!.output_tokens));
  expect(usage.map((u) => u!.input_tokens + (u!.cache_read_input_tokens ?? 0))).toEqual(processed.map((p) => p.usage!.input_tokens + p.usage!.cache_read_input_tokens + p.usage!.cache_creation_input_tokens));

  // On the wire: one upload with purpose batch, each line a Chat Completions request without streaming; one create.
  const uploads = t.model.log.entries().filter(isUpload);
  expect(uploads).toHaveLength(1);
  expect(uploads[0]!.rawBody).toMatch(/name="purpose"\r\n\r\nbatch\r\n/);
  const lines = uploadedLines(uploads[0]!);
  expect(lines.map((l) => Object.keys(l).sort())).toEqual([['body', 'custom_id', 'method', 'url'], ['body', 'custom_id', 'method', 'url']]);
  expect(lines.map((l) => [l.custom_id, l.method, l.url])).toEqual([['c-one', 'POST', CHAT_BATCH_ENDPOINT], ['c-two', 'POST', CHAT_BATCH_ENDPOINT]]);
  const sent = lines[0]!.body as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming & { stream?: unknown };
  expect(sent).toEqual({ model: 'gpt-4.1-mini', max_completion_tokens: 256, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Go.\n@reply one' }] });
  const creates = t.model.log.entries().filter(isCreate);
  const fileId = JSON.parse(JSON.stringify(creates[0]!.body)) as OpenAI.BatchCreateParams;
  expect(Object.keys(fileId).sort()).toEqual(['completion_window', 'endpoint', 'input_file_id']);
  expect(fileId).toMatchObject({ endpoint: '/v1/chat/completions', completion_window: '24h' });
  expect(batcher.created).toEqual([{ batchId: out[0]!.batchId, requests: 2 }]);
});

test('calls of two models go in two batches: the Batch API runs one model per batch (and the emulator refuses a mixed file)', async () => {
  const deps: BatchCallDeps = { api: openaiBatches(openai()), batcher: new Batcher({ windowMs: 10 * MINUTE, maxRequests: 2, pollMs: 5 }) };
  const waiting = new AbortController();
  const calls = [['m1', 'gpt-4.1-mini'], ['m2', 'gpt-4.1'], ['m3', 'gpt-4.1-mini']].map(([id, model]) => callViaBatch(deps, { key: keyOf(id!), customId: `c-${id}`, body: { ...body(id!), model: model! } }, id === 'm2' ? waiting.signal : new AbortController().signal, never, () => undefined));
  // Two requests of gpt-4.1-mini fill their batch; gpt-4.1's waits for its window, which the test does not wait out.
  await t.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed');
  expect(t.model.log.entries().filter(isUpload).map((e) => uploadedLines(e).map((l) => (l.body as { model: string }).model))).toEqual([['gpt-4.1-mini', 'gpt-4.1-mini']]);
  t.model.clock.advance(MINUTE);
  expect(await Promise.all([calls[0]!, calls[2]!]).then((o) => o.map(textOf))).toEqual(['m1', 'm3']);
  // The other model's call leaves its batch before it is sent (nothing of it reaches the provider).
  waiting.abort(new Error('done'));
  await expect(calls[1]).rejects.toThrow('done');
  expect(t.model.log.entries().filter(isUpload)).toHaveLength(1);
  const line = (id: string, model: string) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: '@reply a' }] } });
  const client = openai();
  const mixed = await client.files.create({ file: await OpenAI.toFile(Buffer.from(`${line('a', 'gpt-4.1-mini')}\n${line('b', 'gpt-4.1')}\n`), 'm.jsonl'), purpose: 'batch' });
  expect(await client.batches.create({ input_file_id: mixed.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).toMatchObject({ status: 'failed', errors: { data: [{ code: 'mismatched_model', line: 2 }] } });
});

test('a call whose worker died between submit and record finds its batch by custom_id: submitted once', async () => {
  const client = openai();
  const store = memoryBatchStore({ lose: true });
  const aborted = new AbortController();
  const dying = callViaBatch({ api: openaiBatches(client), batcher: new Batcher({ windowMs: 0, pollMs: 5 }), responses: store }, { key: keyOf('a'), customId: 'c-a', body: body('kept') }, aborted.signal, never, () => undefined);
  await t.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed');
  aborted.abort(new Error('worker died'));
  await expect(dying).rejects.toThrow('worker died');
  expect([...store.marks.values()].map((m) => Object.keys(m))).toEqual([['since']]);
  // The retry, on a new worker (a new client), lists the batches created since the mark and reads their results.
  const retry = callViaBatch({ api: openaiBatches(openai()), batcher: new Batcher({ windowMs: 0, pollMs: 5 }), responses: store }, { key: keyOf('a'), customId: 'c-a', body: body('kept') }, new AbortController().signal, never, () => undefined);
  await t.model.log.waitFor(isList);
  t.model.clock.advance(MINUTE);
  const out = await retry;
  expect(textOf(out)).toBe('kept');
  expect(t.model.log.entries().filter(isCreate)).toHaveLength(1);
  expect(t.model.log.entries().filter(isUpload)).toHaveLength(1);
  expect(out.batchId).toBe(t.model.batches.chatIds()[0]);
});

test('an errored and an expired request fall back with the reason; the results are read from the error file', async () => {
  t.model.batches.inject({ kind: 'errored', match: (c) => c === 'c-err' });
  const deps: BatchCallDeps = { api: openaiBatches(openai()), batcher: new Batcher({ windowMs: 0, pollMs: 5 }) };
  const errored = callViaBatch(deps, { key: keyOf('e'), customId: 'c-err', body: body('never') }, new AbortController().signal, never, () => undefined);
  await t.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed');
  t.model.clock.advance(MINUTE);
  const refused = await errored;
  expect(refused.kind).toBe('fallback');
  expect(textOf(refused)).toContain('500');
  t.model.batches.inject({ kind: 'expired' });
  const expired = callViaBatch(deps, { key: keyOf('x'), customId: 'c-exp', body: body('never') }, new AbortController().signal, never, () => undefined);
  await t.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed' && e.seq > 3);
  t.model.clock.advance(24 * 60 * MINUTE);
  expect(await expired).toMatchObject({ kind: 'fallback', reason: 'expired' });
  expect(t.model.batches.entries().map((p) => [p.customId, p.result])).toEqual([['c-err', 'errored'], ['c-exp', 'expired']]);
});

test('a provider without a Batch API: batched calls fall back at once, and it is asked once', async () => {
  t.model.faults.add({ kind: 'status', status: 404, match: isUpload });
  const deps: BatchCallDeps = { api: openaiBatches(openai()), batcher: new Batcher({ windowMs: 0, pollMs: 5 }), responses: memoryBatchStore() };
  const first = await callViaBatch(deps, { key: keyOf('n1'), customId: 'c-n1', body: body('x') }, new AbortController().signal, never, () => undefined);
  const second = await callViaBatch(deps, { key: keyOf('n2'), customId: 'c-n2', body: body('y') }, new AbortController().signal, never, () => undefined);
  expect([first, second].map((o) => o.kind)).toEqual(['fallback', 'fallback']);
  for (const out of [first, second]) expect(textOf(out)).toContain('no Batch API');
  expect(t.model.log.entries().filter(isUpload)).toHaveLength(1);
  expect(t.model.log.entries().filter(isCreate)).toHaveLength(0);
});

test('the offline Batch API refuses what OpenAI refuses: a file of another purpose, an endpoint it does not run, duplicate custom_ids', async () => {
  const client = openai();
  const notBatch = await client.files.create({ file: await OpenAI.toFile(Buffer.from('{}\n'), 'x.jsonl'), purpose: 'user_data' });
  await expect(client.batches.create({ input_file_id: notBatch.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toMatchObject({ status: 400 });
  const line = (id: string) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4.1-mini', messages: [{ role: 'user', content: '@reply a' }] } });
  const dup = await client.files.create({ file: await OpenAI.toFile(Buffer.from(`${line('a')}\n${line('a')}\n`), 'd.jsonl'), purpose: 'batch' });
  await expect(client.batches.create({ input_file_id: dup.id, endpoint: '/v1/embeddings', completion_window: '24h' })).rejects.toMatchObject({ status: 400 });
  const failed = await client.batches.create({ input_file_id: dup.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  expect(failed).toMatchObject({ status: 'failed', errors: { data: [{ code: 'duplicate_custom_id', line: 2 }] } });
});
