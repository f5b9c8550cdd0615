/**
 * Worker settings from the environment: forkflow's own few variables. Temporal connection
 * settings (shared with clients) are in src/client/settings.ts.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TASK_QUEUE } from '../shared/constants';

export interface ForkflowSettings {
  taskQueue: string;
  /** Default workspace for tool activities on this worker. */
  workspaceRoot: string;
  anthropicApiKey?: string;
  anthropicBaseUrl?: string;
  model?: string;
  /** FORKFLOW_METRICS_ADDRESS: `ip:port` of the Prometheus endpoint (see src/worker/runtime.ts). */
  metricsAddress?: string;
  /**
   * FORKFLOW_RESPONSE_DIR: where model responses wait until their turn is recorded, so a
   * retried call never bills twice. Workers that may take over each other's calls share it.
   */
  responseDir: string;
  /** FORKFLOW_RESPONSE_JOURNAL: a JSON-lines audit of the responses kept (see FileResponseStore). */
  responseJournal?: string;
  /**
   * FORKFLOW_MODEL_GATEWAY: the URL of a `forkflow gateway` in front of the provider. Model
   * calls go through it, each with its call key, so a call whose worker dies is finished and
   * handed to the retry instead of being paid for again (see src/gateway/gateway.ts).
   */
  modelGateway?: string;
}

/**
 * FORKFLOW_LIVE_STREAM=off: this worker's model calls publish no deltas (forks still end their
 * streams with `done`); FORKFLOW_LIVE_STREAM_BATCH_MS: how often deltas are sent (default 100).
 */
export function liveStreamSettings(env: NodeJS.ProcessEnv = process.env): { enabled: boolean; batchIntervalMs?: number } {
  const ms = Number(env.FORKFLOW_LIVE_STREAM_BATCH_MS);
  return { enabled: env.FORKFLOW_LIVE_STREAM !== 'off', ...(Number.isInteger(ms) && ms > 0 ? { batchIntervalMs: ms } : {}) };
}

export function forkflowSettings(env: NodeJS.ProcessEnv = process.env): ForkflowSettings {
  return {
    taskQueue: env.FORKFLOW_TASK_QUEUE || TASK_QUEUE,
    workspaceRoot: env.FORKFLOW_WORKSPACE || process.cwd(),
    anthropicApiKey: env.ANTHROPIC_API_KEY || undefined,
    anthropicBaseUrl: env.ANTHROPIC_BASE_URL || undefined,
    model: env.FORKFLOW_MODEL || undefined,
    metricsAddress: env.FORKFLOW_METRICS_ADDRESS || undefined,
    responseDir: env.FORKFLOW_RESPONSE_DIR || join(tmpdir(), 'forkflow-responses'),
    responseJournal: env.FORKFLOW_RESPONSE_JOURNAL || undefined,
    modelGateway: env.FORKFLOW_MODEL_GATEWAY || undefined,
  };
}
