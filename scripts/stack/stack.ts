/**
 * A self-hosted Temporal stack on this machine, without Docker: PostgreSQL, the Temporal
 * server on it (persistence and visibility), the schemas set up and updated by the server's
 * own SQL tool, the `default` namespace with forkflow's search attributes, and the Web UI
 * server. The same topology as docker-compose.yml, from pinned builds in .tools/.
 *
 * `startStack` is used by `npm run stack` (scripts/stack/main.ts, processes left running,
 * recorded in `stack.json`) and by the stack tests (processes owned by the test, which kills
 * and restarts them to test server and database loss).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { readStackState, stackStatePath, stackTlsConfig, type StackState } from '../../src/client/stack-state';
import { ensureSearchAttributes } from '../../src/worker/search-attributes';
import { DATABASES, DB_USER, DEFAULT_PORTS, dynamicConfig, serverConfig, StackPorts, uiConfig } from './config';
import { Postgres } from './postgres';
import { ensureStackTls, mtlsRequested, type StackTls } from './tls';

export const ROOT = resolve(__dirname, '..', '..');
export const SERVER_VERSION = 'v1.32.1';
export const DEFAULT_STACK_DIR = join(ROOT, '.forkflow', 'stack');
/** The state `npm run stack` left in the default folder. */
export const readDefaultStack = () => readStackState(DEFAULT_STACK_DIR);
const TOOLS = join(ROOT, '.tools', `temporal-server-${SERVER_VERSION}`);
const NAMESPACE = 'default';

export interface StackOptions {
  /** Folder for data, configs and logs (default `.forkflow/stack`). */
  dir?: string;
  ports?: StackPorts;
  /** Leave the processes running after this process exits (`npm run stack`). */
  detached?: boolean;
  /** Codec server the Web UI decodes payloads through, when payloads are encrypted. */
  codecEndpoint?: string;
  /** Extra dynamic config values (tests). */
  dynamicConfig?: Record<string, unknown>;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /**
   * Require mutual TLS at the frontend and between the server's services, with certificates
   * made into `<dir>/tls` (tls.ts). Default: FORKFLOW_STACK_MTLS=1.
   */
  mtls?: boolean;
}

export interface Stack {
  readonly address: string;
  readonly namespace: string;
  readonly uiUrl: string;
  readonly dir: string;
  readonly postgres: Postgres;
  /** With mutual TLS: the stack's certificates (`client` is forkflow's). */
  readonly tls?: StackTls;
  /** What a client needs to connect (address and, with mutual TLS, its TLS settings). */
  readonly connectionOptions: { address: string; tls?: NonNullable<ReturnType<typeof stackTlsConfig>> };
  /** Timings of this start, in ms. */
  readonly timings: Record<string, number>;
  /** SIGKILLs the Temporal server process (server loss). */
  killServer(): Promise<void>;
  /** Starts the Temporal server again on the same database; resolves once it serves. */
  startServer(): Promise<void>;
  /** Stops and starts PostgreSQL (fast shutdown, so open connections break). */
  restartPostgres(): Promise<void>;
  stop(): Promise<void>;
}

/** Builds what is missing (first time: minutes), then brings the stack up. */
export async function startStack(o: StackOptions = {}): Promise<Stack> {
  const log = o.log ?? (() => undefined);
  const dir = o.dir ?? DEFAULT_STACK_DIR;
  const ports = StackPorts.parse(o.ports ?? DEFAULT_PORTS);
  const timings: Record<string, number> = {};
  const timed = async <T>(name: string, fn: () => T | Promise<T>): Promise<T> => {
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      timings[name] = Date.now() - t0;
    }
  };
  mkdirSync(join(dir, 'logs'), { recursive: true });

  const pgBin = await timed('tools', () => {
    installer('install-temporal-server.sh', log);
    return installer('install-postgres.sh', log);
  });
  const postgres = new Postgres({ bin: pgBin, dir, port: ports.postgres });
  await timed('postgres', () => {
    postgres.init();
    if (!postgres.running()) postgres.start();
  });
  await timed('schema', () => setUpSchemas(ports.postgres));

  const tls = (o.mtls ?? mtlsRequested()) ? await timed('tls', () => ensureStackTls(dir)) : undefined;
  const configFile = join(dir, 'temporal-server.yaml');
  const dynamicConfigFile = join(dir, 'dynamic-config.yaml');
  writeFileSync(dynamicConfigFile, dynamicConfig(o.dynamicConfig));
  writeFileSync(configFile, serverConfig({ ports, dynamicConfigFile, ...(tls ? { tls } : {}) }));
  const address = `127.0.0.1:${ports.frontend}`;
  const stateTls = tls ? { ca: tls.ca, cert: tls.client.cert, key: tls.client.key, serverName: tls.serverName } : undefined;
  const sdkTls = stackTlsConfig(stateTls);
  const connectionOptions = { address, ...(sdkTls ? { tls: sdkTls } : {}) };
  const uiUrl = `http://127.0.0.1:${ports.ui}`;

  let server: ChildProcess | undefined;
  const startServer = async () => {
    server = launch(join(TOOLS, 'temporal-server'), ['--config-file', configFile, '--allow-no-auth', 'start'], join(dir, 'logs', 'temporal-server.log'), !!o.detached);
    await waitForServer(connectionOptions, server, join(dir, 'logs', 'temporal-server.log'));
  };
  await timed('server', startServer);
  await timed('namespace', () => registerNamespace(connectionOptions));

  const uiDir = join(dir, 'ui');
  mkdirSync(uiDir, { recursive: true });
  writeFileSync(join(uiDir, 'stack.yaml'), uiConfig({ ports, codecEndpoint: o.codecEndpoint, ...(tls ? { tls } : {}) }));
  const ui = launch(join(TOOLS, 'temporal-ui-server'), ['--root', dir, '--config', 'ui', '--env', 'stack', 'start'], join(dir, 'logs', 'temporal-ui.log'), !!o.detached);
  await timed('ui', () => waitForHttp(uiUrl, ui));

  if (o.detached) {
    const state: StackState = { v: 1, address, namespace: NAMESPACE, uiUrl, ports, pids: { server: server!.pid!, ui: ui.pid! }, startedAt: new Date().toISOString(), ...(stateTls ? { tls: stateTls } : {}) };
    writeFileSync(stackStatePath(dir), `${JSON.stringify(state, null, 2)}\n`);
  }

  const killServer = async () => {
    const child = server;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  };
  return {
    address,
    namespace: NAMESPACE,
    uiUrl,
    dir,
    postgres,
    ...(tls ? { tls } : {}),
    connectionOptions,
    timings,
    killServer,
    startServer,
    restartPostgres() {
      postgres.stop();
      postgres.start();
      return Promise.resolve();
    },
    async stop() {
      await stopChild(ui);
      if (server) await stopChild(server);
      postgres.stop();
    },
  };
}

/** Stops what `npm run stack` left running. */
export async function stopStack(dir = DEFAULT_STACK_DIR): Promise<boolean> {
  const state = readStackState(dir);
  for (const pid of state ? [state.pids.ui, state.pids.server] : []) await stopPid(pid);
  const bin = existsSync(join(dir, 'postgres', 'data')) ? installer('install-postgres.sh', () => undefined) : undefined;
  if (bin) new Postgres({ bin, dir, port: state?.ports.postgres ?? DEFAULT_PORTS.postgres }).stop();
  if (state) writeFileSync(stackStatePath(dir), '');
  return !!state;
}

function installer(script: string, log: (line: string) => void): string {
  const result = spawnSync('bash', [join(ROOT, 'scripts', script)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  for (const line of result.stderr.split('\n').filter(Boolean)) log(line);
  if (result.status !== 0) throw new Error(`${script} failed: ${result.stderr.trim().slice(-2000)}`);
  return result.stdout.trim();
}

/**
 * Creates both databases and their schemas on first start, and updates them to the server's
 * versioned schema on every start (the SQL tool applies only what is missing).
 */
function setUpSchemas(port: number): void {
  const tool = join(TOOLS, 'temporal-sql-tool');
  const base = ['--plugin', 'postgres12', '--ep', '127.0.0.1', '-p', String(port), '-u', DB_USER];
  const run = (args: string[]) => spawnSync(tool, [...base, ...args], { encoding: 'utf8' });
  for (const [db, folder] of [[DATABASES.persistence, 'temporal'], [DATABASES.visibility, 'visibility']] as const) {
    const create = run(['--db', db, 'create-database']);
    if (create.status === 0) {
      const setup = run(['--db', db, 'setup-schema', '-v', '0.0']);
      if (setup.status !== 0) throw new Error(`schema setup of ${db} failed: ${setup.stderr.slice(-2000)}`);
    } else if (!/already exists/.test(create.stderr + create.stdout)) {
      throw new Error(`creating database ${db} failed: ${(create.stderr + create.stdout).slice(-2000)}`);
    }
    const update = run(['--db', db, 'update-schema', '-d', join(TOOLS, 'schema', 'postgresql', 'v12', folder, 'versioned')]);
    if (update.status !== 0) throw new Error(`schema update of ${db} failed: ${update.stderr.slice(-2000)}`);
  }
}

function launch(path: string, args: string[], logFile: string, detached: boolean): ChildProcess {
  const fd = openSync(logFile, 'a');
  const child = spawn(path, args, { stdio: ['ignore', fd, fd], detached, cwd: ROOT });
  closeSync(fd);
  if (detached) child.unref();
  else process.once('exit', () => child.kill('SIGKILL'));
  return child;
}

function exitedWhy(child: ChildProcess, logFile: string): string | undefined {
  if (child.exitCode === null && child.signalCode === null) return undefined;
  const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n') : '';
  return `exited (${child.signalCode ?? `code ${child.exitCode}`}); last lines of ${logFile}:\n${tail}`;
}

/** Start-up polling of a process we just launched (not test synchronisation). */
async function waitForServer(options: Stack['connectionOptions'], child: ChildProcess, logFile: string): Promise<void> {
  const { address } = options;
  const deadline = Date.now() + 120_000;
  let last: unknown;
  while (Date.now() < deadline) {
    const why = exitedWhy(child, logFile);
    if (why) throw new Error(`the Temporal server ${why}`);
    try {
      const connection = await Connection.connect({ ...options, connectTimeout: 1000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`the Temporal server at ${address} did not answer within 120 s: ${String(last)}`);
}

async function registerNamespace(options: Stack['connectionOptions']): Promise<void> {
  const connection = await Connection.connect(options);
  try {
    try {
      await connection.workflowService.registerNamespace({ namespace: NAMESPACE, workflowExecutionRetentionPeriod: msToTs('3 days') });
    } catch (err) {
      if (!/already exists/i.test(String(err))) throw err;
    }
    // A new namespace reaches every service's cache within seconds; retry until it does.
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await connection.workflowService.describeNamespace({ namespace: NAMESPACE });
        await ensureSearchAttributes(connection, NAMESPACE);
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } finally {
    await connection.close();
  }
}

async function waitForHttp(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the Web UI server exited (code ${child.exitCode})`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the Web UI server at ${url} did not answer within 60 s`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Stops a process `npm run stack` started, unless its pid now belongs to something else. */
async function stopPid(pid: number): Promise<void> {
  const cmdline = `/proc/${pid}/cmdline`;
  if (existsSync(cmdline) && !readFileSync(cmdline, 'utf8').includes(TOOLS)) return;
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive()) process.kill(pid, 'SIGKILL');
}
