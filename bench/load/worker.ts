/**
 * The worker of `npm run bench:load`, in its own process so its memory can be sampled apart
 * from the bench's client, dev server and offline model. Settings come from the environment
 * (the same FORKFLOW_* variables `forkflow worker` reads, see src/worker/config.ts);
 * BENCH_* name the bench's server and model. Exits when its parent sends SIGTERM.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { forkflowConnectionOptions } from '../../src/client/connection-options';
import { forkflowDataConverter } from '../../src/payloads/data-converter';
import { forkflowSettings } from '../../src/worker/config';
import { createModelClient } from '../../src/worker/model-client';
import { installRuntime } from '../../src/worker/runtime';
import { conversationSourceFor, createForkflowWorker } from '../../src/worker/worker';

function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`bench:load worker: ${name} is not set`);
  return value;
}

async function main(): Promise<void> {
  const settings = forkflowSettings();
  installRuntime({ logLevel: 'ERROR', metricsAddress: settings.metricsAddress });
  const address = need('BENCH_TEMPORAL_ADDRESS');
  const namespace = need('BENCH_NAMESPACE');
  const dataConverter = forkflowDataConverter();
  const connection = await Connection.connect(forkflowConnectionOptions({ address }));
  const client = new Client({ connection, namespace, dataConverter });
  const nativeConnection = await NativeConnection.connect({ address });
  const worker = await createForkflowWorker({
    connection: nativeConnection,
    client,
    namespace,
    taskQueue: settings.taskQueue,
    anthropic: createModelClient({ apiKey: 'offline', baseURL: need('BENCH_MODEL_URL') }),
    workspaceRoot: settings.workspaceRoot,
    conversations: conversationSourceFor(client),
    dataConverter,
    ...(process.env.BENCH_WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.BENCH_WORKFLOW_BUNDLE } } : {}),
    // bench:tree names its workers, to find the one holding a workflow in its history.
    ...(process.env.BENCH_IDENTITY ? { identity: process.env.BENCH_IDENTITY } : {}),
  });
  process.once('SIGTERM', () => worker.shutdown());
  // The bench went away without stopping its worker (killed, crashed): stop too.
  process.once('disconnect', () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    setTimeout(() => process.exit(1), 10_000).unref();
  });
  const running = worker.run();
  process.send?.({ ready: true });
  await running;
  await nativeConnection.close();
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
