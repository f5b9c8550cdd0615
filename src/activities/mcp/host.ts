/**
 * What one worker process holds of MCP: the stdio sessions it started for agents (each a
 * process of this worker, reached only through this host's own task queue, as a worktree is
 * reached through its host's), and its connections to HTTP servers (one per server, shared
 * by every agent that names it).
 *
 * The session queue is served by a second Temporal worker this host starts the first time a
 * stdio session opens; it is this process's alone (`<queue>@mcp-<host>-<pid>-<random>`), so a
 * call to a session whose worker was lost is never taken by anyone: it waits out its
 * schedule-to-start limit and the agent opens the server again elsewhere. Sessions end when
 * their agent closes them, after an hour unused, or with the worker.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { DataConverter } from '@temporalio/common';
import { Worker, type NativeConnection } from '@temporalio/worker';
import { hashJson } from '../../shared/base/hash';
import type { McpHttpServer } from '../../shared/tools/mcp';
import { connectMcp, type McpConnection } from './connect';

export interface McpSession {
  id: string;
  agentId: string;
  server: string;
  connection: McpConnection;
  lastUsed: number;
}

export interface McpHostOptions {
  connection: NativeConnection;
  namespace: string;
  /** The queue of the worker this host belongs to (the session queue is named after it). */
  taskQueue: string;
  dataConverter?: DataConverter;
  /** Sessions unused this long are closed (default 1 hour). */
  idleMs?: number;
}

/** How often heartbeats reach the server from session calls (as forkflow's workers). */
const HEARTBEAT_FLUSH = '500ms';
const DEFAULT_IDLE_MS = 60 * 60_000;

const NO_WORKFLOWS = 'No workflows registered, not polling for workflow tasks';

/**
 * An activity-only worker by design (a session queue, a service's tool queue): the SDK warns at
 * every start that it polls no workflows, which here is no news. That one line is dropped;
 * every other log line passes. (The logger is the worker's own field, read when it runs.)
 */
export function quietActivityOnlyWorker(worker: Worker): Worker {
  const w = worker as unknown as { logger: Record<string, unknown> & { warn(message: string, meta?: unknown): void } };
  const inner = w.logger;
  w.logger = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'warn') return (message: string, meta?: unknown) => (message === NO_WORKFLOWS ? undefined : target.warn(message, meta));
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return worker;
}

export class McpHost {
  /** This process's own queue for its stdio sessions' calls. */
  readonly sessionQueue: string;
  private readonly sessions = new Map<string, McpSession>();
  private readonly http = new Map<string, Promise<McpConnection>>();
  private sessionWorker?: { worker: Worker; running: Promise<void> };
  private starting?: Promise<void>;
  private reaper?: NodeJS.Timeout;
  private stopped = false;
  /** The session queue's activities, given by the activity factory (they close over this host). */
  sessionActivities?: Record<string, (...args: never[]) => Promise<unknown>>;

  constructor(private readonly o: McpHostOptions) {
    const host = hostname().replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 40) || 'host';
    this.sessionQueue = `${o.taskQueue}@mcp-${host}-${process.pid}-${randomUUID().slice(0, 8)}`;
  }

  /** Starts the session queue's worker if it does not run yet (the first stdio session). */
  async serveSessions(): Promise<void> {
    if (this.stopped) throw new Error('this worker is stopping: it opens no MCP sessions');
    if (this.sessionWorker) return;
    this.starting ??= (async () => {
      if (!this.sessionActivities) throw new Error('MCP session activities are not set on this host');
      const worker = await Worker.create({
        connection: this.o.connection,
        namespace: this.o.namespace,
        taskQueue: this.sessionQueue,
        activities: this.sessionActivities,
        ...(this.o.dataConverter ? { dataConverter: this.o.dataConverter } : {}),
        maxHeartbeatThrottleInterval: HEARTBEAT_FLUSH,
        defaultHeartbeatThrottleInterval: HEARTBEAT_FLUSH,
      });
      this.sessionWorker = { worker, running: quietActivityOnlyWorker(worker).run() };
      this.reaper = setInterval(() => void this.reap(), 60_000);
      this.reaper.unref();
    })();
    try {
      await this.starting;
    } catch (err) {
      this.starting = undefined;
      throw err;
    }
  }

  add(session: Omit<McpSession, 'id' | 'lastUsed'>): McpSession {
    const s: McpSession = { ...session, id: randomUUID(), lastUsed: Date.now() };
    this.sessions.set(s.id, s);
    return s;
  }

  /** The live session `id`, if this process holds it (a dead server's session is dropped). */
  get(id: string): McpSession | undefined {
    const s = this.sessions.get(id);
    if (s?.connection.closed) {
      this.sessions.delete(id);
      return undefined;
    }
    if (s) s.lastUsed = Date.now();
    return s;
  }

  async close(id: string): Promise<boolean> {
    const s = this.sessions.get(id);
    if (!s) return false;
    this.sessions.delete(id);
    await s.connection.close();
    return true;
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /** The shared connection to an HTTP server (opened on first use; a closed one is opened again). */
  async httpConnection(config: McpHttpServer, timeoutMs: number): Promise<McpConnection> {
    const key = hashJson({ url: config.url, headers: config.headers ?? {} });
    const existing = this.http.get(key);
    if (existing) {
      const c = await existing.catch(() => undefined);
      if (c && !c.closed) return c;
      this.http.delete(key);
    }
    const opening = connectMcp(config, { timeoutMs });
    this.http.set(key, opening);
    opening.catch(() => this.http.delete(key));
    return opening;
  }

  /** Drops an HTTP connection that failed (the next call opens a new one). */
  dropHttp(config: McpHttpServer): void {
    const key = hashJson({ url: config.url, headers: config.headers ?? {} });
    const existing = this.http.get(key);
    this.http.delete(key);
    void existing?.then((c) => c.close()).catch(() => undefined);
  }

  private async reap(): Promise<void> {
    const idleMs = this.o.idleMs ?? DEFAULT_IDLE_MS;
    for (const s of [...this.sessions.values()]) if (Date.now() - s.lastUsed > idleMs) await this.close(s.id);
  }

  /** Closes every session and connection and stops the session worker (with the worker it belongs to). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.reaper);
    const w = this.sessionWorker;
    if (w && w.worker.getState() === 'RUNNING') w.worker.shutdown();
    await w?.running.catch(() => undefined);
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
    const http = [...this.http.values()];
    this.http.clear();
    await Promise.all(http.map((p) => p.then((c) => c.close()).catch(() => undefined)));
  }
}
