/**
 * A dev server of a test's own (for server settings the shared one must not have: lowered
 * continue-as-new thresholds, a log to watch), with the offline model and a forkflow worker
 * on it. The caller runs the worker (`worker.runUntil`) and closes the rest with `close()`.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { ForkflowClient } from '../../src/client';
import { forkflowConnectionOptions } from '../../src/client/connection-options';
import { startOfflineModel, type OfflineModel, type OfflineModelOptions } from '../../src/offline';
import { startDevServer, type DevServerOptions } from '../../src/worker/dev-server';
import { createModelClient } from '../../src/worker/model-client';
import { createForkflowWorker } from '../../src/worker/worker';
import { testEnv, uniqueTaskQueue } from './env';

export interface OwnServer {
  client: Client;
  forkflow: ForkflowClient;
  model: OfflineModel;
  worker: Worker;
  close(): Promise<void>;
}

export async function startOwnServer(opts: { name: string; workspaceRoot: string; server: DevServerOptions; model?: OfflineModelOptions }): Promise<OwnServer> {
  const server = await startDevServer({ headless: true, ...opts.server });
  const model = await startOfflineModel(opts.model);
  const connection = await Connection.connect(forkflowConnectionOptions({ address: server.address }));
  const client = new Client({ connection, namespace: server.namespace });
  const native = await NativeConnection.connect({ address: server.address });
  const taskQueue = uniqueTaskQueue(opts.name);
  const worker = await createForkflowWorker({
    connection: native,
    client,
    namespace: server.namespace,
    taskQueue,
    anthropic: createModelClient({ apiKey: 'k', baseURL: model.url }),
    workspaceRoot: opts.workspaceRoot,
    workflowBundle: { codePath: testEnv().bundlePath },
  });
  return {
    client,
    forkflow: new ForkflowClient(client, { taskQueue }),
    model,
    worker,
    close: async () => {
      await native.close();
      await connection.close();
      await model.close();
      await server.stop();
    },
  };
}
