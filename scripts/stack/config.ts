/**
 * The self-hosted stack's configuration files, rendered from one port layout: the Temporal
 * server's (persistence and visibility on PostgreSQL through the `postgres12` plugin), its
 * dynamic config, and the Web UI server's. Pure functions, so a test can check them.
 */
import { stringify } from 'yaml';
import { DEV_SERVER_TUNING } from '../../src/worker/dev-server';
import type { StackTls } from './tls';

/** Every port the stack listens on, all on 127.0.0.1 (schema shared with its state file). */
import { StackState } from '../../src/client/stack-state';
export const StackPorts = StackState.shape.ports;
export type StackPorts = StackState['ports'];

/** The ports a stack uses when none are given: the usual Temporal ones, so clients need no setting. */
export const DEFAULT_PORTS: StackPorts = {
  frontend: 7233,
  frontendHttp: 7243,
  history: 7234,
  matching: 7235,
  worker: 7239,
  membership: [6933, 6934, 6935, 6939],
  metrics: 9090,
  postgres: 55432,
  ui: 8080,
};

/** Consecutive ports from `base` (tests pick a free block). */
export function portsFrom(base: number): StackPorts {
  return StackPorts.parse({
    frontend: base,
    frontendHttp: base + 1,
    history: base + 2,
    matching: base + 3,
    worker: base + 4,
    membership: [base + 5, base + 6, base + 7, base + 8],
    metrics: base + 9,
    postgres: base + 10,
    ui: base + 11,
  });
}

export const DATABASES = { persistence: 'temporal', visibility: 'temporal_visibility' } as const;
export const DB_USER = 'temporal';

/**
 * Dynamic config: the dev server's tuning (timers fire on time), plus the server-side
 * features forkflow's stack relies on — fairness across tree roots on task queues, and
 * worker deployments for versioned upgrades.
 */
export function dynamicConfig(extra: Record<string, unknown> = {}): string {
  const values: Record<string, unknown> = {
    ...DEV_SERVER_TUNING,
    'matching.enableFairness': true,
    // One partition per task queue. Fairness orders each partition's backlog on its own: with
    // the default four, a small tree's model call still waited behind 29 of a big tree's 38
    // (test/stack/fairness.test.ts); with one it waits behind at most the calls already being
    // handed out. One partition carries far more tasks per second than one machine's workers.
    'matching.numTaskqueueReadPartitions': 1,
    'matching.numTaskqueueWritePartitions': 1,
    // An eagerly dispatched activity goes to the worker that scheduled it, past the queue and
    // its fairness: a busy tree's turns would take every slot that frees up.
    'system.enableActivityEagerExecution': false,
    'system.enableDeploymentVersions': true,
    'frontend.workerVersioningWorkflowAPIs': true,
    ...extra,
  };
  return stringify(Object.fromEntries(Object.entries(values).map(([key, value]) => [key, [{ value, constraints: {} }]])));
}

/**
 * With `tls` (FORKFLOW_STACK_MTLS=1, tls.ts): the frontend and the internal services speak TLS
 * and require a client certificate signed by the stack's CA; Temporal's system worker presents
 * one of its own. Membership (ringpop) has no TLS in Temporal: it listens on loopback only.
 */
function tlsConfig(tls: StackTls): Record<string, unknown> {
  const server = { certFile: tls.server.cert, keyFile: tls.server.key, clientCaFiles: [tls.ca], requireClientAuth: true };
  const client = { serverName: tls.serverName, rootCaFiles: [tls.ca] };
  return {
    frontend: { server, client },
    internode: { server, client },
    systemWorker: { certFile: tls.system.cert, keyFile: tls.system.key, client },
  };
}

export function serverConfig(o: { ports: StackPorts; dynamicConfigFile: string; logLevel?: string; tls?: StackTls }): string {
  const datastore = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `127.0.0.1:${o.ports.postgres}`,
      connectProtocol: 'tcp',
      user: DB_USER,
      password: '',
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra: Record<string, unknown> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...extra },
  });
  const [fe, hi, ma, wo] = o.ports.membership;
  return stringify({
    log: { stdout: true, level: o.logLevel ?? 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: 4,
      datastores: { 'postgres-default': datastore(DATABASES.persistence, 20), 'postgres-visibility': datastore(DATABASES.visibility, 4) },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      metrics: { prometheus: { framework: 'tally', timerType: 'histogram', listenAddress: `127.0.0.1:${o.ports.metrics}` } },
      ...(o.tls ? { tls: tlsConfig(o.tls) } : {}),
    },
    services: {
      frontend: service(o.ports.frontend, fe, { httpPort: o.ports.frontendHttp }),
      history: service(o.ports.history, hi),
      matching: service(o.ports.matching, ma),
      worker: service(o.ports.worker, wo),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${o.ports.frontend}` } },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: o.dynamicConfigFile, pollInterval: '10s' },
  });
}

/**
 * The Web UI server's config (its `--env` file), with the codec server when payloads are
 * encrypted. With `tls` it reaches the frontend with a certificate of its own and is
 * read-only (its server refuses every write): it has no login, so whoever reaches its port
 * would otherwise act with its certificate.
 */
export function uiConfig(o: { ports: StackPorts; codecEndpoint?: string; tls?: StackTls }): string {
  return stringify({
    temporalGrpcAddress: `127.0.0.1:${o.ports.frontend}`,
    host: '127.0.0.1',
    port: o.ports.ui,
    enableUi: true,
    defaultNamespace: 'default',
    disableNewsFetch: true,
    notifyOnNewVersion: false,
    refreshInterval: '0s',
    cors: { cookieInsecure: true, allowOrigins: [`http://127.0.0.1:${o.ports.ui}`, `http://localhost:${o.ports.ui}`] },
    codec: { endpoint: o.codecEndpoint ?? '', passAccessToken: false, includeCredentials: false },
    ...(o.tls
      ? {
          tls: { caFile: o.tls.ca, certFile: o.tls.ui.cert, keyFile: o.tls.ui.key, serverName: o.tls.serverName, enableHostVerification: true },
          disableWriteActions: true,
        }
      : {}),
  });
}
