/**
 * Temporal connection settings from the environment, for clients and workers alike: they come
 * from `@temporalio/envconfig` (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TLS,
 * profiles). Kept on the client floor, so a client never loads worker code.
 */
import { loadClientConnectConfig } from '@temporalio/envconfig';

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
