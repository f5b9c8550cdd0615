/**
 * Worker settings from the environment: forkflow's own few variables. Temporal connection
 * settings (shared with clients) are in src/client/settings.ts.
 */
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
}

export function forkflowSettings(env: NodeJS.ProcessEnv = process.env): ForkflowSettings {
  return {
    taskQueue: env.FORKFLOW_TASK_QUEUE || TASK_QUEUE,
    workspaceRoot: env.FORKFLOW_WORKSPACE || process.cwd(),
    anthropicApiKey: env.ANTHROPIC_API_KEY || undefined,
    anthropicBaseUrl: env.ANTHROPIC_BASE_URL || undefined,
    model: env.FORKFLOW_MODEL || undefined,
    metricsAddress: env.FORKFLOW_METRICS_ADDRESS || undefined,
  };
}
