/**
 * Worker and client settings from the environment. Temporal connection settings come from
 * `@temporalio/envconfig` (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TLS,
 * profiles); forkflow adds only its own few variables.
 */
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { TASK_QUEUE } from '../shared/constants';

export interface TemporalSettings {
  address: string;
  namespace: string;
  connectionOptions: ReturnType<typeof loadClientConnectConfig>['connectionOptions'];
}

/** Connection settings; explicit overrides win over the environment and config profiles. */
export function temporalSettings(overrides: { address?: string; namespace?: string } = {}): TemporalSettings {
  const loaded = loadClientConnectConfig();
  const connectionOptions = { ...loaded.connectionOptions };
  if (overrides.address) connectionOptions.address = overrides.address;
  return {
    address: connectionOptions.address ?? 'localhost:7233',
    namespace: overrides.namespace ?? loaded.namespace ?? 'default',
    connectionOptions: { ...connectionOptions, address: connectionOptions.address ?? 'localhost:7233' },
  };
}

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
