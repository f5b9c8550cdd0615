/** The self-hosted stack's rendered configs (scripts/stack/config.ts). */
import { parse } from 'yaml';
import { DEFAULT_PORTS, dynamicConfig, portsFrom, serverConfig, StackPorts, uiConfig } from '../../../scripts/stack/config';

interface Sql { pluginName: string; databaseName: string; connectAddr: string }
interface ServerYaml {
  persistence: { defaultStore: string; visibilityStore: string; datastores: Record<string, { sql: Sql }> };
  services: Record<string, { rpc: { grpcPort: number; httpPort?: number; membershipPort: number } }>;
  dynamicConfigClient: { filepath: string };
}
type DynamicYaml = Record<string, { value: unknown; constraints: object }[]>;
interface UiYaml { temporalGrpcAddress: string; port: number; codec: { endpoint: string } }

test('the server config puts persistence and visibility on the postgres12 plugin at the stack ports', () => {
  const ports = portsFrom(21000);
  const config = parse(serverConfig({ ports, dynamicConfigFile: '/x/dc.yaml' })) as ServerYaml;
  const stores = config.persistence.datastores;
  expect(stores[config.persistence.defaultStore]!.sql).toMatchObject({ pluginName: 'postgres12', databaseName: 'temporal', connectAddr: '127.0.0.1:21010' });
  expect(stores[config.persistence.visibilityStore]!.sql).toMatchObject({ pluginName: 'postgres12', databaseName: 'temporal_visibility', connectAddr: '127.0.0.1:21010' });
  expect(config.services.frontend!.rpc).toMatchObject({ grpcPort: 21000, httpPort: 21001, membershipPort: 21005 });
  const grpc = ['frontend', 'history', 'matching', 'worker'].map((s) => config.services[s]!.rpc.grpcPort);
  expect(new Set(grpc).size).toBe(4);
  expect(config.dynamicConfigClient.filepath).toBe('/x/dc.yaml');
});

test('membership ports at or above 32768 are refused: the server stores them in a smallint', () => {
  expect(() => portsFrom(32760)).toThrow(/below 32768/);
  expect(StackPorts.safeParse(DEFAULT_PORTS).success).toBe(true);
});

test('dynamic config turns on fairness and keeps the dev server timer tuning, in the server file format', () => {
  const config = parse(dynamicConfig({ 'matching.numTaskqueueReadPartitions': 2 })) as DynamicYaml;
  expect(config['matching.enableFairness']).toEqual([{ value: true, constraints: {} }]);
  expect(config['history.timerProcessorMaxTimeShift']).toEqual([{ value: '10ms', constraints: {} }]);
  // The dev server dispatches activities eagerly; the stack does not, as that would bypass fairness.
  expect(config['system.enableActivityEagerExecution']).toEqual([{ value: false, constraints: {} }]);
  // One partition by default (fairness holds per partition); an extra value overrides it.
  expect(config['matching.numTaskqueueWritePartitions']).toEqual([{ value: 1, constraints: {} }]);
  expect(config['matching.numTaskqueueReadPartitions']).toEqual([{ value: 2, constraints: {} }]);
  expect((parse(dynamicConfig()) as DynamicYaml)['matching.numTaskqueueReadPartitions']).toEqual([{ value: 1, constraints: {} }]);
});

test('the Web UI points at the frontend, and at the codec server only when one is given', () => {
  const ports = portsFrom(22000);
  expect(parse(uiConfig({ ports })) as UiYaml).toMatchObject({ temporalGrpcAddress: '127.0.0.1:22000', port: 22011, codec: { endpoint: '' } });
  expect((parse(uiConfig({ ports, codecEndpoint: 'http://127.0.0.1:9999' })) as UiYaml).codec.endpoint).toBe('http://127.0.0.1:9999');
});
