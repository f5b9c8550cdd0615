/**
 * The one test kit for Temporal tests: connects to the run's dev server, starts the offline
 * model and a worker on a task queue of the test's own, and hands back clients. Real parts
 * only: a real server, the real SDKs, the emulator over HTTP.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { ProviderClients } from '../../src/activities/model/providers/registry';
import type { SandboxAvailability } from '../../src/activities/tools/sandbox';
import type { ConversationSource } from '../../src/activities/conversation';
import type { OperatorConsent } from '../../src/activities/consent';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { ForkflowClient } from '../../src/client';
import { forkflowConnectionOptions } from '../../src/client/connection-options';
import { NO_CONSENT } from '../../src/activities/consent';
import { forkflowDataConverter } from '../../src/payloads/data-converter';
import { startOfflineModel, type OfflineModel, type OfflineModelOptions } from '../../src/offline';
import { createModelClient } from '../../src/worker/model-client';
import { installRuntime } from '../../src/worker/runtime';
import type { Tracing } from '../../src/worker/tracing';
import { conversationSourceFor, createForkflowWorker } from '../../src/worker/worker';

export interface TestEnvFile {
  address: string;
  namespace: string;
  uiUrl?: string;
  bundlePath: string;
  dir: string;
}

export function testEnv(): TestEnvFile {
  const path = process.env.FORKFLOW_TEST_ENV;
  if (!path) throw new Error('FORKFLOW_TEST_ENV is not set: run Temporal tests through jest (the `temporal` project starts the server).');
  return JSON.parse(readFileSync(path, 'utf8')) as TestEnvFile;
}

let counter = 0;
export function uniqueTaskQueue(name: string): string {
  counter += 1;
  return `test-${name}-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

export function tempDir(prefix = 'ws'): string {
  return mkdtempSync(join(tmpdir(), `forkflow-${prefix}-`));
}

export interface Harness {
  env: TestEnvFile;
  client: Client;
  forkflow: ForkflowClient;
  model: OfflineModel;
  taskQueue: string;
  workspaceRoot: string;
  /** The in-process worker; absent with `noWorker`. */
  worker?: Worker;
  /** That worker's conversation cache (its stats count the queries it made). */
  conversations: ConversationSource;
  close(): Promise<void>;
}

export interface HarnessOptions {
  name: string;
  model?: OfflineModelOptions;
  workspaceRoot?: string;
  /** Start without a worker (tests that run their own worker process). */
  noWorker?: boolean;
  tracing?: Tracing;
  /** The worker's OS sandbox for Bash (default: the real probe). */
  sandbox?: () => Promise<SandboxAvailability>;
  /** Payload codecs of the client and worker (default: `forkflowDataConverter()`, from the environment). */
  dataConverter?: DataConverter;
  /** A workflow bundle of the test's own (default: the run's, built without encrypted failures). */
  bundlePath?: string;
  /** Another server than the run's shared one (a test's own, e.g. with a database file to inspect). */
  server?: { address: string; namespace: string; uiUrl?: string };
  /** The worker's poll interval for submitted Message Batches (delivery `batch`), in ms. */
  batchPollMs?: number;
  /** The worker's batch window and size (delivery `batch`): see ForkflowWorkerOptions. */
  batchWindowMs?: number;
  batchMaxRequests?: number;
  /** The worker's named providers, given its default client (default: that client alone). */
  providers?: (defaultClient: Anthropic) => ProviderClients;
  /** The worker's FORKFLOW_USER_MEMORY_ROOT (tenants' homes for `memory: user`). */
  userMemoryRoot?: string;
  /**
   * What the worker's operator allows (stdio MCP commands, bypassPermissions; src/worker/consent.ts).
   * Default: nothing, whatever the test process's environment says.
   */
  consent?: OperatorConsent;
}

/** A running worker against the shared dev server, on a task queue of its own. */
export async function startHarness(opts: HarnessOptions): Promise<Harness> {
  // Quiet worker logs (warnings and errors only). No metrics endpoint: jest gives each test
  // file its own runtime in one process, so a fixed port would collide (metrics.test.ts
  // scrapes a worker process of its own instead).
  installRuntime({ logLevel: 'WARN' });
  const env = { ...testEnv(), ...opts.server };
  const dataConverter = opts.dataConverter ?? forkflowDataConverter();
  const model = await startOfflineModel(opts.model);
  const connection = await Connection.connect(forkflowConnectionOptions({ address: env.address }));
  const client = new Client({ connection, namespace: env.namespace, dataConverter });
  const taskQueue = uniqueTaskQueue(opts.name);
  const forkflow = new ForkflowClient(client, { taskQueue });
  const workspaceRoot = opts.workspaceRoot ?? tempDir();
  const conversations = conversationSourceFor(client);
  // With `noWorker` no worker is created at all: one that never ran keeps its connection
  // from closing.
  const nativeConnection = opts.noWorker ? undefined : await NativeConnection.connect({ address: env.address });
  const anthropic = createModelClient({ apiKey: 'test-key', baseURL: model.url });
  const worker = nativeConnection
    ? await createForkflowWorker({
        connection: nativeConnection,
        client,
        namespace: env.namespace,
        taskQueue,
        anthropic,
        ...(opts.providers ? { providers: opts.providers(anthropic) } : {}),
        workspaceRoot,
        conversations,
        workflowBundle: { codePath: opts.bundlePath ?? env.bundlePath },
        dataConverter,
        ...(opts.tracing ? { tracing: opts.tracing } : {}),
        ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
        // A scaled emulator clock: the worker's keep-alive timers follow the same time.
        ...(opts.model?.clockScale ? { modelClockScale: opts.model.clockScale } : {}),
        ...(opts.batchPollMs ? { batchPollMs: opts.batchPollMs } : {}),
        ...(opts.batchWindowMs !== undefined ? { batchWindowMs: opts.batchWindowMs } : {}),
        ...(opts.batchMaxRequests ? { batchMaxRequests: opts.batchMaxRequests } : {}),
        ...(opts.userMemoryRoot ? { userMemoryRoot: opts.userMemoryRoot } : {}),
        consent: opts.consent ?? NO_CONSENT,
      })
    : undefined;
  const running = worker ? worker.run() : Promise.resolve();
  return {
    env,
    client,
    forkflow,
    model,
    taskQueue,
    workspaceRoot,
    worker,
    conversations,
    async close() {
      if (worker) {
        worker.shutdown();
        await running;
      }
      await nativeConnection?.close();
      await connection.close();
      await model.close();
    },
  };
}
