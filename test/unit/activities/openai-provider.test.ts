/**
 * The model activity on an `openai-compatible` provider: the agent's Messages conversation
 * goes out as Chat Completions to the offline model's second wire and comes back as a
 * Messages reply, streamed and not, with tool calls, tool results, images and cache reads
 * (`cached_tokens` → `cacheReadInputTokens`). Unknown providers fail the call non-retryably.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { MockActivityEnvironment } from '@temporalio/testing';
import type OpenAI from 'openai';
import type { ConversationSource } from '../../../src/activities/conversation';
import { createModelActivities } from '../../../src/activities/model/call-model';
import { toChatRequest, TOOL_ERROR_PREFIX } from '../../../src/activities/model/providers/openai-request';
import { startOfflineModel, type OfflineModel } from '../../../src/offline';
import type { MessageParam, ToolDefinition } from '../../../src/shared/messages-api/anthropic';
import type { ModelCallInput, ModelCallResult } from '../../../src/shared/wire/activity-io';
import type { RequestContext } from '../../../src/shared/wire/messages';
import { createProviderClients } from '../../../src/worker/providers';
import { filler } from '../offline/helpers';
import { png } from '../../kit/media';

const READ: ToolDefinition = { name: 'Read', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } };
// A real image: the request is checked against the API's image limits before it is sent.
const PNG = png(2, 2).toString('base64');

function conversationsOf(context: RequestContext, messages: MessageParam[]): ConversationSource {
  return { context: () => Promise.resolve(context), forModelCall: () => Promise.resolve(messages), remember: () => undefined } as unknown as ConversationSource;
}

const input = (turn: number, provider = 'oai'): ModelCallInput => ({ run: { workflowId: 'w', runId: 'r' }, agentId: 'a', turn, messageCount: 1, digest: 'd', contextKey: 'k', provider });

describe('model activity: openai-compatible provider', () => {
  let model: OfflineModel;
  beforeEach(async () => {
    model = await startOfflineModel();
  });
  afterEach(() => model.close());

  const run = async (messages: MessageParam[], opts: { stream?: boolean; system?: string; provider?: string } = {}): Promise<ModelCallResult> => {
    const env = { TEST_OAI_KEY: 'k' } as NodeJS.ProcessEnv;
    const providers = createProviderClients([{ name: 'oai', kind: 'openai-compatible', baseURL: `${model.url}/v1`, apiKeyEnv: 'TEST_OAI_KEY', models: ['gpt-4.1-mini'], aliases: {} }], {} as Anthropic, env);
    const context: RequestContext = { model: 'gpt-4.1-mini', system: opts.system ?? 'You help.', tools: [READ], maxTokens: 1000, cacheKeyHash: 'h' };
    const activities = createModelActivities({ anthropic: {} as Anthropic, providers, conversations: conversationsOf(context, messages), stream: opts.stream, liveStream: { enabled: false } });
    return new MockActivityEnvironment().run((i: ModelCallInput) => activities.callModel(i), input(1, opts.provider));
  };

  it.each([true, false])('runs a tool round and reads the results back (stream: %s)', async (stream) => {
    const script = 'Inspect.\n@tool Read {"path":"a.txt"}\n@reply seen';
    const first = await run([{ role: 'user', content: script }], { stream });
    expect(first.stopReason).toBe('tool_use');
    const use = first.message.content[0] as { type: string; id: string; name: string; input: unknown };
    expect(use).toMatchObject({ type: 'tool_use', name: 'Read', input: { path: 'a.txt' } });
    expect(first.model).toBe('gpt-4.1-mini');
    const entry = model.log.entries()[0];
    expect(entry?.path).toBe('/v1/chat/completions');
    expect(entry?.stream).toBe(stream);
    if (stream) expect((entry?.body as { stream_options?: unknown }).stream_options).toEqual({ include_usage: true });
    // The usage the activity reports is what the emulator accounted (the cache reads as reads).
    expect(first.usage.inputTokens + first.usage.cacheReadInputTokens).toBe((entry?.usage?.input_tokens ?? 0) + (entry?.usage?.cache_creation_input_tokens ?? 0) + (entry?.usage?.cache_read_input_tokens ?? 0));
    expect(first.usage.outputTokens).toBe(entry?.usage?.output_tokens);
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } } as const;
    const second = await run(
      [
        { role: 'user', content: script },
        first.message,
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'contents' }, image] }] },
      ],
      { stream },
    );
    expect(second.message.content).toEqual([{ type: 'text', text: 'seen' }]);
    expect(second.stopReason).toBe('end_turn');
    const sent = model.log.entries()[1]?.body as { messages: { role: string; content: unknown; tool_call_id?: string }[] };
    expect(sent.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(sent.messages[3]).toMatchObject({ tool_call_id: use.id, content: 'contents' });
    expect(sent.messages[4]?.content).toEqual([{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }]);
  });

  it('reports a cached prefix as cache reads: siblings send byte-identical prefixes', async () => {
    const system = filler(3000);
    const shared: MessageParam[] = [{ role: 'user', content: 'Context.\n@reply noted' }, { role: 'assistant', content: 'noted' }];
    await run([...shared, { role: 'user', content: 'One.\n@reply 1' }], { system });
    const b = await run([...shared, { role: 'user', content: 'Two.\n@reply 2' }], { system });
    expect(b.usage.cacheReadInputTokens).toBeGreaterThanOrEqual(3000);
    expect(b.usage.cacheCreationInputTokens).toBe(0);
    const [ra, rb] = model.log.entries().map((e) => e.rawBody);
    const cut = (raw = '') => raw.slice(0, raw.indexOf('One.') >= 0 ? raw.indexOf('One.') : raw.indexOf('Two.'));
    expect(cut(ra)).toBe(cut(rb));
  });

  it('fails a call naming an unknown provider without calling anything, and a 400 without retrying', async () => {
    await expect(run([{ role: 'user', content: '@reply x' }], { provider: 'nope' })).rejects.toMatchObject({ type: 'ModelProviderUnknown', nonRetryable: true });
    expect(model.log.entries()).toHaveLength(0);
    await expect(run([{ role: 'user', content: '@nonsense' }])).rejects.toMatchObject({ type: 'ModelInvalidRequest', nonRetryable: true });
    model.faults.add({ kind: 'status', status: 529 });
    await expect(run([{ role: 'user', content: '@reply x' }])).rejects.toMatchObject({ type: 'ModelOverloaded', nonRetryable: false });
  });
});

describe('Messages → Chat Completions request', () => {
  it('restates system, tools, tool choice, errors and stop sequences, and types as the SDK declares them', () => {
    const req: OpenAI.Chat.ChatCompletionCreateParams = toChatRequest(
      {
        model: 'm',
        max_tokens: 50,
        system: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'b' }],
        tools: [{ ...READ, cache_control: { type: 'ephemeral' } }],
        tool_choice: { type: 'any' },
        stop_sequences: ['END'],
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }, { type: 'tool_use', id: 't1', name: 'Read', input: { path: 'x' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'no such file', is_error: true }, { type: 'text', text: 'then?' }] },
        ],
      },
      false,
    );
    expect(req).toEqual({
      model: 'm',
      max_completion_tokens: 50,
      messages: [
        { role: 'system', content: 'a\n\nb' },
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'Read', arguments: '{"path":"x"}' } }] },
        { role: 'tool', tool_call_id: 't1', content: `${TOOL_ERROR_PREFIX}no such file` },
        { role: 'user', content: 'then?' },
      ],
      tools: [{ type: 'function', function: { name: 'Read', description: 'Read a file', parameters: READ.input_schema } }],
      tool_choice: 'required',
      stop: ['END'],
    });
    expect(() => toChatRequest({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }], mcp_servers: [{ type: 'url' }] }, false)).toThrow('mcp_servers');
  });

  it("sends an agent's effort as reasoning_effort (max as xhigh), and nothing without one", () => {
    const body = { model: 'm', max_tokens: 5, messages: [{ role: 'user' as const, content: 'x' }] };
    expect(toChatRequest(body, false)).not.toHaveProperty('reasoning_effort');
    expect(toChatRequest({ ...body, output_config: { effort: 'medium' } }, false)).toMatchObject({ reasoning_effort: 'medium' });
    expect(toChatRequest({ ...body, output_config: { effort: 'max' } }, false)).toMatchObject({ reasoning_effort: 'xhigh' });
  });
});
