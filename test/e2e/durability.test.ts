/**
 * Crash-proof: a worker SIGKILLed mid model call, and a dev server stopped and restarted on
 * its database file mid fork. Either way the fork finishes with the transcript of an
 * uninterrupted run, and every model call that completed did so exactly once.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { ForkflowClient } from '../../src/client';
import type { OfflineModel } from '../../src/offline';
import { startDevServer, freePort } from '../../src/worker/dev-server';
import { createModelClient } from '../../src/worker/model-client';
import { createForkflowWorker } from '../../src/worker/worker';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { startWorkerProcess } from '../kit/processes';
import { bodyOf, messageRequests } from '../kit/requests';
import { recordHistory } from '../kit/histories';
import { forkflowConnectionOptions } from '../../src/client/connection-options';

const script = (hold: number) =>
  ['Check the notes.', '@tool Read {"file_path":"notes.txt"}', `@sleep ${hold} @tool Grep {"pattern":"beta","output_mode":"content"}`, '@reply all done'].join('\n');

/** Every completed request body appears once: a retry after a crash must not repeat a finished call. */
function completedOnce(model: OfflineModel): void {
  const counts = new Map<string, number>();
  for (const e of messageRequests(model).filter((r) => r.outcome === 'completed')) counts.set(e.rawBody, (counts.get(e.rawBody) ?? 0) + 1);
  expect([...counts.values()].every((n) => n === 1)).toBe(true);
  expect(counts.size).toBe(3);
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'durability' });
  writeFileSync(join(h.workspaceRoot, 'notes.txt'), 'alpha\nbeta\ngamma\n');
});
afterAll(() => h.close());

/** The same fork run without interruption: what the interrupted one must end up with. */
async function referenceTranscript(agentId: string, hold: number) {
  const result = await h.forkflow.fork({ agentId, prompt: script(hold) }, { mode: 'sync' });
  expect(result.status).toBe('completed');
  return h.forkflow.transcript(agentId);
}

test('a worker SIGKILLed during a model call: a new worker finishes the fork, nothing completes twice', async () => {
  const reference = await referenceTranscript('durable-reference-kill', 4000);
  const model = h.model;
  model.log.clear();
  const taskQueue = uniqueTaskQueue('sigkill');
  const forkflow = new ForkflowClient(h.client, { taskQueue });
  const workerOpts = { address: h.env.address, taskQueue, modelUrl: model.url, workspace: h.workspaceRoot, bundlePath: h.env.bundlePath };
  const first = await startWorkerProcess(workerOpts);
  const handle = await forkflow.fork({ agentId: 'durable-kill', prompt: script(4000) }, { mode: 'forget' });

  const inFlight = await model.log.waitFor((e) => e.outcome === 'pending' && bodyOf(e).messages.length === 3, { timeoutMs: 30_000 });
  await first.kill('SIGKILL');
  await model.log.waitFor((e) => e.seq === inFlight.seq && e.outcome === 'aborted');

  const second = await startWorkerProcess(workerOpts);
  try {
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'all done', turns: 3 });
    expect(await forkflow.transcript('durable-kill')).toEqual(reference);
    completedOnce(model);
    await recordHistory(h.client.workflow.getHandle('durable-kill'), 'worker-sigkill-mid-call');
  } finally {
    await second.kill();
  }
});

test('the dev server stopped and restarted on its database file: the fork carries on', async () => {
  const reference = await referenceTranscript('durable-reference-restart', 7000);
  const dir = tempDir('restart');
  const port = await freePort();
  const dbFile = join(dir, 'temporal.db');
  let server = await startDevServer({ dbFile, port, headless: true, logLevel: 'error' });
  const model = h.model;
  model.log.clear();
  const taskQueue = uniqueTaskQueue('restart');
  const connection = await Connection.connect(forkflowConnectionOptions({ address: server.address }));
  const client = new Client({ connection, namespace: server.namespace });
  const native = await NativeConnection.connect({ address: server.address });
  const worker = await createForkflowWorker({
    connection: native,
    client,
    namespace: server.namespace,
    taskQueue,
    anthropic: createModelClient({ apiKey: 'test-key', baseURL: model.url }),
    workspaceRoot: h.workspaceRoot,
    workflowBundle: { codePath: h.env.bundlePath },
  });
  const running = worker.run();
  try {
    const forkflow = new ForkflowClient(client, { taskQueue });
    await forkflow.start({ agentId: 'durable-restart', prompt: script(7000) });
    const inFlight = await model.log.waitFor((e) => e.outcome === 'pending' && bodyOf(e).messages.length === 3, { timeoutMs: 30_000 });
    await server.stop();
    server = await startDevServer({ dbFile, port, headless: true, logLevel: 'error' });
    const result = await forkflow.result('durable-restart');
    expect(result).toMatchObject({ status: 'completed', text: 'all done', turns: 3 });
    expect(await forkflow.transcript('durable-restart')).toEqual(reference);
    // The call in flight at the stop either finished and was handed to the retry, or (when the
    // restarted server timed out its heartbeat first) was aborted and asked again: both are
    // the product's promise, as long as that request completed exactly once in the end.
    const atStop = model.log.entries().find((e) => e.seq === inFlight.seq)!;
    expect(['completed', 'aborted']).toContain(atStop.outcome);
    const completions = messageRequests(model).filter((e) => e.rawBody === atStop.rawBody && e.outcome === 'completed');
    expect(completions).toHaveLength(1);
    completedOnce(model);
  } finally {
    worker.shutdown();
    await running;
    await native.close();
    await connection.close();
    await server.stop();
  }
});
