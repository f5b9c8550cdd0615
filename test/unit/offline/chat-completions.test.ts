/**
 * The offline model's OpenAI Chat Completions wire, driven by the official `openai` SDK's
 * own client (unchanged, only its baseURL pointed at the emulator): the same scripts as the
 * Messages wire, JSON and SSE, tool calls both ways, automatic prefix caching reported as
 * `cached_tokens`, and errors in OpenAI's shape.
 */
import OpenAI, { APIError } from 'openai';
import type { OfflineModel } from '../../../src/offline';
import { filler, useOfflineModel } from './helpers';

const MODEL = 'gpt-4.1-mini';
const READ_TOOL: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'Read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
};

function openai(model: OfflineModel): OpenAI {
  return new OpenAI({ baseURL: `${model.url}/v1`, apiKey: 'test-key', maxRetries: 0 });
}

describe('offline model: Chat Completions through the openai SDK', () => {
  const t = useOfflineModel();

  it('answers a scripted reply as a chat.completion', async () => {
    const res = await openai(t.model).chat.completions.create({ model: MODEL, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Greet.\n@reply hello there' }] });
    expect(res.object).toBe('chat.completion');
    expect(res.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'hello there' });
    expect(res.choices[0]?.finish_reason).toBe('stop');
    const entry = t.model.log.entries()[0];
    expect(entry?.path).toBe('/v1/chat/completions');
    // The log keeps the emulator's own accounting; the wire restates it.
    const u = entry?.usage;
    expect(res.usage?.prompt_tokens).toBe((u?.input_tokens ?? 0) + (u?.cache_creation_input_tokens ?? 0) + (u?.cache_read_input_tokens ?? 0));
    expect(res.usage?.completion_tokens).toBe(u?.output_tokens);
  });

  it('takes a reasoning_effort (restated as the Messages output_config.effort) and refuses an unknown one', async () => {
    const res = await openai(t.model).chat.completions.create({ model: MODEL, reasoning_effort: 'minimal', messages: [{ role: 'user', content: '@reply thought' }] });
    expect(res.choices[0]?.message.content).toBe('thought');
    expect(t.model.log.entries()[0]?.body).toMatchObject({ reasoning_effort: 'minimal' });
    await expect(openai(t.model).chat.completions.create({ model: MODEL, reasoning_effort: 'huge' as never, messages: [{ role: 'user', content: '@reply x' }] })).rejects.toThrow(/reasoning_effort/);
  });

  it('calls tools, takes their results back as tool messages, and goes on with the script', async () => {
    const client = openai(t.model);
    const script = 'Look.\n@tools [{"name":"Read","input":{"path":"a.txt"}},{"name":"Read","input":{"path":"b.txt"}}]\n@reply done';
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: script }];
    const first = await client.chat.completions.create({ model: MODEL, messages, tools: [READ_TOOL] });
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    const calls = choice?.message.tool_calls ?? [];
    expect(calls.map((c) => c.type === 'function' && [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['Read', { path: 'a.txt' }],
      ['Read', { path: 'b.txt' }],
    ]);
    messages.push(choice?.message as OpenAI.ChatCompletionMessageParam);
    for (const call of calls) messages.push({ role: 'tool', tool_call_id: call.id, content: `contents of ${call.id}` });
    const second = await client.chat.completions.create({ model: MODEL, messages, tools: [READ_TOOL] });
    expect(second.choices[0]?.message.content).toBe('done');
    // The log keeps the Chat body as sent; the script went on because each result answered its call.
    const sent = t.model.log.entries()[1]?.body as { messages: { role: string }[] };
    expect(sent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    const unpaired = await client.chat.completions.create({ model: MODEL, messages: messages.slice(0, 3), tools: [READ_TOOL] }).catch((e: unknown) => e);
    expect((unpaired as APIError).status).toBe(400);
  });

  it('streams the same answer as chunks, with usage when asked, ending with [DONE]', async () => {
    const client = openai(t.model);
    const ask = { model: MODEL, messages: [{ role: 'user' as const, content: 'Run.\n@tool Read {"path":"x"}' }], tools: [READ_TOOL] };
    const whole = await client.chat.completions.create(ask);
    const stream = await client.chat.completions.create({ ...ask, stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    const args = chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls?.map((tc) => tc.function?.arguments ?? '') ?? [])).join('');
    expect(JSON.parse(args)).toEqual({ path: 'x' });
    expect(chunks.some((c) => c.choices.some((ch) => (ch.delta.tool_calls?.[0]?.id ?? '') === whole.choices[0]?.message.tool_calls?.[0]?.id))).toBe(true);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(whole.usage?.completion_tokens);
    expect(t.model.log.entries()[1]?.rawBody).toContain('"stream":true');
    // The SDK's own stream helper reassembles the same message.
    const runner = client.chat.completions.stream({ model: MODEL, messages: [{ role: 'user', content: 'Hi.\n@reply streamed text' }] });
    expect((await runner.finalChatCompletion()).choices[0]?.message.content).toBe('streamed text');
  });

  it('reports a shared prefix as cached_tokens, as siblings forked from one conversation see it', async () => {
    const client = openai(t.model);
    const prefix: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: filler(3000) },
      { role: 'user', content: 'Context.\n@reply noted' },
      { role: 'assistant', content: 'noted' },
    ];
    const sibling = (n: number) => client.chat.completions.create({ model: MODEL, messages: [...prefix, { role: 'user', content: `Sibling ${n}.\n@reply ${n}` }] });
    const a = await sibling(1);
    const b = await sibling(2);
    expect(a.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    const cached = b.usage?.prompt_tokens_details?.cached_tokens ?? 0;
    expect(cached).toBeGreaterThanOrEqual(3000);
    expect(cached).toBeLessThan(b.usage?.prompt_tokens ?? 0);
    const [ea, eb] = t.model.log.entries();
    expect(eb?.usage?.cache_read_input_tokens).toBe(cached);
    expect(ea?.rawBody.slice(0, ea.rawBody.indexOf('Sibling'))).toBe(eb?.rawBody.slice(0, eb.rawBody.indexOf('Sibling')));
  });

  it('answers errors in OpenAI shape: scripted failures, unknown instructions, bad bodies, mid-stream faults', async () => {
    const client = openai(t.model);
    const fail = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x\n@fail 529 @reply ok' }] }).catch((e: unknown) => e);
    expect(fail).toBeInstanceOf(APIError);
    expect((fail as APIError).status).toBe(529);
    expect((fail as APIError).type).toBe('server_error');
    const bad = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: '@nonsense' }] }).catch((e: unknown) => e);
    expect((bad as APIError).status).toBe(400);
    expect((bad as APIError).type).toBe('invalid_request_error');
    expect((bad as APIError).message).toContain('@nonsense');
    const raw = await fetch(`${t.model.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: '{"model":"m","messages":[]}' });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toEqual({ error: { message: expect.stringContaining('messages') as unknown, type: 'invalid_request_error', param: null, code: null } });
    t.model.faults.add({ kind: 'stream_error', afterEvents: 2 });
    const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: '@reply a long enough answer' }], stream: true });
    const failed = await (async () => {
      for await (const _ of stream) void _;
    })().catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(APIError);
    expect(t.model.log.entries().at(-1)?.outcome).toBe('fault');
  });
});
