/**
 * Activities that can outlast their heartbeat timeout beat before their first I/O: the model
 * activity is already heartbeating while it fetches the conversation (a large one can take
 * longer than the timeout). The conversation source below answers only after it has seen a
 * heartbeat, so an activity that starts beating after the fetch never finishes.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ConversationSource } from '../../../src/activities/conversation';
import { createModelActivities } from '../../../src/activities/model/call-model';
import type { ModelCallInput, ModelCallResult } from '../../../src/shared/wire/activity-io';

function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

test('the model activity heartbeats while it is still fetching the conversation', async () => {
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 100 });
  const beats: unknown[] = [];
  const firstBeat = gate();
  env.on('heartbeat', (details: unknown) => {
    beats.push(details);
    firstBeat.open();
  });
  const fetched: string[] = [];
  const conversations = {
    async context() {
      await firstBeat.promise;
      fetched.push('context');
      return { model: 'claude-test', system: 'sys', tools: [], maxTokens: 100, cacheKeyHash: 'h' };
    },
    async forModelCall() {
      await firstBeat.promise;
      fetched.push('messages');
      return [{ role: 'user', content: 'hello' }];
    },
    remember: () => undefined,
  } as unknown as ConversationSource;
  const anthropic = {
    messages: {
      create: () => Promise.resolve({ content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', model: 'claude-test', usage: { input_tokens: 3, output_tokens: 1 } }),
    },
  } as unknown as Anthropic;
  const activities = createModelActivities({ anthropic, conversations, stream: false });
  const input = { run: { workflowId: 'w', runId: 'r' }, agentId: 'a', turn: 1, messageCount: 1, digest: 'd', contextKey: 'k' } as ModelCallInput;

  const result: ModelCallResult = await env.run((i: ModelCallInput) => activities.callModel(i), input);
  expect(result.message).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'hi' }] });
  expect(fetched.sort()).toEqual(['context', 'messages']);
  // The first beat came while the conversation was being fetched, and says so.
  expect(beats[0]).toMatchObject({ turn: 1, phase: 'fetching conversation' });
});
