/**
 * What a ForkflowClient is configured with (task and model queues, outage riding, default
 * tools), read from the environment by `connect()`, and how the default tools join a fork's
 * own input; plus the default agent id's slug.
 */
import { Client, type Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { DataConverter } from '@temporalio/common';
import { forkflowDataConverter } from '../payloads/data-converter';
import type { ForkInputJson } from '../shared/wire/fork-input';
import { temporalSettings } from './settings';
import { connectRidingOutages, type OutageOptions } from './outage';
import { mergeHooks } from '../shared/tools/hooks';
import { envSetting } from '../shared/wire/env-settings';

export interface ForkflowClientOptions {
  taskQueue?: string;
  /**
   * Riding out a Temporal outage: `result()`, `status()`, `transcript()`, `list()`, `tree()`,
   * `watch()` and `connect()` retry while the server is unreachable, for up to
   * `outage.deadlineMs` (default 5 minutes), then throw one `TemporalUnavailableError`.
   * Calls that are not safe to repeat (start, send, cancel, approve) are not retried.
   */
  outage?: OutageOptions;
  /**
   * The model queue of the forks this client starts, unless a fork names its own: a queue
   * served by `forkflow worker --model-queue`, where the server keeps one request limit for
   * every worker. `connect()` defaults it to FORKFLOW_MODEL_QUEUE.
   */
  modelQueue?: string;
  /**
   * Tools every fork this client starts gets, after its own: routes to a service's queues,
   * MCP servers (a fork's own server of the same name wins) and hooks (a fork's own run first).
   * See README "Your own tools".
   */
  defaults?: Pick<ForkInputJson, 'routes' | 'mcpServers' | 'hooks'>;
}

/** A fork's input with the client's default tools added (its own first). */
export function withToolDefaults(input: ForkInputJson, defaults: ForkflowClientOptions['defaults']): ForkInputJson {
  if (!defaults) return input;
  const routes = [...(input.routes ?? []), ...(defaults.routes ?? [])];
  const mcpServers = { ...defaults.mcpServers, ...input.mcpServers };
  const hooks = mergeHooks(input.hooks, defaults.hooks);
  return {
    ...input,
    ...(routes.length ? { routes } : {}),
    ...(Object.keys(mcpServers).length ? { mcpServers } : {}),
    ...(hooks ? { hooks } : {}),
  };
}

/** A fork label as the readable part of a generated agent id. */
export function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40) || 'fork';
}

/**
 * What `ForkflowClient.connect` builds its client from: a Temporal client on a connection made
 * from `@temporalio/envconfig` settings (an outage ridden out), and the options with the
 * queues' environment defaults filled in.
 */
export async function connectTemporal(opts: ForkflowClientOptions & { address?: string; namespace?: string; dataConverter?: DataConverter }): Promise<{ temporal: Client; connection: Connection; options: ForkflowClientOptions }> {
  const settings = temporalSettings(opts);
  // Before connecting: a malformed key list fails at once, not after an outage wait.
  const dataConverter = opts.dataConverter ?? forkflowDataConverter();
  const connection = await connectRidingOutages(settings.connectionOptions, opts.outage);
  // Forks started inside a traced request join its trace.
  const interceptors = { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
  // The task queue's default is the worker's (FORKFLOW_TASK_QUEUE), so a client and a worker
  // configured by the same environment meet on one queue.
  const taskQueue = opts.taskQueue ?? (envSetting(process.env, 'FORKFLOW_TASK_QUEUE') || undefined);
  const modelQueue = opts.modelQueue ?? (envSetting(process.env, 'FORKFLOW_MODEL_QUEUE') || undefined);
  const temporal = new Client({ connection, namespace: settings.namespace, interceptors, dataConverter });
  return { temporal, connection, options: { ...opts, ...(taskQueue ? { taskQueue } : {}), ...(modelQueue ? { modelQueue } : {}) } };
}
