/**
 * Reasoning across the two wires (issue 43). Out: an agent's effort, else its thinking budget,
 * becomes `reasoning_effort`. Back: an OpenAI-compatible server's `reasoning_content` (or
 * `reasoning`) becomes an unsigned thinking block of the reply, streamed as thinking deltas,
 * instead of being dropped; it never goes back to a Chat Completions provider (no such request
 * field) nor to Anthropic (which checks signatures). The offline model's `@think` is the server
 * that reasons: a thinking block on the Messages wire (with thinking on), `reasoning_content`
 * and `reasoning_tokens` on the Chat Completions wire.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { MockActivityEnvironment } from '@temporalio/testing';
import type OpenAI from 'openai';
import type { ConversationSource } from '../../../src/activities/conversation';
import { createModelActivities } from '../../../src/activities/model/call-model';
import { toChatRequest } from '../../../src/activities/model/providers/openai-request';
import { ChunkTranslator, fromChatCompletion } from '../../../src/activities/model/providers/openai-response';
import { withoutUnsignedThinking } from '../../../src/activities/model/providers/reasoning';
import { startOfflineModel, type OfflineModel } from '../../../src/offline';
import type { MessageParam, MessagesRequest } from '../../../src/shared/messages-api/anthropic';
import type { ModelCallInput, ModelCallResult } from '../../../src/shared/wire/activity-io';
import type { RequestContext } from '../../../src/shared/wire/messages';
import { createProviderClients } from '../../../src/worker/providers';

const base: MessagesRequest = { model: 'o4-mini', max_tokens: 64_000, messages: [{ role: 'user', content: 'hi' }] };

test('effort, else the thinking budget, becomes reasoning_effort; no setting sends none', () => {
  const effortOf = (b: Partial<MessagesRequest>) => (toChatRequest({ ...base, ...b }, false) as { reasoning_effort?: string }).reasoning_effort;
  expect(effortOf({})).toBeUndefined();
  expect(effortOf({ output_config: { effort: 'low' } })).toBe('low');
  expect(effortOf({ output_config: { effort: 'max' } })).toBe('xhigh');
  expect(effortOf({ thinking: { type: 'enabled', budget_tokens: 2_000 } })).toBe('low');
  expect(effortOf({ thinking: { type: 'enabled', budget_tokens: 8_000 } })).toBe('medium');
  expect(effortOf({ thinking: { type: 'enabled', budget_tokens: 32_000 } })).toBe('high');
  expect(effortOf({ thinking: { type: 'disabled' } })).toBeUndefined();
  expect(effortOf({ thinking: { type: 'adaptive' } })).toBeUndefined();
  // The agent's effort is what it asked for: it wins over a budget.
  expect(effortOf({ thinking: { type: 'enabled', budget_tokens: 32_000 }, output_config: { effort: 'low' } })).toBe('low');
  // The thinking setting itself has no Chat Completions field.
  expect(toChatRequest({ ...base, thinking: { type: 'enabled', budget_tokens: 2_000 } }, false)).not.toHaveProperty('thinking');
});

test('reasoning_content (or reasoning) on a completion and on chunks becomes an unsigned thinking block, streamed as thinking deltas', () => {
  const completion = { id: 'c', object: 'chat.completion', created: 0, model: 'deepseek-reasoner', choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: 'four', refusal: null, reasoning_content: 'two plus two' } }] } as unknown as OpenAI.Chat.ChatCompletion;
  expect(fromChatCompletion(completion).content).toEqual([{ type: 'thinking', thinking: 'two plus two', signature: '' }, { type: 'text', text: 'four', citations: null }]);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] }) as unknown as OpenAI.Chat.ChatCompletionChunk;
  const t = new ChunkTranslator();
  const events = [chunk({ role: 'assistant', reasoning: 'two ' }), chunk({ reasoning: 'plus two' }), chunk({ content: 'four' }), chunk({}, 'stop')].flatMap((c) => t.push(c));
  const { message } = t.end();
  expect(message.content).toEqual([{ type: 'thinking', thinking: 'two plus two', signature: '' }, { type: 'text', text: 'four', citations: null }]);
  expect(events.filter((e) => e.type === 'content_block_delta').map((e) => (e as { delta: { type: string } }).delta.type)).toEqual(['thinking_delta', 'thinking_delta', 'text_delta']);
  expect(events.find((e) => e.type === 'content_block_start')).toMatchObject({ index: 0, content_block: { type: 'thinking' } });
});

test('another provider’s reasoning never goes to Anthropic nor back to Chat Completions; signed thinking stays', () => {
  const signed = { type: 'thinking' as const, thinking: 'mine', signature: 'sig' };
  const theirs = { type: 'thinking' as const, thinking: 'theirs', signature: '' };
  const messages: MessageParam[] = [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: [theirs, { type: 'text', text: 'a' }] },
    { role: 'user', content: 'q2' },
    { role: 'assistant', content: [signed, { type: 'text', text: 'b' }] },
    { role: 'user', content: 'q3' },
  ];
  const body = { ...base, messages };
  const out = withoutUnsignedThinking(body);
  expect(out.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'a' }] });
  expect(out.messages[3]).toEqual(messages[3]);
  // A body without any is the same object: Anthropic requests are as they were.
  expect(withoutUnsignedThinking(out)).toBe(out);
  const chat = toChatRequest(body, false);
  expect(JSON.stringify(chat)).not.toContain('theirs');
  expect(JSON.stringify(chat)).not.toContain('reasoning_content');
});

describe('against the offline model', () => {
  let model: OfflineModel;
  beforeEach(async () => {
    model = await startOfflineModel();
  });
  afterEach(() => model.close());

  const run = async (script: string, stream: boolean): Promise<ModelCallResult> => {
    const providers = createProviderClients([{ name: 'oai', kind: 'openai-compatible', baseURL: `${model.url}/v1`, apiKeyEnv: 'K', models: ['o4-mini'], aliases: {} }], {} as Anthropic, { K: 'k' });
    const context: RequestContext = { model: 'o4-mini', system: 'You help.', tools: [], maxTokens: 1000, cacheKeyHash: 'h' };
    const conversations = { context: () => Promise.resolve(context), forModelCall: () => Promise.resolve([{ role: 'user', content: script }]), remember: () => undefined } as unknown as ConversationSource;
    const activities = createModelActivities({ anthropic: {} as Anthropic, providers, conversations, stream, liveStream: { enabled: false } });
    return new MockActivityEnvironment().run((i: ModelCallInput) => activities.callModel(i), { run: { workflowId: 'w', runId: 'r' }, agentId: 'a', turn: 1, messageCount: 1, digest: 'd', contextKey: 'k', provider: 'oai' });
  };

  it.each([true, false])('a reasoning server’s reasoning is kept in the reply (stream: %s), its tokens in the output', async (stream) => {
    const result = await run('Sum.\n@think two plus two is four @reply 4', stream);
    expect(result.message.content).toEqual([{ type: 'thinking', thinking: 'two plus two is four', signature: '' }, { type: 'text', text: '4' }]);
    const entry = model.log.entries()[0]!;
    expect(result.usage.outputTokens).toBe(entry.usage!.output_tokens);
    expect(result.usage.outputTokens).toBeGreaterThan(1);
  });

  it('the offline wires: reasoning_content and reasoning_tokens on Chat Completions; a signed thinking block on Messages only with thinking on', async () => {
    const chat = await fetch(`${model.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'o4-mini', messages: [{ role: 'user', content: '@think because @reply so' }] }) });
    const completion = (await chat.json()) as { choices: { message: Record<string, unknown> }[]; usage: { completion_tokens_details: { reasoning_tokens: number } } };
    expect(completion.choices[0]!.message).toMatchObject({ content: 'so', reasoning_content: 'because' });
    expect(completion.usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    const messages = (thinking?: unknown) =>
      fetch(`${model.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 4096, messages: [{ role: 'user', content: '@think because @reply so' }], ...(thinking ? { thinking } : {}) }) }).then((r) => r.json() as Promise<{ content: { type: string; signature?: string }[] }>);
    expect((await messages()).content.map((b) => b.type)).toEqual(['text']);
    const on = await messages({ type: 'enabled', budget_tokens: 2048 });
    expect(on.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(on.content[0]!.signature).toMatch(/^sig_offline_/);
  });
});
