/**
 * A fork's `modelQueue`: its model calls, and its sub-agents', are scheduled on that queue and
 * served by a model worker there (src/worker/worker.ts `createModelWorker`), while its tools
 * stay on the workflow's queue. A fork without one calls the model on its own queue.
 */
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { createModelClient } from '../../src/worker/model-client';
import { createModelWorker } from '../../src/worker/worker';
import { startHarness, type Harness } from '../kit/env';
import { agentStep, script, toolStep } from '../kit/tree';

let h: Harness;
let native: NativeConnection;
let modelWorker: Worker;
let running: Promise<void>;
let modelQueue: string;

beforeAll(async () => {
  h = await startHarness({ name: 'model-queue' });
  modelQueue = `${h.taskQueue}-model`;
  native = await NativeConnection.connect({ address: h.env.address });
  modelWorker = await createModelWorker({
    connection: native,
    client: h.client,
    namespace: h.env.namespace,
    taskQueue: modelQueue,
    anthropic: createModelClient({ apiKey: 'test-key', baseURL: h.model.url }),
    workspaceRoot: h.workspaceRoot,
    identity: 'the-model-worker',
  });
  running = modelWorker.run();
});
afterAll(async () => {
  modelWorker?.shutdown();
  await running;
  await native?.close();
  await h?.close();
});

/** Each scheduled activity of a run: its type, the queue it was put on and who ran it. */
async function activitiesOf(agentId: string): Promise<{ type: string; queue: string; by: string }[]> {
  const events: temporal.api.history.v1.IHistoryEvent[] = (await h.client.workflow.getHandle(agentId).fetchHistory()).events ?? [];
  const started = new Map<string, string>();
  for (const e of events) {
    const a = e.activityTaskStartedEventAttributes;
    if (a) started.set(String(a.scheduledEventId), a.identity ?? '');
  }
  return events
    .filter((e) => e.activityTaskScheduledEventAttributes)
    .map((e) => {
      const a = e.activityTaskScheduledEventAttributes!;
      return { type: a.activityType?.name ?? '', queue: a.taskQueue?.name ?? '', by: started.get(String(e.eventId)) ?? '' };
    });
}

test('model calls of a fork and its sub-agent go to the model queue and its worker; its Bash call stays on the workflow queue', async () => {
  const prompt = script(
    'Delegate, then run a command.',
    agentStep({ description: 'helper', subagent_type: 'general-purpose', prompt: 'Help.\n@reply helped' }),
    toolStep('Bash', { command: 'echo hi' }),
    '@reply done',
  );
  const result = await h.forkflow.startAgent({ agentId: 'mq-parent', prompt, modelQueue, subAgents: { forkGate: false } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'done' });
  const child = result.children?.[0]?.agentId;
  expect(child).toBeDefined();
  expect(await h.forkflow.status(child!)).toMatchObject({ state: 'completed' });

  for (const agentId of ['mq-parent', child!]) {
    const calls = (await activitiesOf(agentId)).filter((a) => a.type === 'callModel');
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call).toEqual({ type: 'callModel', queue: modelQueue, by: 'the-model-worker' });
  }
  const tools = (await activitiesOf('mq-parent')).filter((a) => a.type === 'runTool');
  expect(tools.map((t) => t.queue)).toEqual([h.taskQueue]);
});

test('a fork without a model queue calls the model on its own queue', async () => {
  const result = await h.forkflow.startAgent({ agentId: 'mq-plain', prompt: '@reply plain' }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'plain' });
  const calls = (await activitiesOf('mq-plain')).filter((a) => a.type === 'callModel');
  expect(calls.map((c) => c.queue)).toEqual([h.taskQueue]);
  expect(calls[0]!.by).not.toBe('the-model-worker');
});
