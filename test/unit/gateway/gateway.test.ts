/**
 * The model gateway between the real SDK and the offline model, both over HTTP: a keyed
 * call whose caller goes away is finished upstream and replayed to the retry, byte for byte
 * and without a second request to the model; a retry that arrives while the first attempt
 * is still running waits for it; a cancel stops the call upstream only with the proof of an
 * attempt that made or joined the call (the key alone is refused); errors, other bodies and
 * calls without a key are never replayed.
 */
import { copyFileSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { ModelGateway, isWholeResponse } from '../../../src/gateway/gateway';
import { CallStore } from '../../../src/gateway/call-store';
import { CALL_KEY_HEADER, CALL_PROOF_HEADER, CANCEL_PATH_PREFIX, REPLAYED_HEADER } from '../../../src/shared/providers/model-gateway';
import { startOfflineModel, type OfflineModel } from '../../../src/offline';
import { waitFor } from '../../kit/wait';
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ConversationSource } from '../../../src/activities/conversation';
import { createModelActivities } from '../../../src/activities/model/call-model';
import type { ModelCallInput, ModelCallResult } from '../../../src/shared/wire/activity-io';

let model: OfflineModel;
let gateway: ModelGateway;
let client: Anthropic;

beforeEach(async () => {
  model = await startOfflineModel();
  gateway = await ModelGateway.start({ upstream: model.url, dir: mkdtempSync(join(tmpdir(), 'gateway-')) });
  client = new Anthropic({ baseURL: gateway.url, apiKey: 'test-key', maxRetries: 0 });
});
afterEach(async () => {
  await gateway.close();
  await model.close();
});

const key = (n: number) => n.toString(16).padStart(64, '0');
const proof = (n: number) => (n + 0xabc).toString(16).padStart(64, 'f');
const request = (script: string): Anthropic.Messages.MessageStreamParams => ({ model: 'claude-sonnet-4-6', max_tokens: 256, messages: [{ role: 'user', content: script }] });
const messagesTo = () => model.log.entries().filter((e) => e.path === '/v1/messages');

/** Streams a call with the key (and a proof); resolves with its message and whether the gateway replayed it. */
async function call(body: Anthropic.Messages.MessageStreamParams, k: string | undefined, signal?: AbortSignal, proof?: string) {
  const stream = client.messages.stream(body, { signal, ...(k ? { headers: { [CALL_KEY_HEADER]: k, ...(proof ? { [CALL_PROOF_HEADER]: proof } : {}) } } : {}) });
  const message = await stream.finalMessage();
  const { response } = await stream.withResponse();
  return { message, requestId: stream.request_id, replayed: response.headers.get(REPLAYED_HEADER) === '1' };
}

/** Starts a call and hangs up once the model holds it (the worker "dies" mid-call). */
async function abandoned(body: Anthropic.Messages.MessageStreamParams, k: string | undefined): Promise<void> {
  const abort = new AbortController();
  const before = messagesTo().length;
  const attempt = call(body, k, abort.signal).catch((err: unknown) => err);
  await model.log.waitFor((e) => e.path === '/v1/messages' && e.seq > before && e.outcome === 'pending');
  abort.abort();
  expect(await attempt).toBeInstanceOf(Error);
}

test('a keyed call whose caller hung up is finished and replayed to the retry: one request upstream, the same bytes', async () => {
  const body = request('Work.\n@sleep 200 @reply the answer');
  await abandoned(body, key(1));
  await model.log.waitFor((e) => e.outcome === 'completed');
  await waitFor(() => gateway.counts.finishedForNobody === 1, 'the gateway to keep the abandoned call');
  const retry = await call(body, key(1));
  expect(retry.replayed).toBe(true);
  expect(retry.message.content).toMatchObject([{ type: 'text', text: 'the answer' }]);
  // The retry sees the provider's own request id: billing audits match the provider's records.
  expect(retry.requestId).toBe(messagesTo()[0]!.requestId);
  expect(messagesTo().map((e) => e.outcome)).toEqual(['completed']);
});

test('a retry that arrives while the first attempt is still streaming waits for it instead of asking again', async () => {
  const body = request('Work.\n@sleep 300 @reply patient');
  await abandoned(body, key(2));
  const retry = await call(body, key(2));
  expect(retry.replayed).toBe(true);
  expect(retry.message.content).toMatchObject([{ type: 'text', text: 'patient' }]);
  expect(gateway.counts.attached).toBe(1);
  expect(messagesTo()).toHaveLength(1);
});

const cancel = (k: string, proof?: string) => fetch(`${gateway.url}${CANCEL_PATH_PREFIX}${k}`, { method: 'DELETE', headers: proof ? { [CALL_PROOF_HEADER]: proof } : {} });

test('a cancelled call is stopped upstream, not finished for a retry: with its attempt’s proof only', async () => {
  const body = request('Work.\n@sleep 5000 @reply never kept');
  const abort = new AbortController();
  const attempt = call(body, key(3), abort.signal, proof(1)).catch((err: unknown) => err);
  await model.log.waitFor((e) => e.path === '/v1/messages' && e.outcome === 'pending');
  abort.abort();
  await attempt;
  // A stranger knows the key (it is derived from ids in the workflow's history), not the proof.
  expect((await cancel(key(3))).status).toBe(401);
  expect((await cancel(key(3), proof(2))).status).toBe(204);
  expect(gateway.counts).toMatchObject({ cancelled: 0, cancelsRefused: 1 });
  expect(messagesTo()[0]!.outcome).toBe('pending');
  expect((await cancel(key(3), proof(1))).status).toBe(204);
  await model.log.waitFor((e) => e.path === '/v1/messages' && e.outcome === 'aborted');
  expect(gateway.counts.cancelled).toBe(1);
  // The proof is the gateway's business: it is not sent on to the provider.
  expect(messagesTo()[0]!.headers[CALL_PROOF_HEADER]).toBeUndefined();
});

test('a retry that joined a running call may cancel it with its own proof', async () => {
  const body = request('Work.\n@sleep 5000 @reply never kept');
  const first = new AbortController();
  const attempt = call(body, key(9), first.signal, proof(1)).catch((err: unknown) => err);
  await model.log.waitFor((e) => e.path === '/v1/messages' && e.outcome === 'pending');
  first.abort();
  await attempt;
  // The retry (another worker, another proof) joins the call still running upstream.
  const second = new AbortController();
  const joined = call(body, key(9), second.signal, proof(3)).catch((err: unknown) => err);
  await waitFor(() => gateway.counts.attached === 1, 'the retry to join the running call');
  second.abort();
  await joined;
  expect((await cancel(key(9), proof(3))).status).toBe(204);
  await model.log.waitFor((e) => e.path === '/v1/messages' && e.outcome === 'aborted');
  expect(gateway.counts).toMatchObject({ cancelled: 1, cancelsRefused: 0 });
});

test('errors are not kept: the retry of a failed call asks the model again', async () => {
  const body = request('Work.\n@fail 529 @reply after the overload');
  await expect(call(body, key(4))).rejects.toMatchObject({ status: 529 });
  const retry = await call(body, key(4));
  expect(retry.replayed).toBe(false);
  expect(retry.message.content).toMatchObject([{ type: 'text', text: 'after the overload' }]);
  expect(messagesTo().map((e) => e.outcome)).toEqual(['fault', 'completed']);
});

test('a mid-stream error is not a whole response: not kept', async () => {
  const body = request('Work.\n@stream-error @reply second time lucky');
  await expect(call(body, key(5))).rejects.toThrow(/Overloaded/);
  const retry = await call(body, key(5));
  expect(retry.replayed).toBe(false);
  expect(messagesTo()).toHaveLength(2);
});

test('the same key with another body is asked anew, never answered with the other body’s response', async () => {
  await call(request('One.\n@reply first'), key(6));
  const other = await call(request('Two.\n@reply second'), key(6));
  expect(other.replayed).toBe(false);
  expect(other.message.content).toMatchObject([{ type: 'text', text: 'second' }]);
  expect(messagesTo()).toHaveLength(2);
});

test('without a key the gateway is a plain hop: a caller that hangs up ends the call upstream', async () => {
  await abandoned(request('Plain.\n@sleep 5000 @reply unwanted'), undefined);
  await model.log.waitFor((e) => e.path === '/v1/messages' && e.outcome === 'aborted');
  const direct = await call(request('Plain.\n@reply plain'), undefined);
  expect(direct.replayed).toBe(false);
  expect(gateway.counts.passedThrough).toBe(2);
});

test('a malformed key is a 400 in the provider’s error shape', async () => {
  const error = await call(request('x\n@reply y'), 'not-a-key').catch((err: unknown) => err);
  expect(error).toBeInstanceOf(Anthropic.BadRequestError);
  expect((error as Error).message).toContain('forkflow-call-key');
  await expect(cancel('..%2F..%2Fetc', proof(1)).then((r) => r.status)).resolves.toBe(400);
  await expect(cancel(key(1), 'not-a-proof').then((r) => r.status)).resolves.toBe(401);
  expect(messagesTo()).toHaveLength(0);
});

test('what counts as a whole response', () => {
  const sse = (...events: string[]) => Buffer.from(events.map((e) => `event: ${e}\ndata: {}\n\n`).join(''));
  expect(isWholeResponse(200, 'text/event-stream', sse('message_start', 'message_stop'))).toBe(true);
  expect(isWholeResponse(200, 'text/event-stream', sse('message_start', 'content_block_delta'))).toBe(false);
  expect(isWholeResponse(200, 'text/event-stream', sse('message_start', 'error', 'message_stop'))).toBe(false);
  expect(isWholeResponse(529, 'text/event-stream', sse('message_start', 'message_stop'))).toBe(false);
  expect(isWholeResponse(200, 'application/json', Buffer.from('{"type":"message","content":[]}'))).toBe(true);
  expect(isWholeResponse(200, 'application/json', Buffer.from('{"type":"mess'))).toBe(false);
});

test('the call store: a torn, foreign, moved or other-version file is "not there"', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'callstore-'));
  const store = new CallStore(dir, 60_000);
  await store.put(key(7), 'abc', { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') });
  expect((await store.get(key(7), 'abc'))?.body.toString()).toBe('{}');
  expect(await store.get(key(7), 'other request')).toBeUndefined();
  writeFileSync(join(dir, `${key(8)}.json`), '{"v":1,"key":');
  expect(await store.get(key(8), 'abc')).toBeUndefined();
  writeFileSync(join(dir, `${key(9)}.json`), JSON.stringify({ v: 1, key: key(9), requestSha256: 'abc', status: 200, headers: {}, body: '' }));
  expect(await store.get(key(9), 'abc')).toBeUndefined();
  // An authentic entry moved to another call's name is not that call's answer.
  copyFileSync(join(dir, `${key(7)}.json`), join(dir, `${key(6)}.json`));
  expect(await store.get(key(6), 'abc')).toBeUndefined();
  expect(store.sweep(Date.now() + 120_000)).toBe(4);
  expect(readdirSync(dir)).toEqual(['store.key']);
});

describe('the model activity through the gateway', () => {
  const input = { run: { workflowId: 'wf', runId: 'run-1' }, agentId: 'a', turn: 2, messageCount: 1, digest: 'd', contextKey: 'k' } as ModelCallInput;
  const info = { activityId: '3', attempt: 1, workflowExecution: { workflowId: 'wf', runId: 'run-1' }, namespace: 'default' };
  const conversations = (script: string) =>
    ({
      context: () => Promise.resolve({ model: 'claude-sonnet-4-6', system: 'sys', tools: [], maxTokens: 100, cacheKeyHash: 'h' }),
      forModelCall: () => Promise.resolve([{ role: 'user', content: script }]),
      remember: () => undefined,
    }) as unknown as ConversationSource;

  test('each call carries its key, the same on every attempt: a second attempt is a replay', async () => {
    const activities = createModelActivities({ anthropic: client, conversations: conversations('Hi.\n@reply keyed'), gateway: gateway.url });
    const first: ModelCallResult = await new MockActivityEnvironment(info).run((i: ModelCallInput) => activities.callModel(i), input);
    // No response store here: the second attempt reaches the gateway, which has the answer.
    const second: ModelCallResult = await new MockActivityEnvironment({ ...info, attempt: 2 }).run((i: ModelCallInput) => activities.callModel(i), input);
    expect(second.message).toEqual(first.message);
    expect(second.requestId).toBe(first.requestId);
    expect(gateway.counts).toMatchObject({ forwarded: 1, replayed: 1, passedThrough: 0 });
    expect(messagesTo()).toHaveLength(1);
    // The key is the gateway's business: it is not sent on to the provider.
    expect(messagesTo()[0]!.headers[CALL_KEY_HEADER]).toBeUndefined();
  });

  test('a call cancelled by its workflow is stopped at the gateway, not finished for nobody', async () => {
    const activities = createModelActivities({ anthropic: client, conversations: conversations('Hi.\n@sleep 5000 @reply unwanted'), gateway: gateway.url });
    const env = new MockActivityEnvironment(info);
    const running = env.run((i: ModelCallInput) => activities.callModel(i), input).catch((err: unknown) => err);
    await model.log.waitFor((e) => e.path === '/v1/messages' && e.outcome === 'pending');
    env.cancel();
    expect(await running).toBeInstanceOf(CancelledFailure);
    expect(gateway.counts.cancelled).toBe(1);
    await model.log.waitFor((e) => e.path === '/v1/messages' && e.outcome === 'aborted');
  });
});
