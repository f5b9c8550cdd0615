/**
 * Long-running commands: `dev` (dev server + model + worker in one process), `worker` (a
 * worker against an existing cluster) and `serve` (the web view of running agents). All
 * stop cleanly on Ctrl-C / SIGTERM.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { Client, Connection } from '@temporalio/client';
import type { LogLevel } from '@temporalio/common';
import { NativeConnection } from '@temporalio/worker';
import { forkflowConnectionOptions } from '../../client/connection-options';
import { temporalSettings } from '../../client/settings';
import { forkflowSettings, hostQueueOf, modelQueueSettings, workspaceRootsOf } from '../../worker/config';
import { InvalidConsentError, operatorConsent } from '../../worker/consent';
import { forkflowDataConverter, plaintextNotice } from '../../payloads/data-converter';
import { startDevStack } from '../../testing/dev-stack';
import { preferredPort } from '../../worker/dev-server';
import { DEFAULT_CODEC_PORT } from '../../payloads/codec-server';
import { exposureWarning, newToken, TOKEN_PATTERN } from '../../payloads/endpoint-guard';
import { devMetricsAddress, isInvalidMetricsAddress, parseMetricsAddress } from '../../worker/metrics-endpoint';
import { installRuntime, isRuntimeInstallError } from '../../worker/runtime';
import { CliError, EXIT } from '../exit';
import { ensureSearchAttributes } from '../../worker/search-attributes';
import { createModelClient } from '../../worker/model-client';
import { createProviderClients, providersFromEnv } from '../../worker/providers';
import { createForkflowWorker, createModelWorker, createWorkspaceWorker } from '../../worker/worker';
import { DEFAULT_WEB_PORT, startWebView, type WebView } from '../web/server';
import { withClient, type GlobalOptions } from './agents';
import { envSetting } from '../../shared/wire/env-settings';

/** Resolves when the process is asked to stop (Ctrl-C or SIGTERM). */
export function untilSignal(): Promise<string> {
  return new Promise((resolveSignal) => {
    const done = (signal: string) => resolveSignal(signal);
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}

export const DEFAULT_DEV_DB = '.forkflow/dev.db';

/** `--metrics <ip:port>`: checked while parsing, so a typo is a usage error before anything starts. */
export function metricsAddressOption(value: string): string {
  try {
    parseMetricsAddress(value);
    return value;
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

/** `--port <port>` of the long-running servers: checked while parsing (0 picks a free port). */
export function portOption(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidArgumentError(`expected a port number from 0 to 65535, got "${value}"`);
  return port;
}

/** Runs `fn`, turning a bad metrics address or a taken port into a one-line CLI error. */
export async function withMetricsErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isInvalidMetricsAddress(err)) throw new CliError(err.message, EXIT.usage);
    if (isRuntimeInstallError(err)) throw new CliError(err.message, EXIT.failure);
    throw err;
  }
}

/** A repeatable option's values. */
const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** The operator's consent from flags and environment; a bad setting is a usage error that names it. */
function consentOrExit(flags: { mcpCommand?: string[]; agentDir?: string[]; allowBypassPermissions?: boolean }, roots: string[]) {
  try {
    return operatorConsent({ mcpCommands: flags.mcpCommand, agentDirs: flags.agentDir, allowBypassPermissions: flags.allowBypassPermissions }, roots);
  } catch (err) {
    if (err instanceof InvalidConsentError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
}

export function registerServeCommands(program: Command, globals: () => GlobalOptions): void {
  program
    .command('dev')
    .description('run a local dev server (persistent), the model (offline unless ANTHROPIC_API_KEY) and a worker')
    .option('--db <file>', 'SQLite file for the dev server', DEFAULT_DEV_DB)
    .option('--in-memory', 'do not persist the dev server')
    .option('--port <port>', 'gRPC port', (v) => Number(v), 7233)
    .option('--ui-port <port>', 'Web UI port', (v) => Number(v), 8233)
    .option('--workspace <dir>', 'workspace root for tools', process.cwd())
    .option('--metrics <ip:port>', 'serve Prometheus metrics here (default: FORKFLOW_METRICS_ADDRESS, else 127.0.0.1:9464 or a free port)', metricsAddressOption)
    .option('--no-metrics', 'do not serve Prometheus metrics')
    .option('--codec-in-ui', "with encryption keys, hand the Web UI the codec server's tokened endpoint at start (the token is then in the dev server's command line and in the UI's settings, which any local user can read)")
    .action(async (flags: { db: string; inMemory?: boolean; port: number; uiPort: number; workspace: string; metrics?: string | false; codecInUi?: boolean }) => {
      const settings = forkflowSettings();
      const dbFile = flags.inMemory ? undefined : resolve(flags.db);
      if (dbFile) mkdirSync(dirname(dbFile), { recursive: true });
      const plaintext = plaintextNotice(forkflowDataConverter());
      if (plaintext) process.stderr.write(`${plaintext}\n`);
      const stack = await withMetricsErrors(async () =>
        startDevStack({
          server: { dbFile, port: flags.port, uiPort: flags.uiPort },
          taskQueue: globals().taskQueue ?? settings.taskQueue,
          workspaceRoot: resolve(flags.workspace),
          anthropicApiKey: settings.anthropicApiKey,
          anthropicBaseUrl: settings.anthropicBaseUrl,
          metricsAddress: flags.metrics === false ? undefined : await devMetricsAddress(flags.metrics ?? settings.metricsAddress),
          codecServerPort: await preferredPort(DEFAULT_CODEC_PORT),
          codecInUi: flags.codecInUi === true,
        }),
      );
      const codec = stack.codecServer;
      process.stdout.write(
        `Temporal dev server: ${stack.server.address}${dbFile ? ` (db ${dbFile})` : ' (in memory)'}\n` +
          `Web UI:              ${stack.server.uiUrl}\n` +
          `Model:               ${stack.offlineModel ? `offline emulator at ${stack.modelEndpoint}` : stack.modelEndpoint}\n` +
          `Worker:              task queue ${stack.taskQueue}\n` +
          (stack.metricsUrl ? `Metrics:             ${stack.metricsUrl} (forkflow top --metrics-url ${stack.metricsUrl})\n` : '') +
          (codec
            ? flags.codecInUi
              ? `Codec server:        ${codec.url} (payloads encrypted; the Web UI decodes through it)\n`
              : `Codec server:        ${codec.url} (payloads encrypted). To read them in the Web UI, open Settings > Codec Server there and enter\n                     ${codec.endpoint}\n                     (your browser keeps it; the token is not given to the server or other users)\n`
            : '') +
          'Ctrl-C to stop.\n',
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
    .option('--deployment <name>', 'Worker Versioning: the deployment this worker serves a build of (default FORKFLOW_DEPLOYMENT_NAME); needs --build-id')
    .option('--build-id <id>', 'Worker Versioning: this build (default FORKFLOW_BUILD_ID)')
    .option('--host <id>', "this host's id when several hosts serve the queue (default FORKFLOW_HOST_ID): also serves <queue>@<id>, where the tools of the worktrees it creates run")
    .option('--metrics <ip:port>', 'serve Prometheus metrics on http://<ip:port>/metrics (default: FORKFLOW_METRICS_ADDRESS; off when neither)', metricsAddressOption)
    .option('--model-queue <name>', "also serve this model queue (model calls of forks that name it in modelQueue; default FORKFLOW_MODEL_QUEUE)")
    .option('--model-rate <per-minute>', 'the model requests per minute the server hands out on the model queue, across every worker (default FORKFLOW_MODEL_REQUESTS_PER_MINUTE)')
    .option('--require-encrypted-inputs <always|time>', 'with encryption keys, refuse start inputs, signals and updates that are not encrypted for their workflow, always or from an ISO time on (FORKFLOW_REQUIRE_ENCRYPTED_INPUTS)')
    .option('--allow-unsandboxed', 'where the OS sandbox cannot start, run Bash without it (read-only forks behind the classifier alone) instead of refusing it (FORKFLOW_ALLOW_UNSANDBOXED=1)')
    .option('--mcp-command <rule>', 'a stdio MCP command start inputs may make this worker run, e.g. "/usr/bin/node /opt/mcp/server.js ..." (repeatable; added to FORKFLOW_MCP_COMMANDS; docs/guides/security-model.md)', collect)
    .option('--agent-dir <dir>', 'agent definitions whose stdio MCP servers this worker starts as written there; never a directory forks can write (repeatable; added to FORKFLOW_AGENT_DIRS)', collect)
    .option('--allow-bypass-permissions', 'agents in bypassPermissions mode (their starter set allowBypassPermissions) run Bash outside the OS sandbox; otherwise refused (FORKFLOW_ALLOW_BYPASS_PERMISSIONS=1)')
    .action(async (flags: { workspace?: string; identity?: string; workflowBundle?: string; workspaceQueue?: string; host?: string; deployment?: string; buildId?: string; metrics?: string; modelQueue?: string; modelRate?: string; allowUnsandboxed?: boolean; mcpCommand?: string[]; agentDir?: string[]; allowBypassPermissions?: boolean; requireEncryptedInputs?: string }) => {
      // Read by the sandbox probe, which runs when the first worker is created.
      if (flags.allowUnsandboxed) process.env.FORKFLOW_ALLOW_UNSANDBOXED = '1';
      if (flags.requireEncryptedInputs) process.env.FORKFLOW_REQUIRE_ENCRYPTED_INPUTS = flags.requireEncryptedInputs;
      const settings = forkflowSettings();
      let modelQueue: ReturnType<typeof modelQueueSettings>;
      try {
        modelQueue = modelQueueSettings({ queue: flags.modelQueue, rate: flags.modelRate });
      } catch (err) {
        throw new CliError((err as Error).message, EXIT.usage);
      }
      const deploymentName = flags.deployment ?? envSetting(process.env, 'FORKFLOW_DEPLOYMENT_NAME');
      const buildId = flags.buildId ?? envSetting(process.env, 'FORKFLOW_BUILD_ID');
      if (!deploymentName !== !buildId) throw new CliError('Worker Versioning needs both a deployment name and a build id (--deployment and --build-id, or FORKFLOW_DEPLOYMENT_NAME and FORKFLOW_BUILD_ID)', EXIT.usage);
      const deployment = deploymentName && buildId ? { name: deploymentName, buildId } : undefined;
      const taskQueue = globals().taskQueue ?? settings.taskQueue;
      // Before anything connects: a bad consent setting is a usage error.
      const workspaceRoot = resolve(flags.workspace ?? settings.workspaceRoot);
      const consent = consentOrExit(flags, workspaceRootsOf(envSetting(process.env, 'FORKFLOW_WORKSPACE_ROOTS'), workspaceRoot));
      const hostId = flags.host ?? settings.hostId;
      let hostQueue: string | undefined;
      try {
        hostQueue = hostId ? hostQueueOf(taskQueue, hostId) : undefined;
      } catch (err) {
        throw new CliError((err as Error).message, EXIT.usage);
      }
      const temporal = temporalSettings(globals());
      // First: a malformed key list stops the worker before it touches the server.
      const dataConverter = forkflowDataConverter();
      const plaintext = plaintextNotice(dataConverter);
      if (plaintext) process.stderr.write(`${plaintext}\n`);
      const bundle = flags.workflowBundle ?? envSetting(process.env, 'FORKFLOW_WORKFLOW_BUNDLE');
      const logLevel = (envSetting(process.env, 'FORKFLOW_LOG_LEVEL') as LogLevel | undefined) ?? 'INFO';
      const { metricsUrl } = await withMetricsErrors(() => Promise.resolve(installRuntime({ logLevel, metricsAddress: flags.metrics ?? settings.metricsAddress })));
      if (metricsUrl) process.stdout.write(`metrics: ${metricsUrl}\n`);
      const connection = await Connection.connect(forkflowConnectionOptions(temporal.connectionOptions));
      const added = await ensureSearchAttributes(connection, temporal.namespace);
      if (added.length) process.stdout.write(`registered search attributes: ${added.join(', ')}\n`);
      const nativeConnection = await NativeConnection.connect(temporal.connectionOptions);
      const stopping = new AbortController();
      // Every worker of this process shares one connection, client, converter and model client.
      const client = new Client({ connection, namespace: temporal.namespace, dataConverter });
      const anthropic = createModelClient({ apiKey: settings.anthropicApiKey, baseURL: settings.modelGateway ?? settings.anthropicBaseUrl });
      const providers = createProviderClients(providersFromEnv(), anthropic, process.env, settings.modelGateway ? { gateway: settings.modelGateway } : {});
      const on = (queue: string) => ({ connection: nativeConnection, client, dataConverter, namespace: temporal.namespace, taskQueue: queue, hostQueue, stopping: stopping.signal, anthropic, providers, modelGateway: settings.modelGateway, workspaceRoot, consent });
      const workers = [
        await createForkflowWorker({
          ...on(taskQueue),
          deployment,
          identity: flags.identity ?? (hostId ? `${hostId}@${process.pid}` : undefined),
          ...(bundle ? { workflowBundle: { codePath: resolve(bundle) } } : {}),
        }),
      ];
      // Activity-only workers beside it: the host's and workspace's queues (tools), the model queue.
      for (const queue of [hostQueue, flags.workspaceQueue]) if (queue) workers.push(await createWorkspaceWorker(on(queue)));
      if (modelQueue.queue) workers.push(await createModelWorker({ ...on(modelQueue.queue), requestsPerMinute: modelQueue.requestsPerMinute }));
      process.stdout.write(`worker polling ${workers.map((w) => w.options.taskQueue).join(', ')} on ${temporal.address} (${temporal.namespace})\n`);
      const running = Promise.all(workers.map((w) => w.run()));
      await Promise.race([running, untilSignal()]);
      // Calls in flight go back to the server first, so other workers take them at once.
      stopping.abort();
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
      await nativeConnection.close();
      await connection.close();
    });

  program
    .command('serve')
    .description("serve the web view: agents as a tree with live states and counters; the selected agent's tree as a graph, its timeline, token and cost bars, and its text as it streams")
    .option('--ip <ip>', 'address to listen on (beyond loopback: a loud warning)', '127.0.0.1')
    .option('--port <port>', 'port (0: a free one)', portOption, DEFAULT_WEB_PORT)
    .option('--allow-host <name>', 'another name it answers to in the Host header, e.g. a DNS name in front of it (repeatable)', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .action(async (flags: { ip: string; port: number; allowHost?: string[] }) => {
      const given = envSetting(process.env, 'FORKFLOW_WEB_TOKEN') || undefined;
      if (given !== undefined && !TOKEN_PATTERN.test(given)) throw new CliError('FORKFLOW_WEB_TOKEN must be at least 16 characters of A-Z a-z 0-9 . _ ~ - (e.g. `openssl rand -hex 32`).', EXIT.usage);
      const token = given ?? newToken();
      const warning = exposureWarning('web view', flags.ip);
      if (warning) process.stderr.write(`${warning}\n`);
      await withClient(globals(), async (forkflow) => {
        let view: WebView;
        try {
          view = await startWebView({ forkflow, ip: flags.ip, port: flags.port, token, ...(flags.allowHost ? { allowHosts: flags.allowHost } : {}) });
        } catch (err) {
          throw new CliError(`Cannot listen on ${flags.ip}:${flags.port} (${(err as Error).message}): choose another --port.`, EXIT.failure);
        }
        process.stdout.write(
          `web view: ${view.url} (agents of ${forkflow.temporal.options.namespace}; Ctrl-C to stop)\n` +
            `open: ${view.loginUrl} (signs the browser in; the token ${given ? 'is FORKFLOW_WEB_TOKEN' : 'was made for this run: set FORKFLOW_WEB_TOKEN to keep one'})\n`,
        );
        await untilSignal();
        await view.close();
      });
    });
}
