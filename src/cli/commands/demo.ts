/** `forkflow demo`: the main job — dev server + worker + model + the live scenario. */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { forkflowSettings } from '../../worker/config';
import { preferredPort } from '../../worker/dev-server';
import { startDevStack } from '../../testing/dev-stack';
import { devMetricsAddress } from '../../worker/metrics-endpoint';
import { runDemo } from '../demo/run-demo';
import { demoConsent } from '../demo/tools-demo';
import { CliError, EXIT } from '../exit';
import { defaultStackDir, readStackState, stackTlsConfig } from '../../client/stack-state';
import type { GlobalOptions } from './agents';
import { DEFAULT_DEV_DB, untilSignal, withMetricsErrors } from './serve';

export function registerDemoCommand(program: Command, globals: () => GlobalOptions): void {
  program
    .command('demo')
    .description('boot a dev server, a worker and the model, and run the fork demo on this repository')
    .option('--db <file>', 'SQLite file for the dev server', DEFAULT_DEV_DB)
    .option('--in-memory', 'do not persist the dev server')
    .option('--port <port>', 'gRPC port (default: 7233, or a free one if taken)', (v) => Number(v))
    .option('--ui-port <port>', 'Web UI port (default: 8233, or a free one if taken)', (v) => Number(v))
    .option('--workspace <dir>', 'repository the agents look at', process.cwd())
    .option('--exit', 'stop after the scenario instead of serving until Ctrl-C')
    .option('--stack', 'run on the self-hosted Temporal stack `npm run stack` started, instead of a dev server')
    .action(async (flags: { db: string; inMemory?: boolean; port?: number; uiPort?: number; workspace: string; exit?: boolean; stack?: boolean }) => {
      const settings = forkflowSettings();
      const dbFile = flags.inMemory ? undefined : resolve(flags.db);
      if (dbFile) mkdirSync(dirname(dbFile), { recursive: true });
      const offline = !settings.anthropicApiKey;
      const existingServer = flags.stack ? runningStack() : undefined;
      process.stdout.write(`forkflow demo · model: ${offline ? 'offline emulator (set ANTHROPIC_API_KEY for Anthropic)' : `Anthropic (${settings.model ?? 'default model'})`}\nstarting ${existingServer ? 'a worker and the model on the self-hosted stack' : 'Temporal dev server, worker and model'}...\n`);
      const stack = await withMetricsErrors(async () =>
        startDevStack({
          existingServer,
          server: { dbFile, port: flags.port ?? (await preferredPort(7233)), uiPort: flags.uiPort ?? (await preferredPort(8233)) },
          taskQueue: globals().taskQueue ?? settings.taskQueue,
          workspaceRoot: resolve(flags.workspace),
          anthropicApiKey: settings.anthropicApiKey,
          anthropicBaseUrl: settings.anthropicBaseUrl,
          metricsAddress: await devMetricsAddress(settings.metricsAddress),
          consent: demoConsent(resolve(flags.workspace)),
        }),
      );
      let failed = false;
      try {
        process.stdout.write(`Temporal ${stack.server.address} · Web UI ${stack.server.uiUrl} · worker on "${stack.taskQueue}"\n`);
        if (stack.codecServer) process.stdout.write(`Payloads encrypted · the Web UI decodes them through the codec server at ${stack.codecServer.url}\n`);
        if (stack.metricsUrl) process.stdout.write(`Metrics ${stack.metricsUrl} · live counts: forkflow top --metrics-url ${stack.metricsUrl}\n`);
        const runId = new Date().toISOString().replace(/[-:.TZ]/g, '').slice(0, 14);
        await runDemo({ client: stack.client, offline, uiUrl: stack.server.uiUrl, namespace: stack.server.namespace, runId, address: stack.server.address, workspace: resolve(flags.workspace) });
        if (!flags.exit) {
          process.stdout.write(`\nThe ${existingServer ? 'worker keeps serving the stack' : 'dev server and worker keep serving'}: open ${stack.server.uiUrl}, or try \`forkflow list\` in another shell. Ctrl-C to stop.\n`);
          await untilSignal();
        }
      } catch (err) {
        failed = true;
        process.stderr.write(`demo failed: ${(err as Error).message}\n`);
      } finally {
        process.stdout.write('stopping...\n');
        await stack.stop();
      }
      if (failed) process.exitCode = 1;
    });
}

/** The stack `npm run stack` left running in this folder (with its client certificate when it requires mutual TLS), or a clear error. */
function runningStack() {
  const dir = defaultStackDir();
  const state = readStackState(dir);
  if (!state) throw new CliError(`no self-hosted stack runs here (${dir}): start one with \`npm run stack\``, EXIT.unavailable);
  const tls = stackTlsConfig(state.tls);
  return { address: state.address, namespace: state.namespace, uiUrl: state.uiUrl, ...(tls ? { tls } : {}) };
}
