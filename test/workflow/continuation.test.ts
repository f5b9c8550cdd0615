/**
 * Continuing runs of one agent, on a dev server of its own whose "suggest continue-as-new"
 * threshold is low: the agent continues as new at turn boundaries, each run carries the state
 * (`v: 1`) to the next, and the totals come out as if it had been one run. A carried state
 * that does not parse fails the run at once, non-retryable. Records the replay fixtures of a
 * continued run (the run that continued, and the run it started).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { NativeConnection } from '@temporalio/worker';
import { ForkflowClient } from '../../src/client';
import { CARRIED_STATE_VERSION, parseCarriedState } from '../../src/shared/wire/carried-state';
import type { ForkInputJson } from '../../src/shared/wire/fork-input';
import { prefixRefQuery } from '../../src/shared/wire/messages';
import { startDevServer, type DevServer } from '../../src/worker/dev-server';
import { createModelClient } from '../../src/worker/model-client';
import { createForkflowWorker } from '../../src/worker/worker';
import { startHarness, uniqueTaskQueue, type Harness } from '../kit/env';
import { E, historyEvents, typesOf } from '../kit/history-order';
import { recordCarriedState, recordHistory, startInputOf } from '../kit/histories';
import { script, toolStep } from '../kit/tree';
import { rejectionOf } from '../kit/wait';
import { forkflowConnectionOptions } from '../../src/client/connection-options';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'continuation' });
  writeFileSync(join(h.workspaceRoot, 'small.txt'), 'one\ntwo\n');
});
afterAll(() => h.close());

const TURNS = 16;

test('an agent continued as new carries its state (v: 1) and ends with the totals of one run', async () => {
  const server: DevServer = await startDevServer({ headless: true, logLevel: 'error', dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 60 } });
  const connection = await Connection.connect(forkflowConnectionOptions({ address: server.address }));
  const client = new Client({ connection, namespace: server.namespace });
  const native = await NativeConnection.connect({ address: server.address });
  const taskQueue = uniqueTaskQueue('can');
  const worker = await createForkflowWorker({
    connection: native,
    client,
    namespace: server.namespace,
    taskQueue,
    anthropic: createModelClient({ apiKey: 'k', baseURL: h.model.url }),
    workspaceRoot: h.workspaceRoot,
    workflowBundle: { codePath: h.env.bundlePath },
  });
  try {
    const forkflow = new ForkflowClient(client, { taskQueue });
    const prompt = script('Long.', `@repeat ${TURNS - 1} ${toolStep('Read', { file_path: 'small.txt' })}`, '@reply done');
    const result = await worker.runUntil(forkflow.startAgent({ agentId: 'can-agent', prompt, maxTurns: TURNS + 5 }).then((a) => a.result()));
    expect(result).toMatchObject({ status: 'completed', text: 'done', turns: TURNS, toolUses: TURNS - 1 });

    // Walk the chain back from the last run: each continued run names the run before it.
    const runs: { runId: string; input: ForkInputJson }[] = [];
    let runId: string | undefined = (await client.workflow.getHandle('can-agent').describe()).runId;
    while (runId) {
      const input: ForkInputJson = await startInputOf<ForkInputJson>(client.workflow.getHandle('can-agent', runId));
      runs.unshift({ runId, input });
      runId = input.continuation?.ref.run.runId;
    }
    expect(runs.length).toBeGreaterThan(1);
    for (const { input } of runs.slice(1)) expect(input.continuation?.state).toMatchObject({ v: CARRIED_STATE_VERSION });
    const first = await historyEvents(client.workflow.getHandle('can-agent', runs[0]!.runId));
    expect(typesOf(first).at(-1)).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW');
    // Turns counted across runs: the second run took over where the first stopped.
    const carried = runs[1]!.input.continuation!.state!;
    expect(carried.turns).toBeGreaterThan(0);
    expect(carried.turns).toBeLessThan(TURNS);
    // The cache-break watch crossed too: the next run judged its first call against the last
    // request of the run before (same prefix, still cached), so no turn of the chain broke.
    const watch = parseCarriedState(carried);
    if (!watch.ok) throw new Error(watch.issues.join('; '));
    expect(watch.state.cache).toMatchObject({ breaks: 0, previous: { ttl: '5m' } });
    expect(watch.state.cache?.previous?.cached).toBeGreaterThan(0);
    expect(result.cacheBreak).toBeUndefined();
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(first.some((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toBe(false);

    const on = { address: server.address, namespace: server.namespace };
    await recordHistory(client.workflow.getHandle('can-agent'), 'continue-as-new-first-run', { runId: runs[0]!.runId, server: on });
    await recordHistory(client.workflow.getHandle('can-agent'), 'continue-as-new-next-run', { runId: runs[1]!.runId, server: on });
    recordCarriedState(runs[1]!.input.continuation!.state, 'v2-continue-as-new');
  } finally {
    await native.close();
    await connection.close();
    await server.stop();
  }
});

test('a carried state that does not parse fails the run at once, non-retryable', async () => {
  const done = await h.forkflow.fork({ agentId: 'can-source', prompt: 'Once.\n@reply once' }, { mode: 'sync' });
  expect(done.status).toBe('completed');
  const ref = await h.client.workflow.getHandle('can-source').query(prefixRefQuery);
  const handle = await h.client.workflow.start('forkWorkflow', {
    workflowId: 'can-bad-state',
    taskQueue: h.taskQueue,
    // Passes the input's loose check (numbers), not the carried-state schema (counts are >= 0).
    args: [{ prompt: 'go on', continuation: { ref, state: { turns: -1, toolUses: 0, startedAt: 'then' }, message: { message: '@reply again' } } }],
  });
  const err = await rejectionOf(handle.result());
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect(cause).toMatchObject({ type: 'InvalidCarriedState', nonRetryable: true });
  expect((cause as ApplicationFailure).message).toContain('turns');
  const events = await historyEvents(handle);
  expect(events.some((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toBe(false);
  expect(events.some((e) => e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)).toBe(false);
});
