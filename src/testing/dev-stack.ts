/**
 * The whole local stack in one process: a dev server (persistent by default), the model
 * (Anthropic when ANTHROPIC_API_KEY is set, else the offline emulator on loopback) and a
 * worker. Used by `forkflow dev` and the demo. With payload encryption on, also a codec
 * server that the Web UI can decode through (its endpoint pasted into the UI's settings, or,
 * with `codecInUi`, handed to the dev server as `--ui-codec-endpoint`), so the UI
 * shows what the database only holds encrypted.
 */
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { ConversationSource, OperatorConsent } from '../activities';
import { ForkflowClient } from '../client';
import { forkflowConnectionOptions } from '../client/connection-options';
import { startOfflineModel, type OfflineModel, type OfflineModelOptions } from '../offline';
import { TASK_QUEUE } from '../shared/wire/constants';
import { startCodecServer, type CodecServer } from '../payloads/codec-server';
import { newToken } from '../payloads/endpoint-guard';
import { encrypts, forkflowDataConverter } from '../payloads/data-converter';
import { freePort, startDevServer, type DevServer, type DevServerOptions } from '../worker/dev-server';
import { createModelClient } from '../worker/model-client';
import { installRuntime } from '../worker/runtime';
import { conversationSourceFor, createForkflowWorker } from '../worker/worker';

export interface DevStackOptions {
  server?: DevServerOptions;
  /** A Temporal server that already runs (the self-hosted stack): no dev server is started. `tls`: its mutual TLS settings. */
  existingServer?: { address: string; namespace: string; uiUrl?: string; tls?: TLSConfig };
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
  /** Payload codecs of the worker and client (default: `forkflowDataConverter()`, from the environment). */
  dataConverter?: DataConverter;
  /** Port of the codec server started when the converter encrypts (default: a free one). */
  codecServerPort?: number;
  /**
   * Hand the dev server's Web UI the codec server's tokened endpoint (`--ui-codec-endpoint`),
   * so it decodes for everyone who loads it. Off by default: the token would sit in the dev
   * server's command line (`ps`, /proc) and in the UI's settings, which the UI serves to any
   * local user. Without it, paste `codecServer.endpoint` into your own browser's UI settings.
   */
  codecInUi?: boolean;
  /** A pre-built workflow bundle (default: bundle at start). */
  workflowBundle?: { codePath: string };
  /** What the worker's operator allows start inputs to make it run (default: from the environment; src/worker/consent.ts). */
  consent?: OperatorConsent;
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
  /** The codec server the Web UI uses, when payloads are encrypted. */
  codecServer?: CodecServer;
  stop(): Promise<void>;
}

export async function startDevStack(o: DevStackOptions): Promise<DevStack> {
  const { metricsUrl } = installRuntime({ logLevel: o.logLevel ?? 'WARN', metricsAddress: o.metricsAddress });
  const taskQueue = o.taskQueue ?? TASK_QUEUE;
  const dataConverter = o.dataConverter ?? forkflowDataConverter();
  const codecServer = encrypts(dataConverter) && !o.server?.headless && !o.existingServer ? await startUiCodecServer(dataConverter, o) : undefined;
  const [server, offlineModel] = await Promise.all([
    o.existingServer
      ? Promise.resolve(attached(o.existingServer))
      : startDevServer({ ...o.server, ...(codecServer ? { uiPort: codecServer.uiPort, ...(o.codecInUi ? { uiCodecEndpoint: codecServer.endpoint } : {}) } : {}) }),
    o.anthropicApiKey ? Promise.resolve(undefined) : startOfflineModel(o.offlineModel ?? { latencyMs: 150, streamChunkDelayMs: 15, maxLogEntries: 1000 }),
  ]);
  const modelEndpoint = offlineModel?.url ?? o.anthropicBaseUrl ?? 'https://api.anthropic.com';
  const tls = o.existingServer?.tls;
  const connection = await Connection.connect(forkflowConnectionOptions({ address: server.address, ...(tls ? { tls } : {}) }));
  const temporal = new Client({ connection, namespace: server.namespace, dataConverter });
  const nativeConnection = await NativeConnection.connect({ address: server.address, ...(tls ? { tls } : {}) });
  const conversations = conversationSourceFor(temporal);
  const worker = await createForkflowWorker({
    connection: nativeConnection,
    client: temporal,
    namespace: server.namespace,
    taskQueue,
    anthropic: createModelClient({ apiKey: o.anthropicApiKey ?? 'offline', baseURL: offlineModel?.url ?? o.anthropicBaseUrl }),
    workspaceRoot: o.workspaceRoot,
    conversations,
    dataConverter,
    ...(o.workflowBundle ? { workflowBundle: o.workflowBundle } : {}),
    ...(o.consent ? { consent: o.consent } : {}),
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
    codecServer,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await nativeConnection.close();
      await connection.close();
      await offlineModel?.close();
      await server.stop();
      await codecServer?.close();
    },
  };
}

/** A server this stack did not start, and so does not stop. */
function attached(existing: { address: string; namespace: string; uiUrl?: string }): DevServer {
  return { address: existing.address, namespace: existing.namespace, ...(existing.uiUrl ? { uiUrl: existing.uiUrl } : {}), options: {}, stop: () => Promise.resolve() };
}

/**
 * A codec server for the dev server's Web UI. The UI's port is fixed first, so CORS can
 * name its origins (the UI is reached as localhost or 127.0.0.1, whichever was typed). It
 * takes a fresh token, which the UI gets inside its codec endpoint URL (`/t/<token>`): the
 * dev server's UI sends no header of its own to a codec server (codec-server.ts says why).
 */
async function startUiCodecServer(dataConverter: DataConverter, o: DevStackOptions): Promise<CodecServer & { uiPort: number }> {
  const ip = o.server?.ip ?? '127.0.0.1';
  const uiPort = o.server?.uiPort ?? (await freePort(ip));
  const allowedOrigins = [`http://${ip}:${uiPort}`, `http://localhost:${uiPort}`, `http://127.0.0.1:${uiPort}`];
  const server = await startCodecServer({ dataConverter, ip: '127.0.0.1', port: o.codecServerPort, allowedOrigins, token: newToken() });
  return Object.assign(server, { uiPort });
}
