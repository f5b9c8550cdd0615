/**
 * The whole local stack in one process: a dev server (persistent by default), the model
 * (Anthropic when ANTHROPIC_API_KEY is set, else the offline emulator on loopback) and a
 * worker. Used by `forkflow dev` and the demo.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { ConversationSource } from '../activities';
import { ForkflowClient } from '../client';
import { startOfflineModel, type OfflineModel, type OfflineModelOptions } from '../offline';
import { TASK_QUEUE } from '../shared/constants';
import { startDevServer, type DevServer, type DevServerOptions } from '../worker/dev-server';
import { createModelClient } from '../worker/model-client';
import { installRuntime } from '../worker/runtime';
import { createForkflowWorker } from '../worker/worker';
import { forkflowDataConverter } from '../payloads/data-converter';

export interface DevStackOptions {
  server?: DevServerOptions;
  taskQueue?: string;
  workspaceRoot: string;
  /** Real Anthropic when set; otherwise the offline model. */
  anthropicApiKey?: string;
  anthropicBaseUrl?: string;
  /** Options of the offline model (when no API key); default: a little latency, so the demo looks live. */
  offlineModel?: OfflineModelOptions;
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** `ip:port` to serve Prometheus metrics on (see src/worker/runtime.ts); none when unset. */
  metricsAddress?: string;
}

export interface DevStack {
  server: DevServer;
  offlineModel?: OfflineModel;
  modelEndpoint: string;
  client: ForkflowClient;
  worker: Worker;
  taskQueue: string;
  /** The worker's conversation cache (its stats show queries saved). */
  conversations: ConversationSource;
  /** Where the worker's Prometheus metrics are, when enabled. */
  metricsUrl?: string;
  stop(): Promise<void>;
}

export async function startDevStack(o: DevStackOptions): Promise<DevStack> {
  const { metricsUrl } = installRuntime({ logLevel: o.logLevel ?? 'WARN', metricsAddress: o.metricsAddress });
  const taskQueue = o.taskQueue ?? TASK_QUEUE;
  const [server, offlineModel] = await Promise.all([
    startDevServer(o.server),
    o.anthropicApiKey ? Promise.resolve(undefined) : startOfflineModel(o.offlineModel ?? { latencyMs: 150, streamChunkDelayMs: 15, maxLogEntries: 1000 }),
  ]);
  const modelEndpoint = offlineModel?.url ?? o.anthropicBaseUrl ?? 'https://api.anthropic.com';
  const connection = await Connection.connect({ address: server.address });
  const temporal = new Client({ connection, namespace: server.namespace, dataConverter: forkflowDataConverter() });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const conversations = new ConversationSource(temporal);
  const worker = await createForkflowWorker({
    connection: nativeConnection,
    client: temporal,
    namespace: server.namespace,
    taskQueue,
    anthropic: createModelClient({ apiKey: o.anthropicApiKey ?? 'offline', baseURL: offlineModel?.url ?? o.anthropicBaseUrl }),
    workspaceRoot: o.workspaceRoot,
    conversations,
  });
  const running = worker.run();
  return {
    server,
    offlineModel,
    modelEndpoint,
    client: new ForkflowClient(temporal, { taskQueue }),
    worker,
    taskQueue,
    conversations,
    metricsUrl,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await nativeConnection.close();
      await connection.close();
      await offlineModel?.close();
      await server.stop();
    },
  };
}
