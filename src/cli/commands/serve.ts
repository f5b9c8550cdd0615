/**
 * Long-running commands: `dev` (dev server + model + worker in one process) and `worker`
 * (a worker against an existing cluster). Both stop cleanly on Ctrl-C / SIGTERM.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { forkflowSettings, temporalSettings } from '../../worker/config';
import { startDevStack } from '../../worker/dev-stack';
import { ensureSearchAttributes } from '../../worker/search-attributes';
import { createModelClient } from '../../worker/model-client';
import { createForkflowWorker, createWorkspaceWorker } from '../../worker/worker';
import type { GlobalOptions } from './agents';

/** Resolves when the process is asked to stop (Ctrl-C or SIGTERM). */
export function untilSignal(): Promise<string> {
  return new Promise((resolveSignal) => {
    const done = (signal: string) => resolveSignal(signal);
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}

export const DEFAULT_DEV_DB = '.forkflow/dev.db';

export function registerServeCommands(program: Command, globals: () => GlobalOptions): void {
  program
    .command('dev')
    .description('run a local dev server (persistent), the model (offline unless ANTHROPIC_API_KEY) and a worker')
    .option('--db <file>', 'SQLite file for the dev server', DEFAULT_DEV_DB)
    .option('--in-memory', 'do not persist the dev server')
    .option('--port <port>', 'gRPC port', (v) => Number(v), 7233)
    .option('--ui-port <port>', 'Web UI port', (v) => Number(v), 8233)
    .option('--workspace <dir>', 'workspace root for tools', process.cwd())
    .action(async (flags: { db: string; inMemory?: boolean; port: number; uiPort: number; workspace: string }) => {
      const settings = forkflowSettings();
      const dbFile = flags.inMemory ? undefined : resolve(flags.db);
      if (dbFile) mkdirSync(dirname(dbFile), { recursive: true });
      const stack = await startDevStack({
        server: { dbFile, port: flags.port, uiPort: flags.uiPort },
        taskQueue: globals().taskQueue ?? settings.taskQueue,
        workspaceRoot: resolve(flags.workspace),
        anthropicApiKey: settings.anthropicApiKey,
        anthropicBaseUrl: settings.anthropicBaseUrl,
      });
      process.stdout.write(
        `Temporal dev server: ${stack.server.address}${dbFile ? ` (db ${dbFile})` : ' (in memory)'}\n` +
          `Web UI:              ${stack.server.uiUrl}\n` +
          `Model:               ${stack.offlineModel ? `offline emulator at ${stack.modelEndpoint}` : stack.modelEndpoint}\n` +
          `Worker:              task queue ${stack.taskQueue}\nCtrl-C to stop.\n`,
      );
      await untilSignal();
      process.stdout.write('stopping...\n');
      await stack.stop();
    });

  program
    .command('worker')
    .description('run a worker against a Temporal cluster (TEMPORAL_ADDRESS etc.) and Anthropic (ANTHROPIC_API_KEY)')
    .option('--workspace <dir>', 'workspace root for tools (default FORKFLOW_WORKSPACE or cwd)')
    .option('--identity <id>', 'worker identity shown in the Web UI')
    .option('--workflow-bundle <file>', 'a pre-built workflow bundle (default FORKFLOW_WORKFLOW_BUNDLE, else bundle at start)')
    .option('--workspace-queue <name>', "also serve this workspace's task queue (tools only), for forks that name it in workspace.taskQueue")
    .action(async (flags: { workspace?: string; identity?: string; workflowBundle?: string; workspaceQueue?: string }) => {
      const settings = forkflowSettings();
      const temporal = temporalSettings(globals());
      const bundle = flags.workflowBundle ?? process.env.FORKFLOW_WORKFLOW_BUNDLE;
      Runtime.install({ logger: new DefaultLogger((process.env.FORKFLOW_LOG_LEVEL as 'INFO' | undefined) ?? 'INFO') });
      const connection = await Connection.connect(temporal.connectionOptions);
      const added = await ensureSearchAttributes(connection, temporal.namespace);
      if (added.length) process.stdout.write(`registered search attributes: ${added.join(', ')}\n`);
      const nativeConnection = await NativeConnection.connect(temporal.connectionOptions);
      const worker = await createForkflowWorker({
        connection: nativeConnection,
        client: new Client({ connection, namespace: temporal.namespace }),
        namespace: temporal.namespace,
        taskQueue: globals().taskQueue ?? settings.taskQueue,
        anthropic: createModelClient({ apiKey: settings.anthropicApiKey, baseURL: settings.anthropicBaseUrl }),
        workspaceRoot: resolve(flags.workspace ?? settings.workspaceRoot),
        identity: flags.identity,
        ...(bundle ? { workflowBundle: { codePath: resolve(bundle) } } : {}),
      });
      const workers = [worker];
      if (flags.workspaceQueue) {
        workers.push(
          await createWorkspaceWorker({
            connection: nativeConnection,
            client: new Client({ connection, namespace: temporal.namespace }),
            namespace: temporal.namespace,
            taskQueue: flags.workspaceQueue,
            anthropic: createModelClient({ apiKey: settings.anthropicApiKey, baseURL: settings.anthropicBaseUrl }),
            workspaceRoot: resolve(flags.workspace ?? settings.workspaceRoot),
          }),
        );
      }
      process.stdout.write(`worker polling ${workers.map((w) => w.options.taskQueue).join(', ')} on ${temporal.address} (${temporal.namespace})\n`);
      const running = Promise.all(workers.map((w) => w.run()));
      await Promise.race([running, untilSignal()]);
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
      await nativeConnection.close();
      await connection.close();
    });
}
