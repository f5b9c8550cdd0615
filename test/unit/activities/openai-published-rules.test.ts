/**
 * Rules of OpenAI's published API that its request and response types do not carry, held by
 * the OpenAI-compatible provider path: a batch reports `validating` with zero `request_counts`
 * before it has read its file (the create example of the API reference), so a count of zero
 * is "not known yet", never "empty"; a function name is 1-64 of `a-zA-Z0-9_-` (a Messages
 * tool name may be 128), so a longer one goes out under a stand-in and comes back as the
 * agent's, interactive, streamed and batched (the emulator refuses a name over 64, as OpenAI does);
 * a refusal comes as the message's `refusal` (or the stream's `delta.refusal`) with no content,
 * and is read as the reply's text with stop reason `refusal`, not as an empty turn.
 */
import OpenAI from 'openai';
import type { RequestLogEntry } from '../../../src/offline';
import { Batcher } from '../../../src/activities/model/batcher';
import { callViaBatch, type BatchCallDeps } from '../../../src/activities/model/batch-call';
import { openaiBatches } from '../../../src/activities/model/providers/openai-batches';
import { callChatCompletions } from '../../../src/activities/model/providers/openai-call';
import { ChunkTranslator, fromChatCompletion } from '../../../src/activities/model/providers/openai-response';
import type { CallKey } from '../../../src/activities/model/response-store';
import type { MessagesRequest, ToolDefinition } from '../../../src/shared/messages-api/anthropic';
import { useOfflineModel } from '../offline/helpers';
import { memoryBatchStore } from '../../kit/batch-marks';

const MINUTE = 60_000;
const START = Date.now();
const t = useOfflineModel({ batchProcessingMs: MINUTE, batchValidatingMs: MINUTE / 2, now: () => START });
const openai = (worker: string) => new OpenAI({ baseURL: `${t.model.url}/v1`, apiKey: 'k', maxRetries: 0, defaultHeaders: { 'x-test-worker': worker } });

const isCreate = (e: RequestLogEntry) => e.method === 'POST' && e.path === '/v1/batches';
const isCancel = (e: RequestLogEntry) => e.method === 'POST' && e.path.endsWith('/cancel');


const keyOf = (agent: string): CallKey => ({ namespace: 'default', workflowId: agent, runId: 'r', activityId: '1', turn: 1 });
const body = (text: string): MessagesRequest => ({ model: 'gpt-4.1-mini', max_tokens: 256, messages: [{ role: 'user', content: `Go.\n@reply ${text}` }] });
const never = () => false;

test('a retried call that first sees its batch validating (request_counts all zero) and then leaves with its worker does not cancel the batch', async () => {
  const responses = memoryBatchStore();
  // Worker 1 submits two agents' calls in one batch; its worker then dies under agent a's call.
  const one: BatchCallDeps = { api: openaiBatches(openai('1')), batcher: new Batcher({ windowMs: 10 * MINUTE, maxRequests: 2, pollMs: 5 }), responses };
  const dying = new AbortController();
  const a = callViaBatch(one, { key: keyOf('a'), customId: 'c-a', body: body('a') }, dying.signal, never, () => undefined);
  const b = callViaBatch(one, { key: keyOf('b'), customId: 'c-b', body: body('b') }, new AbortController().signal, never, () => undefined);
  await t.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed');
  dying.abort(new Error('worker 1 died'));
  await expect(a).rejects.toThrow('worker 1 died');

  // Agent a's retry on worker 2 finds the batch by its mark and watches it while it is still validating.
  const two: BatchCallDeps = { api: openaiBatches(openai('2')), batcher: new Batcher({ windowMs: 0, pollMs: 5 }), responses };
  const stopping = new AbortController();
  const retry = callViaBatch(two, { key: keyOf('a'), customId: 'c-a', body: body('a') }, stopping.signal, never, () => undefined);
  await t.model.log.waitFor((e) => e.method === 'GET' && e.path.startsWith('/v1/batches/') && e.headers['x-test-worker'] === '2' && e.outcome === 'completed');
  const [batchId] = t.model.batches.chatIds();
  expect(await openai('test').batches.retrieve(batchId!)).toMatchObject({ status: 'validating', request_counts: { total: 0, completed: 0, failed: 0 } });
  // Worker 2 stops (its agent is not cancelled): it leaves the batch running for agent b.
  stopping.abort(new Error('worker 2 stopping'));
  await expect(retry).rejects.toThrow('worker 2 stopping');
  expect(t.model.log.entries().filter(isCancel)).toEqual([]);

  t.model.clock.advance(MINUTE);
  const out = await b;
  expect(out.kind).toBe('message');
  expect(t.model.batches.entries().map((e) => [e.customId, e.result])).toEqual([['c-a', 'succeeded'], ['c-b', 'succeeded']]);
});

describe('a tool name over OpenAI\'s 64 characters', () => {
  // An MCP tool's name as src/shared/tools/mcp.ts makes it: up to 128 characters.
  const LONG = `mcp__${'knowledge-base'.repeat(3)}__${'search_documents_by_semantic_similarity'.repeat(2)}`;
  const tool: ToolDefinition = { name: LONG, description: 'Search.', input_schema: { type: 'object', properties: { q: { type: 'string' } } } };
  const ask = (text: string, extra: Partial<MessagesRequest> = {}): MessagesRequest => ({ model: 'gpt-4.1-mini', max_tokens: 256, tools: [tool, { name: 'Read', input_schema: { type: 'object' } }], messages: [{ role: 'user', content: text }], ...extra });
  const isChat = (e: RequestLogEntry) => e.path === '/v1/chat/completions';
  type ChatBody = { tools: { function: { name: string } }[]; tool_choice?: { function: { name: string } }; messages: { tool_calls?: { function: { name: string } }[] }[] };

  /** The name the provider was offered for the long tool (read from the wire), after a first call that must succeed. */
  async function wireName(): Promise<string> {
    await callChatCompletions(openai('x'), ask('@reply hi'), { stream: false, signal: new AbortController().signal });
    const sent = t.model.log.entries().filter(isChat).at(-1)!.body as ChatBody;
    return sent.tools[0]!.function.name;
  }

  test('goes out as a stand-in OpenAI takes, the same on every call; other names go out as they are', async () => {
    expect(LONG.length).toBeGreaterThan(64);
    const name = await wireName();
    expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(name.startsWith(LONG.slice(0, 40))).toBe(true);
    // A conversation that called it, and forces it: every mention is the same stand-in.
    const history: MessagesRequest = ask('@reply done', {
      tool_choice: { type: 'tool', name: LONG },
      messages: [
        { role: 'user', content: 'Search.' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: LONG, input: { q: 'x' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'found' }, { type: 'text', text: '@reply done' }] },
      ],
    });
    await callChatCompletions(openai('x'), history, { stream: false, signal: new AbortController().signal });
    const sent = t.model.log.entries().filter(isChat).at(-1)!.body as ChatBody;
    expect([sent.tools[0]!.function.name, sent.tool_choice!.function.name, sent.messages[1]!.tool_calls![0]!.function.name]).toEqual([name, name, name]);
    expect(sent.tools[1]!.function.name).toBe('Read');
  });

  test.each([false, true])('a call of the stand-in comes back as the agent\'s tool (stream: %s)', async (stream) => {
    const name = await wireName();
    const events: string[] = [];
    const { message } = await callChatCompletions(openai('x'), ask(`Go.\n@tool ${name} {"q":"x"}`), {
      stream,
      signal: new AbortController().signal,
      onEvent: (e) => {
        if (e.type === 'content_block_start' && e.content_block.type === 'tool_use') events.push(e.content_block.name);
      },
    });
    expect(message.content).toMatchObject([{ type: 'tool_use', name: LONG, input: { q: 'x' } }]);
    expect(events).toEqual(stream ? [LONG] : []);
  });

  test('a batched call of the stand-in comes back as the agent\'s tool', async () => {
    const name = await wireName();
    const deps: BatchCallDeps = { api: openaiBatches(openai('x')), batcher: new Batcher({ windowMs: 0, pollMs: 5 }) };
    const call = callViaBatch(deps, { key: keyOf('t'), customId: 'c-t', body: ask(`Go.\n@tool ${name} {"q":"y"}`) }, new AbortController().signal, never, () => undefined);
    await t.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed');
    t.model.clock.advance(MINUTE);
    const out = await call;
    expect(out.kind).toBe('message');
    expect(out.kind === 'message' && out.message.content).toMatchObject([{ type: 'tool_use', name: LONG, input: { q: 'y' } }]);
  });
});

test('a refusal is the reply\'s text, stop reason refusal, whole and streamed', () => {
  const said = "I'm sorry, I can't help with that.";
  // The shapes of OpenAI's reference: a message with `content: null` and `refusal`; chunks with `delta.refusal`.
  const completion: OpenAI.Chat.ChatCompletion = {
    id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4.1-mini',
    choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: null, refusal: said } }],
    usage: { prompt_tokens: 10, completion_tokens: 9, total_tokens: 19 },
  };
  expect(fromChatCompletion(completion)).toMatchObject({ content: [{ type: 'text', text: said }], stop_reason: 'refusal' });
  const chunk = (delta: OpenAI.Chat.ChatCompletionChunk.Choice.Delta, finish: 'stop' | null = null): OpenAI.Chat.ChatCompletionChunk => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1-mini', choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] });
  const translator = new ChunkTranslator();
  const events = [chunk({ role: 'assistant', content: '', refusal: null }), chunk({ refusal: "I'm sorry, " }), chunk({ refusal: "I can't help with that." }), chunk({}, 'stop')].flatMap((c) => translator.push(c));
  const end = translator.end();
  expect(end.message).toMatchObject({ content: [{ type: 'text', text: said }], stop_reason: 'refusal' });
  expect(events.filter((e) => e.type === 'content_block_delta').map((e) => (e as { delta: { text: string } }).delta.text).join('')).toBe(said);
  expect(end.events.find((e) => e.type === 'message_delta')).toMatchObject({ delta: { stop_reason: 'refusal' } });
});
