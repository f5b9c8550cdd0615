/**
 * Starts `temporal server start-dev` (the demo: persistent SQLite file; tests: in memory),
 * with the Web UI and forkflow's search attributes, waits until it answers, and stops it
 * cleanly on request, on process exit, or on Ctrl-C. Spawning the binary ourselves (rather
 * than through the SDK) gives us a start-up wait longer than the SDK's fixed 5 s, a known
 * port, the server's log, and restarts on the same database file.
 */
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { withoutSecrets } from '../activities/child-env';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { SA, searchAttributeFlags } from '../shared/wire/search-attributes';
import { resolveTemporalCli, type TemporalCli } from './temporal-cli';

/**
 * Latency tuning applied to every dev server forkflow starts (callers' values win). The dev
 * server is a single history shard, and by default that shard reads new transfer tasks at
 * most 20 times a second, which adds ~30 ms to every workflow task (measured: a bare
 * activity round trip falls from 42.7 ms to 10.7 ms with this raised). Self-hosted clusters
 * with few shards benefit from the same settings.
 */
export const DEV_SERVER_TUNING: Readonly<Record<string, unknown>> = {
  'history.transferProcessorMaxPollRPS': 1000,
  'history.timerProcessorMaxPollRPS': 1000,
  // Timers (and so activity retries and heartbeat timeouts) fire up to this late; the
  // default 1 s adds a second to every retry after a lost worker (bench:recovery).
  'history.timerProcessorMaxTimeShift': '10ms',
  // An activity scheduled on the workflow's own task queue comes back in the response to the
  // workflow task that scheduled it, when the worker has a slot free: no trip through
  // matching. A model turn is 2–5 ms shorter (bench: 26–30 → 23–25 ms). It bypasses the task
  // queue's ordering, so the self-hosted stack, which orders by fairness, turns it off.
  'system.enableActivityEagerExecution': true,
};

export interface DevServerOptions {
  /** SQLite file for persistence; omit for an in-memory server. */
  dbFile?: string;
  ip?: string;
  /** Front-end gRPC port; default a free port. */
  port?: number;
  /** Web UI port; default a free port. Ignored when `headless`. */
  uiPort?: number;
  headless?: boolean;
  namespace?: string;
  /** `--dynamic-config-value` entries, e.g. `{ 'limit.historyCount.error': 500 }`. */
  dynamicConfig?: Record<string, unknown>;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** Where the server's own output goes (default: discarded, last lines kept for errors). */
  output?: 'inherit' | 'ignore';
  /** Called with each line of the server's own output (not with `output: 'inherit'`; the CLI server only). */
  onLine?: (line: string) => void;
  /** `--ui-codec-endpoint`: the Web UI decodes payloads through this codec server. */
  uiCodecEndpoint?: string;
  /** How long to wait for the server to answer (default 60 s). */
  startTimeoutMs?: number;
  cli?: TemporalCli;
}

export interface DevServer {
  readonly address: string;
  readonly namespace: string;
  readonly uiUrl?: string;
  readonly dbFile?: string;
  readonly options: DevServerOptions;
  stop(): Promise<void>;
}

export async function freePort(ip = '127.0.0.1'): Promise<number> {
  const server = createServer();
  server.listen(0, ip);
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('could not allocate a port');
  return address.port;
}

/** `preferred` when nothing listens there, otherwise a free port (so a second stack still starts). */
export async function preferredPort(preferred: number, ip = '127.0.0.1'): Promise<number> {
  const server = createServer();
  try {
    server.listen(preferred, ip);
    await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => Promise.reject(err as Error))]);
    server.close();
    await once(server, 'close');
    return preferred;
  } catch {
    return freePort(ip);
  }
}

/** A server that exited before it answered: another process may have taken a port it picked. */
class ExitedAtStart extends Error {}

/** Polls the front end until `GetSystemInfo` answers (a start-up wait, not test sync). */
async function waitForFrontend(address: string, namespace: string, deadline: number, exited: () => string | undefined): Promise<void> {
  let lastError: unknown;
  while (Date.now() < deadline) {
    const why = exited();
    if (why) throw new ExitedAtStart(why);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.getSystemInfo({});
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`Temporal dev server at ${address} did not answer in time: ${String(lastError)}`);
}

function devServerArgs(o: Required<Pick<DevServerOptions, 'ip' | 'port' | 'namespace' | 'logLevel'>> & DevServerOptions): string[] {
  const args = ['server', 'start-dev', '--ip', o.ip, '--port', String(o.port), '--log-level', o.logLevel, '--namespace', o.namespace];
  if (o.headless) args.push('--headless');
  else args.push('--ui-port', String(o.uiPort), '--ui-disable-news-fetch', ...(o.uiCodecEndpoint ? ['--ui-codec-endpoint', o.uiCodecEndpoint] : []));
  if (o.dbFile) args.push('--db-filename', o.dbFile);
  for (const flag of searchAttributeFlags()) args.push('--search-attribute', flag);
  for (const [key, value] of Object.entries({ ...DEV_SERVER_TUNING, ...o.dynamicConfig })) args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  return args;
}

/** How often a server that exits before it answers is started again. */
const START_ATTEMPTS = 3;

/**
 * Starts a dev server; resolves once it accepts connections. The CLI binds ports of its own
 * besides `port` (HTTP, metrics, its services'), picked free at its start: a process on the
 * same machine can take one first, and the server then exits at once. Such a start is tried
 * again, on a fresh port unless the caller chose one.
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDevServerOnce(options);
    } catch (err) {
      if (!(err instanceof ExitedAtStart) || attempt >= START_ATTEMPTS) throw err;
    }
  }
}

/**
 * The database the dev server writes holds every payload (prompts, files, replies when not
 * encrypted): it and its journal files are the worker user's alone (0600), in a folder of
 * its own (0700 when this creates it). The server creates them itself (an empty file is not
 * a database to it), under the umask it was started with (`spawnPrivate`); files an older
 * start left open to others are tightened here.
 */
export function privateDatabase(dbFile: string): void {
  const dir = path.dirname(dbFile);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const suffix of ['', '-wal', '-shm', '-journal']) {
    try {
      chmodSync(`${dbFile}${suffix}`, 0o600);
    } catch {
      // not there (yet)
    }
  }
}

/** Spawns with umask 077, so whatever the child creates is its user's alone (the child inherits the umask at spawn). */
function spawnPrivate(...args: Parameters<typeof spawn>): ChildProcess {
  const previous = process.umask(0o077);
  try {
    return spawn(...args);
  } finally {
    process.umask(previous);
  }
}

async function startDevServerOnce(options: DevServerOptions): Promise<DevServer> {
  if (options.dbFile) privateDatabase(options.dbFile);
  const ip = options.ip ?? '127.0.0.1';
  const namespace = options.namespace ?? 'default';
  const port = options.port ?? (await freePort(ip));
  const uiPort = options.headless ? undefined : (options.uiPort ?? (await freePort(ip)));
  const cli = options.cli ?? resolveTemporalCli();
  const resolved = { ...options, ip, namespace, port, uiPort, logLevel: options.logLevel ?? 'warn' };
  const address = `${ip}:${port}`;
  const uiUrl = uiPort ? `http://${ip}:${uiPort}` : undefined;
  if (cli.kind === 'sdk-download') return startThroughSdk(resolved, address, uiUrl);

  // The dev server needs none of the worker's secrets (src/activities/child-env.ts).
  const child = spawnPrivate(cli.path, devServerArgs(resolved), { env: withoutSecrets(), stdio: ['ignore', options.output === 'inherit' ? 'inherit' : 'pipe', options.output === 'inherit' ? 'inherit' : 'pipe'] });
  // The first lines say why (a panic's reason), the last where.
  const head: string[] = [];
  const tail: string[] = [];
  let seen = 0;
  const keep = (chunk: Buffer) => {
    const lines = chunk.toString('utf8').split('\n').filter(Boolean);
    if (options.onLine) for (const line of lines) options.onLine(line);
    seen += lines.length;
    head.push(...lines.slice(0, Math.max(0, 5 - head.length)));
    tail.push(...lines);
    tail.splice(0, Math.max(0, tail.length - 20));
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exit: string | undefined;
  child.once('exit', (code, signal) => {
    const dropped = head.slice(0, seen - tail.length);
    const output = dropped.length > 0 ? `${dropped.join(' | ')} | … | ${tail.join(' | ')}` : tail.join(' | ');
    exit = `Temporal dev server exited (${signal ?? `code ${code}`}): ${output || 'no output'}`;
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  try {
    await waitForFrontend(address, namespace, Date.now() + (options.startTimeoutMs ?? 60_000), () => exit);
  } catch (err) {
    child.kill('SIGKILL');
    process.removeListener('exit', killOnExit);
    throw err;
  }
  return {
    address,
    namespace,
    uiUrl,
    dbFile: options.dbFile,
    options: resolved,
    stop: () => stopChild(child, killOnExit),
  };
}

async function stopChild(child: ChildProcess, killOnExit: () => void): Promise<void> {
  process.removeListener('exit', killOnExit);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Fallback on machines with internet but no local CLI: the SDK downloads and runs it. */
async function startThroughSdk(o: DevServerOptions & { ip: string; port: number; namespace: string; uiPort?: number }, address: string, uiUrl?: string): Promise<DevServer> {
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'cached-download' },
      ip: o.ip,
      port: o.port,
      ui: !o.headless,
      uiPort: o.uiPort,
      dbFilename: o.dbFile,
      namespace: o.namespace,
      searchAttributes: Object.values(SA),
      extraArgs: [
        ...(o.uiCodecEndpoint && !o.headless ? ['--ui-codec-endpoint', o.uiCodecEndpoint] : []),
        ...Object.entries({ ...DEV_SERVER_TUNING, ...o.dynamicConfig }).flatMap(([k, v]) => ['--dynamic-config-value', `${k}=${JSON.stringify(v)}`]),
      ],
    },
  });
  return { address, namespace: o.namespace, uiUrl, dbFile: o.dbFile, options: o, stop: () => env.teardown() };
}
