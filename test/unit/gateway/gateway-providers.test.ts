/**
 * The model gateway in front of an OpenAI-compatible provider (issue 43): the real `openai`
 * SDK calls the offline model's Chat Completions wire through the gateway's provider path. A
 * keyed call whose caller hung up is finished upstream and replayed to the retry (streamed
 * or not), one request at the provider; a mid-stream error is not kept; the gateway forwards
 * only to the providers it was configured with, and refuses a caller whose configuration names
 * another URL for the provider (its key would go elsewhere). The model activity sends its key
 * on OpenAI-compatible calls too.
 */
import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ModelGateway, isWholeResponse } from '../../../src/gateway/gateway';
import { CALL_KEY_HEADER, CALL_PROOF_HEADER, PROVIDER_URL_HEADER, REPLAYED_HEADER, gatewayProviderUrl } from '../../../src/shared/providers/model-gateway';
import { startOfflineModel, type OfflineModel } from '../../../src/offline';
import { createModelActivities } from '../../../src/activities/model/call-model';
import type { ConversationSource } from '../../../src/activities/conversation';
import type { ModelCallInput, ModelCallResult } from '../../../src/shared/wire/activity-io';
import { providersConfigSchema } from '../../../src/shared/providers/providers';
import { createProviderClients } from '../../../src/worker/providers';
import { openaiBatches } from '../../../src/activities/model/providers/openai-batches';
import { waitFor } from '../../kit/wait';

let model: OfflineModel;
let gateway: ModelGateway;
let openai: OpenAI;

beforeEach(async () => {
  model = await startOfflineModel();
  gateway = await ModelGateway.start({ upstream: model.url, providers: { openai: `${model.url}/v1` }, dir: mkdtempSync(join(tmpdir(), 'gateway-')) });
  openai = new OpenAI({ baseURL: gatewayProviderUrl(gateway.url, 'openai'), apiKey: 'k', maxRetries: 0, defaultHeaders: { [PROVIDER_URL_HEADER]: `${model.url}/v1` } });
});
afterEach(async () => {
  await gateway.close();
  await model.close();
});

const key = (n: number) => n.toString(16).padStart(64, '0');
const chatTo = () => model.log.entries().filter((e) => e.path === '/v1/chat/completions');
const body = (script: string) => ({ model: 'gpt-4.1-mini', messages: [{ role: 'user' as const, content: script }] });

/** A streamed chat call with the key; its text and whether the gateway replayed it. */
async function streamed(script: string, k: string, signal?: AbortSignal) {
  const { data, response } = await openai.chat.completions.create({ ...body(script), stream: true, stream_options: { include_usage: true } }, { signal, headers: { [CALL_KEY_HEADER]: k } }).withResponse();
  let text = '';
  for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? '';
  return { text, replayed: response.headers.get(REPLAYED_HEADER) === '1', requestId: response.headers.get('x-request-id') };
}

test('a streamed chat call whose caller hung up is finished and replayed to the retry: one request at the provider', async () => {
  const script = 'Work.\n@sleep 300 @reply the chat answer';
  const abort = new AbortController();
  const first = streamed(script, key(1), abort.signal).catch((err: unknown) => err);
  await model.log.waitFor((e) => e.path === '/v1/chat/completions' && e.outcome === 'pending');
  abort.abort();
  expect(await first).toBeInstanceOf(Error);
  await waitFor(() => gateway.counts.finishedForNobody === 1, 'the gateway to keep the abandoned call');
  const retry = await streamed(script, key(1));
  expect(retry).toMatchObject({ text: 'the chat answer', replayed: true, requestId: chatTo()[0]!.requestId });
  expect(chatTo().map((e) => e.outcome)).toEqual(['completed']);
  // The gateway's own headers are not sent on.
  for (const h of [CALL_KEY_HEADER, PROVIDER_URL_HEADER]) expect(chatTo()[0]!.headers[h]).toBeUndefined();
});

test('a whole JSON completion is kept; a mid-stream error is not', async () => {
  const once = await openai.chat.completions.create(body('One.\n@reply json'), { headers: { [CALL_KEY_HEADER]: key(2) } });
  const again = await openai.chat.completions.create(body('One.\n@reply json'), { headers: { [CALL_KEY_HEADER]: key(2) } }).withResponse();
  expect(again.data.choices[0]!.message.content).toBe(once.choices[0]!.message.content);
  expect(again.response.headers.get(REPLAYED_HEADER)).toBe('1');
  await expect(streamed('Two.\n@stream-error @reply later', key(3))).rejects.toThrow();
  expect(await streamed('Two.\n@stream-error @reply later', key(3))).toMatchObject({ text: 'later', replayed: false });
  expect(chatTo().map((e) => e.outcome)).toEqual(['completed', 'fault', 'completed']);
});

test('only configured providers, at the URL the caller expects: others are refused before anything is sent', async () => {
  const stranger = new OpenAI({ baseURL: gatewayProviderUrl(gateway.url, 'elsewhere'), apiKey: 'k', maxRetries: 0 });
  await expect(stranger.chat.completions.create(body('x\n@reply y'))).rejects.toMatchObject({ status: 404 });
  await expect(stranger.chat.completions.create(body('x\n@reply y'))).rejects.toThrow('no provider "elsewhere"');
  const misconfigured = new OpenAI({ baseURL: gatewayProviderUrl(gateway.url, 'openai'), apiKey: 'k', maxRetries: 0, defaultHeaders: { [PROVIDER_URL_HEADER]: 'https://api.example.com/v1' } });
  await expect(misconfigured.chat.completions.create(body('x\n@reply y'))).rejects.toMatchObject({ status: 400 });
  await expect(misconfigured.chat.completions.create(body('x\n@reply y'))).rejects.toThrow('configure the gateway and the workers alike');
  expect(chatTo()).toHaveLength(0);
  // A raw path that climbs out of the provider's base path still goes to the provider's host, nowhere else.
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(`${gateway.url}/`, { method: 'GET', path: '/forkflow/v1/providers/openai/../../../../elsewhere' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('error', reject);
    req.end();
  });
  expect(status).toBe(404);
  expect(model.log.entries().map((e) => e.path)).toContain('/elsewhere');
});

test('what counts as a whole Chat Completions response', () => {
  const sse = (...lines: string[]) => Buffer.from(lines.map((l) => `data: ${l}\n\n`).join(''));
  expect(isWholeResponse(200, 'text/event-stream', sse('{"choices":[]}', '[DONE]'))).toBe(true);
  expect(isWholeResponse(200, 'text/event-stream', sse('{"choices":[]}'))).toBe(false);
  expect(isWholeResponse(200, 'text/event-stream', sse('{"choices":[]}', '{"error":{"message":"overloaded"}}', '[DONE]'))).toBe(false);
  expect(isWholeResponse(200, 'application/json', Buffer.from('{"object":"chat.completion","choices":[]}'))).toBe(true);
  expect(isWholeResponse(200, 'application/json', Buffer.from('{"object":"list","data":[]}'))).toBe(false);
});

test('the model activity sends its call key on an OpenAI-compatible provider: a second attempt is a replay', async () => {
  const config = providersConfigSchema.parse([{ name: 'openai', kind: 'openai-compatible', baseURL: `${model.url}/v1`, apiKeyEnv: 'K', models: ['gpt-4.1-mini'] }]);
  const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: 'k', maxRetries: 0 });
  const providers = createProviderClients(config, anthropic, { K: 'k' }, { gateway: gateway.url });
  const conversations = {
    context: () => Promise.resolve({ model: 'gpt-4.1-mini', system: 'sys', tools: [], maxTokens: 100, cacheKeyHash: 'h' }),
    forModelCall: () => Promise.resolve([{ role: 'user', content: 'Hi.\n@reply keyed chat' }]),
    remember: () => undefined,
  } as unknown as ConversationSource;
  const activities = createModelActivities({ anthropic, providers, conversations, gateway: gateway.url });
  const input = { run: { workflowId: 'wf', runId: 'run-1' }, agentId: 'a', turn: 2, messageCount: 1, digest: 'd', contextKey: 'k', provider: 'openai' } as ModelCallInput;
  const info = { activityId: '3', attempt: 1, workflowExecution: { workflowId: 'wf', runId: 'run-1' }, namespace: 'default' };
  const first: ModelCallResult = await new MockActivityEnvironment(info).run((i: ModelCallInput) => activities.callModel(i), input);
  const second: ModelCallResult = await new MockActivityEnvironment({ ...info, attempt: 2 }).run((i: ModelCallInput) => activities.callModel(i), input);
  expect(first.message.content).toMatchObject([{ type: 'text', text: 'keyed chat' }]);
  expect(second).toEqual(first);
  expect(gateway.counts).toMatchObject({ forwarded: 1, replayed: 1 });
  expect(chatTo()).toHaveLength(1);
  expect(chatTo()[0]!.headers[CALL_PROOF_HEADER]).toBeUndefined();
});

test('a batch through the gateway: the upload, the create and the reads pass through to the provider untouched', async () => {
  const api = openaiBatches(openai);
  const params = api.prepare({ model: 'gpt-4.1-mini', max_tokens: 64, messages: [{ role: 'user', content: 'Go.\n@reply batched' }] });
  const batchId = await api.create([{ customId: 'c-1', params }], [], new AbortController().signal);
  model.clock.advance(60_000);
  expect(await api.retrieve(batchId, new AbortController().signal)).toEqual({ ended: true, total: 1 });
  const results = await api.results(batchId, new AbortController().signal);
  expect(results.get('c-1')).toMatchObject({ type: 'succeeded', message: { content: [{ type: 'text', text: 'batched' }] } });
  expect(model.log.entries().map((e) => `${e.method} ${e.path.split('?')[0]} ${e.outcome}`)).toEqual([
    'POST /v1/files completed',
    'POST /v1/batches completed',
    `GET /v1/batches/${batchId} completed`,
    `GET /v1/batches/${batchId} completed`,
    expect.stringMatching(/^GET \/v1\/files\/file-offline\w+\/content completed$/) as string,
  ]);
  expect(gateway.counts.passedThrough).toBe(5);
});
