/**
 * An agent cancelled while one of its signal handlers waits ends `killed` with its result, not
 * CANCELED without one (src/workflows/fork/signal-cancel.ts). The root of a tree answers a
 * member's request by signal from its handler; when the cancellation request reaches it in the
 * same workflow task as the request, that answer's signal is cancelled with the agent. The
 * test makes "the same task" a fact, not a race: no worker serves the queue while the request
 * and the cancellation are sent, then one does.
 */
import type { Worker } from '@temporalio/worker';
import { NativeConnection } from '@temporalio/worker';
import type { ForkInputJson } from '../../src/shared/wire/fork-input';
import { treeRequestSignal } from '../../src/shared/wire/messages';
import { createModelClient } from '../../src/worker/model-client';
import { createForkflowWorker } from '../../src/worker/worker';
import { ForkflowClient } from '../../src/client';
import { startHarness, uniqueTaskQueue, type Harness } from '../kit/env';
import { startInputOf } from '../kit/histories';
import { historyEvents, typesOf } from '../kit/history-order';
import { agentStep, script, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'signal-cancel', noWorker: true });
});
afterAll(() => h.close());

async function workerOn(native: NativeConnection, taskQueue: string): Promise<{ worker: Worker; running: Promise<void> }> {
  const worker = await createForkflowWorker({
    connection: native,
    client: h.client,
    namespace: h.env.namespace,
    taskQueue,
    anthropic: createModelClient({ apiKey: 'k', baseURL: h.model.url }),
    workspaceRoot: h.workspaceRoot,
    workflowBundle: { codePath: h.env.bundlePath },
  });
  return { worker, running: worker.run() };
}

test('a root cancelled in the task that brings a member\'s request ends killed with its result', async () => {
  const taskQueue = uniqueTaskQueue('signal-cancel');
  const forkflow = new ForkflowClient(h.client, { taskQueue });
  const native = await NativeConnection.connect({ address: h.env.address });
  try {
    // A root that started a member (whose input carries the tree's capability) and now waits
    // for an approval: nothing of it is in flight on a worker.
    const prompt = script('Root.', agentStep({ description: 'member', subagent_type: 'general-purpose', prompt: 'Member.\n@reply member done', run_in_background: true }), toolStep('FileWrite', { file_path: 'x.txt', content: 'x' }), '@reply never');
    let w = await workerOn(native, taskQueue);
    const handle = await forkflow.startAgent({ agentId: 'sig-cancel', prompt, permissionMode: 'bubble', subAgents: { forkGate: false } });
    await waitFor(async () => (await handle.status()).state === 'awaiting_approval' || undefined, 'the root to wait for an approval');
    await waitFor(async () => (await forkflow.status('sig-cancel.spawn-1')).state === 'completed' || undefined, 'the member to complete');
    const { treeToken } = await startInputOf<ForkInputJson>(h.client.workflow.getHandle('sig-cancel.spawn-1'));
    expect(treeToken).toEqual(expect.any(String));
    w.worker.shutdown();
    await w.running;

    // A request the root answers by signal, and the cancellation: one workflow task takes both.
    const root = h.client.workflow.getHandle('sig-cancel');
    const request = { from: 'sig-cancel.spawn-1', to: 'sig-cancel', key: 'toolu_x', structured: false, token: treeToken };
    await root.signal(treeRequestSignal, { kind: 'route', id: 'r-1', from: 'sig-cancel.spawn-1', request, token: treeToken });
    await root.cancel();
    w = await workerOn(native, taskQueue);
    try {
      const result = await handle.result();
      expect(result).toMatchObject({ status: 'killed' });
      expect(result.children).toEqual([expect.objectContaining({ agentId: 'sig-cancel.spawn-1', state: 'completed' })]);
      expect((await root.describe()).status.name).toBe('COMPLETED');
      // The request and the cancellation did arrive together: one task after both, none between.
      const types = typesOf(await historyEvents(root));
      const signalled = types.lastIndexOf('EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED');
      const cancelAsked = types.indexOf('EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED');
      expect(cancelAsked).toBeGreaterThan(signalled);
      expect(types.slice(signalled, cancelAsked)).not.toContain('EVENT_TYPE_WORKFLOW_TASK_STARTED');
    } finally {
      w.worker.shutdown();
      await w.running;
    }
  } finally {
    await native.close();
  }
});
