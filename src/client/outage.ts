/**
 * Riding out a Temporal outage on the client. Calls that are safe to repeat — queries,
 * describe, visibility lists, and the long poll behind a result — wait with backoff while the
 * server is unreachable (gRPC UNAVAILABLE, a connect or a call that times out on our own
 * deadline), up to a deadline, and then fail with one `TemporalUnavailableError`. Every other
 * error (NOT_FOUND, a query the workflow refuses, invalid arguments...) passes through at once.
 *
 * The SDK's Connection has a retry interceptor of its own (about 20 s of attempts with its
 * defaults); this loop goes around it: while the server is down we probe it with the cheapest
 * call there is (`getSystemInfo`) and repeat the caller's call once it answers. A long poll is
 * repeated, not resumed: `handle.result()` re-reads the history from the server, which is
 * idempotent, so the caller's handle stays good across the outage.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection, isGrpcServiceError, type ConnectionLike, type ConnectionOptions } from '@temporalio/client';
import { oneLine } from '../shared/base/text';
import { forkflowConnectionOptions } from './connection-options';
import { TemporalUnavailableError } from './errors';

/** Five minutes: long enough for a server restart or a rolling upgrade, short enough to notice. */
export const DEFAULT_OUTAGE_DEADLINE_MS = 5 * 60_000;

// gRPC status codes (numbers, so the client floor needs no direct @grpc/grpc-js import).
const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;
const FIRST_DELAY_MS = 200;
const MAX_DELAY_MS = 5_000;
/** A probe is one cheap call; it should not use the whole remaining budget on one attempt. */
const PROBE_TIMEOUT_MS = 5_000;
/** The SDK's own connect timeout; a connect attempt gets at most this, and at most what is left. */
const CONNECT_TIMEOUT_MS = 10_000;
/** How many times a read waits on the server for a worker to answer before the timeout is the caller's. */
export const WORKER_WAITS = 2;

export interface OutageRetry {
  /** The operation waiting (`status`, `result`, `connect`...). */
  operation: string;
  /** 1 for the first wait of this outage. */
  attempt: number;
  /** Since the outage was noticed (for `result`) or the call began (everything else). */
  waitedMs: number;
  /** The wait before the next try. */
  delayMs: number;
  error: unknown;
}

export interface OutageOptions {
  /**
   * How long a call keeps trying while Temporal is unreachable before it fails with
   * `TemporalUnavailableError`. Default 5 minutes; 0 fails at the first unreachable answer.
   * A read (status, transcript, list) counts from its start; a result wait counts from the
   * moment the outage is noticed, since the wait itself may last hours.
   */
  deadlineMs?: number;
  /** Called before each wait, e.g. to log "Temporal unreachable, retrying". */
  onRetry?: (retry: OutageRetry) => void;
}

/** True when `err` (or an error it wraps) says the server could not be reached. */
export function isUnreachable(err: unknown, ownDeadline?: number): boolean {
  for (let e = err; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if (isGrpcServiceError(e)) {
      const code: number = e.code;
      if (code === UNAVAILABLE) return true;
      // Only our own deadline: the server's DEADLINE_EXCEEDED ("query timed out before a
      // worker could process it") means it answered, and a worker is missing.
      if (code === DEADLINE_EXCEEDED && ownDeadline !== undefined && Date.now() >= ownDeadline) return true;
    }
    // grpc-js waitForReady, under Connection.ensureConnected.
    if (e.message === 'Failed to connect before the deadline') return true;
  }
  return false;
}

/** True when the server gave up waiting for a worker (a query no worker picked up), before our own deadline. */
export function isWorkerTimeout(err: unknown, ownDeadline: number): boolean {
  for (let e = err; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if (isGrpcServiceError(e) && (e.code as number) === DEADLINE_EXCEEDED) return Date.now() < ownDeadline;
  }
  return false;
}

function backoff(attempt: number, remainingMs: number): number {
  const base = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (attempt - 1));
  // ±20 % so that many clients coming back after one outage do not call in step.
  return Math.max(0, Math.min(remainingMs, Math.round(base * (0.8 + Math.random() * 0.4))));
}

/**
 * The UNAVAILABLE message under `err` (it names the cause, e.g. `connect ECONNREFUSED`). A
 * deadline, ours or grpc-js's connect wait, says nothing the error's own message does not.
 */
function detailOf(err: unknown): string | undefined {
  for (let e = err; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if (isGrpcServiceError(e) && (e.code as number) === UNAVAILABLE) return oneLine(e.message, 300);
  }
  return undefined;
}

/** The address a Temporal client talks to, for error messages. */
export function addressOf(connection: ConnectionLike): string {
  return connection instanceof Connection ? connection.options.address : 'the Temporal server';
}

/** Runs calls so that they outlast a Temporal outage of up to `deadlineMs`. */
export class OutageGuard {
  readonly deadlineMs: number;
  private readonly onRetry?: (retry: OutageRetry) => void;

  constructor(
    private readonly connection: ConnectionLike,
    readonly address: string = addressOf(connection),
    opts: OutageOptions = {},
  ) {
    this.deadlineMs = opts.deadlineMs ?? DEFAULT_OUTAGE_DEADLINE_MS;
    if (!(this.deadlineMs >= 0)) throw new RangeError(`outage.deadlineMs must be 0 or more, got ${opts.deadlineMs}`);
    this.onRetry = opts.onRetry;
  }

  /**
   * A call that is safe to repeat and answers promptly (a query, describe, a list). It and its
   * retries share one deadline from its start.
   */
  async read<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    const since = Date.now();
    const deadline = since + this.deadlineMs;
    let workerWaits = 0;
    for (let attempt = 1; ; ) {
      try {
        return await this.connection.withDeadline(deadline, fn);
      } catch (err) {
        // The server waited its own time (about 30 s) for a worker to answer a query, and none
        // did. One more wait covers a worker that was restarting or too busy to poll; a second
        // means there is none, which the caller hears.
        if (isWorkerTimeout(err, deadline) && workerWaits++ < WORKER_WAITS - 1) continue;
        if (!isUnreachable(err, deadline)) throw err;
        attempt = await this.untilReachable(operation, since, attempt, err);
      }
    }
  }

  /**
   * A long poll (a workflow result): no deadline while the server answers, however long the
   * workflow runs; after an outage it is called again once the server answers.
   */
  async longPoll<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await fn();
      } catch (err) {
        if (!isUnreachable(err)) throw err;
        await this.untilReachable(operation, Date.now(), 1, err);
      }
    }
  }

  /**
   * Waits (backoff, probes) until the server answers; returns the next attempt number. Throws
   * TemporalUnavailableError once `since + deadlineMs` has passed.
   */
  private async untilReachable(operation: string, since: number, attempt: number, error: unknown): Promise<number> {
    const deadline = since + this.deadlineMs;
    let last = error;
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new TemporalUnavailableError(this.address, Date.now() - since, this.deadlineMs, detailOf(last), { cause: last });
      const delayMs = backoff(attempt, remaining);
      this.onRetry?.({ operation, attempt, waitedMs: Date.now() - since, delayMs, error: last });
      attempt += 1;
      await sleep(delayMs);
      const probeDeadline = Math.min(deadline, Date.now() + PROBE_TIMEOUT_MS);
      try {
        await this.connection.withDeadline(probeDeadline, () => this.connection.workflowService.getSystemInfo({}));
        return attempt;
      } catch (err) {
        // Any answer at all (even UNIMPLEMENTED from an old server) means it is reachable.
        if (!isUnreachable(err, probeDeadline)) return attempt;
        last = err;
      }
    }
  }
}

/**
 * `Connection.connect` that waits out a server that is not up yet (or restarting), with the
 * same deadline and backoff as the calls. Each attempt is a fresh Connection: the SDK
 * remembers a failed first connect.
 */
export async function connectRidingOutages(options: ConnectionOptions, outage: OutageOptions = {}): Promise<Connection> {
  const deadlineMs = outage.deadlineMs ?? DEFAULT_OUTAGE_DEADLINE_MS;
  const since = Date.now();
  const deadline = since + deadlineMs;
  const address = options.address ?? 'localhost:7233';
  for (let attempt = 1; ; attempt += 1) {
    const connectTimeout = Math.max(1, Math.min(CONNECT_TIMEOUT_MS, deadline - Date.now()));
    const connection = Connection.lazy(forkflowConnectionOptions({ ...options, connectTimeout }));
    try {
      await connection.ensureConnected();
      return connection;
    } catch (err) {
      await connection.close();
      if (!isUnreachable(err, deadline)) throw err;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new TemporalUnavailableError(address, Date.now() - since, deadlineMs, detailOf(err), { cause: err });
      const delayMs = backoff(attempt, remaining);
      outage.onRetry?.({ operation: 'connect', attempt, waitedMs: Date.now() - since, delayMs, error: err });
      await sleep(delayMs);
    }
  }
}
