/**
 * A self-hosted stack of a test file's own (scripts/stack/), with the offline model, a
 * pre-built workflow bundle and a workspace holding notes.txt. The stack lives in a temp
 * folder on a free block of ports. `withWorker()` adds an in-process worker; tests that
 * need worker processes (host loss) start them from `bundlePath`.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { portsFrom } from '../../scripts/stack/config';
import { startStack, type Stack } from '../../scripts/stack/stack';
import { ForkflowClient } from '../../src/client';
import { forkflowConnectionOptions } from '../../src/client/connection-options';
import { startOfflineModel, type OfflineModel, type OfflineModelOptions } from '../../src/offline';
import { bundleForkflowWorkflows } from '../../src/worker/bundle';
import { freePort } from '../../src/worker/dev-server';
import { createModelClient } from '../../src/worker/model-client';
import type { WorkerTuning } from '../../src/worker/config';
import { createForkflowWorker, createModelWorker } from '../../src/worker/worker';
import { tempDir, uniqueTaskQueue } from './env';
import { freeStackPorts } from './stack-ports';

const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: (m: string) => console.warn(m), error: (m: string) => console.error(m) };

export interface WorkerOptions {
  tuning?: WorkerTuning;
  deployment?: { name: string; buildId: string };
  bundleCode?: string;
  identity?: string;
}

export interface StackHarness {
  stack: Stack;
  model: OfflineModel;
  client: Client;
  /** A forkflow client on `taskQueue`. */
  forkflow: ForkflowClient;
  taskQueue: string;
  /** The folder the stack and the bundle live in (searchable by the `postgres` user). */
  dir: string;
  workspace: string;
  bundlePath: string;
  /**
   * Starts a worker in this process on `taskQueue`; stopped by `stopWorkers()` or `close()`.
   * `tuning`: its slots (e.g. few activity slots, so that a backlog forms); `deployment`: the
   * build it serves (Worker Versioning), with that build's workflow code as `bundleCode`.
   */
  withWorker(opts?: WorkerOptions): Promise<Worker>;
  /**
   * Starts a model worker (model calls only) on `queue`, with the server-kept rate limit when
   * given, calling `modelUrl` (default: the harness's offline model).
   */
  withModelWorker(opts: { queue: string; requestsPerMinute?: number; identity?: string; modelUrl?: string }): Promise<Worker>;
  /** Stops every worker started so far (a build retired). */
  stopWorkers(): Promise<void>;
  close(): Promise<void>;
}

export async function startStackHarness(name: string, opts: { model?: OfflineModelOptions } = {}): Promise<StackHarness> {
  const dir = tempDir(name);
  // PostgreSQL runs as the `postgres` user when the tests run as root: it must reach its folder.
  chmodSync(dir, 0o755);
  const workspace = tempDir(`${name}-ws`);
  writeFileSync(join(workspace, 'notes.txt'), 'alpha\nbeta\n');
  const [stack, bundle, model] = await Promise.all([
    startStack({ dir: join(dir, 'stack'), ports: portsFrom(await freeStackPorts()) }),
    bundleForkflowWorkflows(quiet),
    startOfflineModel({ port: await freePort(), ...opts.model }),
  ]);
  const bundlePath = join(dir, 'bundle.js');
  writeFileSync(bundlePath, bundle);
  const connection = await Connection.connect(forkflowConnectionOptions({ address: stack.address }));
  const client = new Client({ connection, namespace: stack.namespace });
  const taskQueue = uniqueTaskQueue(name);
  const workers: { worker: Worker; running: Promise<void>; native: NativeConnection }[] = [];
  async function stopWorkers(): Promise<void> {
    for (const w of workers.splice(0)) {
      if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
      await w.running.catch(() => undefined);
      await w.native.close();
    }
  }
  return {
    stack,
    model,
    client,
    forkflow: new ForkflowClient(client, { taskQueue }),
    taskQueue,
    dir,
    workspace,
    bundlePath,
    async withWorker(opts: WorkerOptions = {}) {
      const native = await NativeConnection.connect({ address: stack.address });
      const worker = await createForkflowWorker({
        connection: native,
        client,
        namespace: stack.namespace,
        taskQueue,
        anthropic: createModelClient({ apiKey: 'k', baseURL: model.url }),
        workspaceRoot: workspace,
        workflowBundle: opts.bundleCode !== undefined ? { code: opts.bundleCode } : { codePath: bundlePath },
        ...(opts.tuning ? { tuning: opts.tuning } : {}),
        ...(opts.deployment ? { deployment: opts.deployment } : {}),
        ...(opts.identity ? { identity: opts.identity } : {}),
      });
      workers.push({ worker, running: worker.run(), native });
      return worker;
    },
    async withModelWorker(opts) {
      const native = await NativeConnection.connect({ address: stack.address });
      const worker = await createModelWorker({
        connection: native,
        client,
        namespace: stack.namespace,
        taskQueue: opts.queue,
        anthropic: createModelClient({ apiKey: 'k', baseURL: opts.modelUrl ?? model.url }),
        workspaceRoot: workspace,
        ...(opts.requestsPerMinute ? { requestsPerMinute: opts.requestsPerMinute } : {}),
        ...(opts.identity ? { identity: opts.identity } : {}),
      });
      workers.push({ worker, running: worker.run(), native });
      return worker;
    },
    stopWorkers,
    async close() {
      await stopWorkers();
      await connection.close();
      await model.close();
      await stack.stop();
    },
  };
}

/**
 * Worker hosts' workspaces: one repository (notes.txt, one commit) under `dir`, cloned once
 * per host name, as each host of one deployment holds the same checkout. Returns the checkouts.
 */
export function hostCheckouts(dir: string, hosts: string[]): Map<string, string> {
  const origin = join(dir, 'origin');
  mkdirSync(origin, { recursive: true });
  writeFileSync(join(origin, 'notes.txt'), 'alpha\nbeta\n');
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'pipe' });
  git(origin, 'init', '-q', '-b', 'main');
  git(origin, 'add', 'notes.txt');
  git(origin, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'notes');
  const checkouts = new Map<string, string>();
  for (const host of hosts) {
    const checkout = join(dir, host, 'repo');
    mkdirSync(join(dir, host), { recursive: true });
    git(dir, 'clone', '-q', origin, checkout);
    checkouts.set(host, checkout);
  }
  return checkouts;
}
