/**
 * Exactly-once model billing: a response that arrived is kept until its turn is recorded, a
 * retried attempt of the same call gets it back without asking the provider, and the store
 * forgets what is recorded or old. The model activity runs in the SDK's mock activity
 * environment; the provider here counts calls and fails the test if asked twice.
 */
import { readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ConversationSource } from '../../../src/activities/conversation';
import { createModelActivities } from '../../../src/activities/model/call-model';
import { FileResponseStore, type CallKey } from '../../../src/activities/model/response-store';
import { openPrivateStore } from '../../../src/gateway/private-dir';
import type { ModelCallInput, ModelCallResult } from '../../../src/shared/wire/activity-io';
import { tempDir } from '../../kit/env';

const key = (over: Partial<CallKey> = {}): CallKey => ({ namespace: 'default', workflowId: 'wf', runId: 'run-1', activityId: '3', turn: 2, ...over });
/** A fresh private store directory. */
const privateDir = (name = 'store') => openPrivateStore(tempDir(name));
const DIGEST = 'a'.repeat(64);
const result = (text: string): ModelCallResult => ({
  message: { role: 'assistant', content: [{ type: 'text', text }] },
  stopReason: 'end_turn',
  usage: { inputTokens: 10, outputTokens: 2, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
  model: 'claude-test',
});

test('a kept response comes back for the same call and the same request only', async () => {
  const store = new FileResponseStore(privateDir());
  await store.put(key(), result('kept'), DIGEST);
  expect(await store.get(key(), DIGEST)).toEqual(result('kept'));
  expect(await store.get(key(), 'b'.repeat(64))).toBeUndefined();
  expect(await store.get(key({ activityId: '4' }), DIGEST)).toBeUndefined();
  expect(await store.get(key({ runId: 'run-2' }), DIGEST)).toBeUndefined();
  expect(await store.get(key({ workflowId: 'other' }), DIGEST)).toBeUndefined();
  expect(await store.get(key({ turn: 3 }), DIGEST)).toBeUndefined();
});

test('settling a turn drops the run’s earlier turns and keeps this one and other runs', async () => {
  const store = new FileResponseStore(privateDir());
  await store.put(key({ turn: 1, activityId: '1' }), result('one'), DIGEST);
  await store.put(key({ turn: 2, activityId: '3' }), result('two'), DIGEST);
  await store.put(key({ runId: 'run-2', turn: 1, activityId: '1' }), result('other run'), DIGEST);
  await store.settle(key({ turn: 2, activityId: '3' }));
  expect(await store.get(key({ turn: 1, activityId: '1' }), DIGEST)).toBeUndefined();
  expect(await store.get(key({ turn: 2, activityId: '3' }), DIGEST)).toEqual(result('two'));
  expect(await store.get(key({ runId: 'run-2', turn: 1, activityId: '1' }), DIGEST)).toEqual(result('other run'));
});

test('an unreadable or foreign entry is no response; the sweep drops the runs that wrote nothing for the maximum age', async () => {
  const opened = privateDir();
  const dir = opened.dir;
  const store = new FileResponseStore(opened, { maxAgeMs: 60_000 });
  await store.put(key(), result('kept'), DIGEST);
  const [runDir] = readdirSync(dir).filter((n) => n !== 'store.key');
  const [file] = readdirSync(join(dir, runDir!));
  writeFileSync(join(dir, runDir!, file!), '{"v":1,"key":');
  expect(await store.get(key(), DIGEST)).toBeUndefined();
  writeFileSync(join(dir, runDir!, file!), JSON.stringify({ v: 1, key: { ...key(), activityId: '9' }, result: result('someone else') }));
  expect(await store.get(key(), DIGEST)).toBeUndefined();

  await store.put(key({ runId: 'fresh' }), result('fresh'), DIGEST);
  // A crash between write and rename leaves a temporary file; it goes with its run.
  writeFileSync(join(dir, runDir!, '.left-by-a-crash.tmp'), '{');
  const old = (Date.now() - 120_000) / 1000;
  utimesSync(join(dir, runDir!, file!), old, old);
  // A run whose folder changed lately keeps everything, however old one of its files is.
  expect(await store.sweep()).toBe(0);
  expect(readdirSync(dir)).toHaveLength(3); // two runs and the key file
  // Unchanged for longer than the maximum age: the run's folder goes, its files counted.
  utimesSync(join(dir, runDir!), old, old);
  expect(await store.sweep()).toBe(2);
  expect(readdirSync(dir).sort()).toEqual(expect.arrayContaining(['store.key']));
  expect(readdirSync(dir)).toHaveLength(2);
  expect(await store.get(key({ runId: 'fresh' }), DIGEST)).toEqual(result('fresh'));
});

test('a kept store is swept at once and then every interval, without holding the process open', () => {
  jest.useFakeTimers();
  try {
    const store = new FileResponseStore(privateDir(), { maxAgeMs: 60_000 });
    const sweep = jest.spyOn(store, 'sweep').mockResolvedValue(0);
    const timer = store.keepSwept();
    expect(sweep).toHaveBeenCalledTimes(1);
    expect(timer.hasRef()).toBe(false);
    // The interval defaults to the maximum age when that is under an hour.
    jest.advanceTimersByTime(59_999);
    expect(sweep).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(1);
    expect(sweep).toHaveBeenCalledTimes(2);
    jest.advanceTimersByTime(120_000);
    expect(sweep).toHaveBeenCalledTimes(4);
    clearInterval(timer);
  } finally {
    jest.useRealTimers();
  }
});

function conversations(): ConversationSource {
  return {
    context: () => Promise.resolve({ model: 'claude-test', system: 'sys', tools: [], maxTokens: 100, cacheKeyHash: 'h' }),
    forModelCall: () => Promise.resolve([{ role: 'user', content: 'hello' }]),
    remember: () => undefined,
  } as unknown as ConversationSource;
}

function provider(reply: () => unknown): { anthropic: Anthropic; calls: () => number } {
  let calls = 0;
  const anthropic = {
    messages: {
      create: () => {
        calls++;
        return Promise.resolve(reply());
      },
    },
  } as unknown as Anthropic;
  return { anthropic, calls: () => calls };
}

const input = { run: { workflowId: 'wf', runId: 'run-1' }, agentId: 'a', turn: 2, messageCount: 3, digest: 'd', contextKey: 'k' } as ModelCallInput;
const info = (attempt: number) => ({ activityId: '3', attempt, workflowExecution: { workflowId: 'wf', runId: 'run-1' }, namespace: 'default' });

test('a retried attempt after the response arrived gets the kept response; the provider is asked once', async () => {
  const store = new FileResponseStore(privateDir());
  const p = provider(() => ({ content: [{ type: 'text', text: 'paid once' }], stop_reason: 'end_turn', model: 'claude-test', usage: { input_tokens: 10, output_tokens: 2 } }));
  const activities = createModelActivities({ anthropic: p.anthropic, conversations: conversations(), stream: false, responses: store });
  const first: ModelCallResult = await new MockActivityEnvironment(info(1)).run((i: ModelCallInput) => activities.callModel(i), input);
  // The first attempt's worker died before the result reached history: the retry asks again.
  const second: ModelCallResult = await new MockActivityEnvironment(info(2)).run((i: ModelCallInput) => activities.callModel(i), input);
  expect(second).toEqual(first);
  expect(second.message.content).toEqual([{ type: 'text', text: 'paid once' }]);
  expect(p.calls()).toBe(1);
  // The next turn of the run settles this one: its entry is gone.
  await new MockActivityEnvironment({ ...info(1), activityId: '5' }).run((i: ModelCallInput) => activities.callModel(i), { ...input, turn: 3 });
  expect(readdirSync(store.dir).flatMap((run) => (run === 'store.key' ? [] : readdirSync(join(store.dir, run)))).filter((f) => f.startsWith('2-'))).toEqual([]);
  expect(p.calls()).toBe(2);
});

test('a call that failed keeps no response: its retry asks the provider again', async () => {
  const store = new FileResponseStore(privateDir());
  let fail = true;
  const p = provider(() => {
    if (fail) throw new Error('connection reset mid-response');
    return { content: [{ type: 'text', text: 'second try' }], stop_reason: 'end_turn', model: 'claude-test', usage: { input_tokens: 10, output_tokens: 2 } };
  });
  const activities = createModelActivities({ anthropic: p.anthropic, conversations: conversations(), stream: false, responses: store });
  await expect(new MockActivityEnvironment(info(1)).run((i: ModelCallInput) => activities.callModel(i), input)).rejects.toThrow('connection reset');
  expect(readdirSync(store.dir).flatMap((run) => (run === 'store.key' ? [] : readdirSync(join(store.dir, run)))).filter((f) => !f.includes('.request'))).toEqual([]);
  fail = false;
  const second: ModelCallResult = await new MockActivityEnvironment(info(2)).run((i: ModelCallInput) => activities.callModel(i), input);
  expect(second.message.content).toEqual([{ type: 'text', text: 'second try' }]);
  expect(p.calls()).toBe(2);
});

test('a store that cannot be written costs no turn: the response is still returned', async () => {
  const opened = privateDir();
  const store = new FileResponseStore(opened);
  // The directory is gone and a file stands in its place: nothing can be written.
  rmSync(opened.dir, { recursive: true });
  writeFileSync(opened.dir, '');
  const p = provider(() => ({ content: [{ type: 'text', text: 'still here' }], stop_reason: 'end_turn', model: 'claude-test', usage: { input_tokens: 1, output_tokens: 1 } }));
  const activities = createModelActivities({ anthropic: p.anthropic, conversations: conversations(), stream: false, responses: store });
  const out: ModelCallResult = await new MockActivityEnvironment(info(1)).run((i: ModelCallInput) => activities.callModel(i), input);
  expect(out.message.content).toEqual([{ type: 'text', text: 'still here' }]);
});

test('an attempt leaves its request: the next attempt sends the same request without reading the conversation', async () => {
  const store = new FileResponseStore(privateDir());
  const bodies: unknown[] = [];
  let fail = true;
  const anthropic = {
    messages: {
      create: (body: unknown) => {
        bodies.push(body);
        if (fail) return Promise.reject(new Error('connection reset'));
        return Promise.resolve({ content: [{ type: 'text', text: 'answered' }], stop_reason: 'end_turn', model: 'claude-test', usage: { input_tokens: 1, output_tokens: 1 } });
      },
    },
  } as unknown as Anthropic;
  await expect(new MockActivityEnvironment(info(1)).run((i: ModelCallInput) => createModelActivities({ anthropic, conversations: conversations(), stream: false, responses: store }).callModel(i), input)).rejects.toThrow('connection reset');
  fail = false;
  // The retry runs on a worker that cannot read the conversation now (the workflow is still on the dead worker's queue).
  const unreadable = { context: () => Promise.reject(new Error('no query needed')), forModelCall: () => Promise.reject(new Error('no query needed')), remember: () => undefined } as unknown as ConversationSource;
  const out: ModelCallResult = await new MockActivityEnvironment(info(2)).run((i: ModelCallInput) => createModelActivities({ anthropic, conversations: unreadable, stream: false, responses: store }).callModel(i), input);
  expect(out.message.content).toEqual([{ type: 'text', text: 'answered' }]);
  expect(bodies).toHaveLength(2);
  expect(JSON.stringify(bodies[1])).toEqual(JSON.stringify(bodies[0]));
});

test('a worker that starts to stop hands its call back at once, as a retryable failure', async () => {
  const stopping = new AbortController();
  let calling!: () => void;
  const called = new Promise<void>((resolve) => (calling = resolve));
  const anthropic = {
    messages: {
      create: (_body: unknown, opts: { signal: AbortSignal }) => {
        calling();
        return new Promise((_, reject) => opts.signal.addEventListener('abort', () => reject(new Error('aborted'))));
      },
    },
  } as unknown as Anthropic;
  const activities = createModelActivities({ anthropic, conversations: conversations(), stream: false, responses: new FileResponseStore(privateDir()), stopping: stopping.signal });
  const running = new MockActivityEnvironment(info(1)).run((i: ModelCallInput) => activities.callModel(i), input);
  await called;
  stopping.abort();
  const err = await running.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ApplicationFailure);
  expect(err).toMatchObject({ type: 'WorkerStopping', nonRetryable: false });
});
