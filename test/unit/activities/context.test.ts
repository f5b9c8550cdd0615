/**
 * The model activities' side of context management, against the offline model through the
 * real SDK (in the SDK's mock activity environment): a request over the window or the
 * compaction threshold is not sent, near a limit the provider's count decides, a provider
 * refusal becomes `ModelPromptTooLong`, provider edits go out with their beta headers and the
 * reply's compaction pass is billed and counted apart; and `compactContext` summarises the
 * older turns from the agent's cache, hands a kept summary back to a retry (billed once), and
 * charges it at the tree's root by its number.
 */
import { join } from 'node:path';
import { APIError } from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ConversationSource } from '../../../src/activities/conversation';
import { createModelActivities } from '../../../src/activities/model/call-model';
import { createCompactionActivities } from '../../../src/activities/model/compact';
import { classifyModelError } from '../../../src/activities/model/errors';
import { FileResponseStore } from '../../../src/activities/model/response-store';
import { openPrivateStore } from '../../../src/gateway/private-dir';
import type { LedgerClient } from '../../../src/activities/tree';
import { startOfflineModel, type OfflineModel } from '../../../src/offline';
import type { MessageParam } from '../../../src/shared/messages-api/anthropic';
import type { CompactionCallInput, CompactionCallResult, ModelCallInput, ModelCallResult } from '../../../src/shared/wire/activity-io';
import { COMPACT_BETA } from '../../../src/shared/context/edits';
import type { ChargeRequest } from '../../../src/shared/tree/tree-ledger-requests';
import { createModelClient } from '../../../src/worker/model-client';
import { tempDir } from '../../kit/env';

const MODEL = 'claude-sonnet-4-6';
/** About `tokens` tokens by the shared estimate (4 bytes a token). */
const pad = (tokens: number, seed: string) => `${seed} ${'x'.repeat(tokens * 4 - seed.length - 1)}`;

let model: OfflineModel;
beforeAll(async () => {
  model = await startOfflineModel({ contextWindow: 4_000 });
});
afterAll(() => model.close());
beforeEach(() => model.log.clear());

function conversations(messages: MessageParam[]): ConversationSource {
  return {
    context: () => Promise.resolve({ model: MODEL, system: 'You read notes.', tools: [], maxTokens: 200, cacheKeyHash: 'h' }),
    forModelCall: (i: ModelCallInput) => Promise.resolve(messages.slice(0, i.messageCount)),
    remember: () => undefined,
  } as unknown as ConversationSource;
}

/** A script of `turns` reads and a reply, `turns` of them taken, each result about `tokens` tokens. */
const conversation = (turns: number, tokens: number): MessageParam[] => {
  const out: MessageParam[] = [{ role: 'user', content: `Keep notes.\nFact: the tide turns at nine\n@repeat ${turns + 1} @tool Read {"file_path":"n"}\n@reply done` }];
  for (let i = 0; i < turns; i++) {
    out.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'Read', input: { file_path: 'n' } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: pad(tokens, `r${i}`) }] });
  }
  return out;
};

const info = (attempt = 1, activityId = '7') => ({ activityId, attempt, workflowExecution: { workflowId: 'wf', runId: 'run-1' }, namespace: 'default' });
const input = (messageCount: number, context: ModelCallInput['context']): ModelCallInput => ({ run: { workflowId: 'wf', runId: 'run-1' }, agentId: 'a', turn: 5, messageCount, digest: 'd', contextKey: 'k', ...(context ? { context } : {}) });
const anthropic = () => createModelClient({ apiKey: 'k', baseURL: model.url });
const sentRequests = () => model.log.entries().filter((e) => e.path === '/v1/messages');

async function failureOf(p: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApplicationFailure) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

test("the provider's `prompt is too long` is its own non-retryable failure, with the counts", () => {
  const err = APIError.generate(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 212345 tokens > 200000 maximum' } }, undefined, new Headers());
  const failure = classifyModelError(err);
  expect(failure).toMatchObject({ type: 'ModelPromptTooLong', nonRetryable: true, message: 'prompt is too long: 212345 tokens > 200000 maximum' });
  expect(failure.details?.[0]).toMatchObject({ status: 400, tokens: 212_345, window: 200_000 });
  const other = classifyModelError(APIError.generate(400, { type: 'error', error: { type: 'invalid_request_error', message: 'messages: bad' } }, undefined, new Headers()));
  expect(other.type).toBe('ModelInvalidRequest');
});

test('a request over the window, or over the compaction threshold, is not sent; near a limit the provider counts it', async () => {
  const messages = conversation(6, 600);
  const activities = createModelActivities({ anthropic: anthropic(), conversations: conversations(messages), stream: false });
  const run = (i: ModelCallInput) => new MockActivityEnvironment(info()).run<[ModelCallInput], ModelCallResult, (x: ModelCallInput) => Promise<ModelCallResult>>((x) => activities.callModel(x), i);

  const tooLong = await failureOf(run(input(messages.length, { window: 3_000 })));
  expect(tooLong).toMatchObject({ type: 'ModelPromptTooLong', nonRetryable: true });
  expect(tooLong.message).toMatch(/^prompt is too long: \d+ tokens > 3000 maximum \(model call of turn 5 not sent/);
  const over = await failureOf(run(input(messages.length, { window: 10_000, compactAbove: 2_000 })));
  expect(over).toMatchObject({ type: 'ContextOverThreshold', nonRetryable: true });
  expect(sentRequests()).toEqual([]);
  // Both were near or over a limit: the provider's count decided.
  expect(model.log.entries().filter((e) => e.path === '/v1/messages/count_tokens')).toHaveLength(2);

  // The same request from its latest boundary on fits, and goes out with what it sends measured.
  const fits = await run(input(messages.length, { window: 3_000, from: 7 }));
  expect(fits.requestTokens).toBeGreaterThan(1_000);
  expect(sentRequests()).toHaveLength(1);
  expect((sentRequests()[0]!.body as { messages: unknown[] }).messages).toHaveLength(messages.length - 7);
});

test("the provider's compaction: edits and beta header go out, the summarising pass is billed and counted apart", async () => {
  const big = await startOfflineModel();
  try {
    const messages: MessageParam[] = [
      { role: 'user', content: 'Go.\n@tool Read {"file_path":"n"}\n@reply two' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'r', name: 'Read', input: { file_path: 'n' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'r', content: pad(52_000, 'b') }] },
    ];
    const activities = createModelActivities({ anthropic: createModelClient({ apiKey: 'k', baseURL: big.url }), conversations: conversations(messages), stream: true });
    const edits = [{ type: 'compact_20260112' as const, trigger: { type: 'input_tokens' as const, value: 50_000 } }];
    const result = await new MockActivityEnvironment(info()).run<[ModelCallInput], ModelCallResult, (x: ModelCallInput) => Promise<ModelCallResult>>((x) => activities.callModel(x), input(3, { window: 200_000, edits }));
    const sent = big.log.entries().find((e) => e.path === '/v1/messages')!;
    expect(sent.headers['anthropic-beta']).toBe(COMPACT_BETA);
    expect(result.message.content[0]).toMatchObject({ type: 'compaction' });
    expect(result.compaction!.usage.outputTokens).toBeGreaterThan(0);
    const reported = sent.usage!;
    // Billed: the reply's pass (the top-level usage) plus the summarising pass.
    expect(result.usage.outputTokens).toBe(reported.output_tokens + result.compaction!.usage.outputTokens);
    expect(result.compaction!.tokensBefore).toBeGreaterThan(52_000);
  } finally {
    await big.close();
  }
});

test('compactContext summarises the older turns from the cache, and a retry gets the kept summary, billed and charged once', async () => {
  const messages = conversation(6, 300);
  const charges: ChargeRequest[] = [];
  const ledger = { charge: (_root: string, req: ChargeRequest) => Promise.resolve(charges.push(req) > 0) } as unknown as LedgerClient;
  const responses = new FileResponseStore(openPrivateStore(join(tempDir('store'), 'responses')));
  const compaction = createCompactionActivities({ anthropic: anthropic(), conversations: conversations(messages), responses, ledger });
  const call: CompactionCallInput = {
    call: { ...input(messages.length, { window: 4_000 }), budget: { left: 1_000_000, ledger: { rootId: 'root', toolUses: 0 } } },
    keepFrom: 11,
    compaction: 2,
    maxTokens: 400,
  };
  const first = await new MockActivityEnvironment(info(1)).run<[CompactionCallInput], CompactionCallResult, (x: CompactionCallInput) => Promise<CompactionCallResult>>((x) => compaction.compactContext(x), call);
  expect(first.summary.split('\n')[0]).toBe('Keep notes.');
  expect(first.summary).toContain('Fact: the tide turns at nine');
  // Five reads were summarised (messages [0, 11)): two are left, then the reply.
  expect(first.summary).toContain('Left to do:\n@repeat 2 @tool Read {"file_path":"n"}\n@reply done');
  const sent = sentRequests();
  expect(sent).toHaveLength(1);
  const body = sent[0]!.body as { messages: MessageParam[] };
  expect(body.messages).toHaveLength(11);
  expect(JSON.stringify(body.messages.at(-1))).toContain('forkflow-compaction-request');

  const retried = await new MockActivityEnvironment(info(2)).run((x: CompactionCallInput) => compaction.compactContext(x), call);
  expect(retried).toEqual(first);
  expect(sentRequests()).toHaveLength(1);
  // Charged at the root by its number, on each attempt (the ledger takes a number once).
  expect(charges.map((c) => [c.agentId, c.compaction, c.usage])).toEqual([
    ['a', 2, first.usage],
    ['a', 2, first.usage],
  ]);
});
