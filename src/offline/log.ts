/**
 * The request log: every request the offline model received, what it answered and how the
 * exchange ended. Tests assert on it ("the model saw exactly these bytes", "the cancelled
 * activity really closed its connection") and wait on it instead of sleeping.
 */
import { EventEmitter } from 'node:events';
import type { WireMessage, WireUsage } from './types';

/**
 * How an exchange ended:
 * - `pending`: still being read, delayed or streamed;
 * - `completed`: a 2xx response was written in full;
 * - `aborted`: the client closed the connection before the response was finished;
 * - `rejected`: an error response the real API would also give (validation, auth, 404);
 * - `fault`: an injected failure (a fault or a scripted `@fail` / `@stream-error` / `@drop`).
 */
export type RequestOutcome = 'pending' | 'completed' | 'aborted' | 'rejected' | 'fault';

/** One request as the offline model saw it. Entries handed out are snapshots. */
export interface RequestLogEntry {
  /** 1-based, increasing for the server's lifetime (not reset by `clear()`). */
  readonly seq: number;
  /** Also sent as the `request-id` response header. */
  readonly requestId: string;
  readonly method: string;
  /** Path including any query string, as received. */
  readonly path: string;
  /** Request headers, names lower-cased, repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  /** The exact bytes received, decoded as UTF-8 (empty until the body has arrived). */
  rawBody: string;
  /** The parsed JSON body, or undefined when it was absent or not JSON. */
  body: unknown;
  /** True when the body asked for SSE (`"stream": true`). */
  stream: boolean;
  /** Times from the server's clock (the `now` option), in ms. */
  receivedAt: number;
  responseBeganAt?: number;
  endedAt?: number;
  /** The delay the server added before answering (latency options, faults, the script), in ms. */
  delayMs?: number;
  status?: number;
  outcome: RequestOutcome;
  /** The complete Message the server answered (also for streams, even if cut short). */
  response?: WireMessage;
  usage?: WireUsage;
  error?: { type: string; message: string };
}

export type RequestLogPredicate = (entry: RequestLogEntry) => boolean;

/** Request log of one offline model; see {@link RequestLogEntry}. */
export class RequestLog {
  private items: RequestLogEntry[] = [];
  /** Entries still in the log: changes to cleared or trimmed ones are not announced. */
  private readonly live = new Set<RequestLogEntry>();
  private readonly emitter = new EventEmitter();

  /** @param maxEntries oldest entries are dropped beyond this many (default: keep all). */
  constructor(private readonly maxEntries = Infinity) {
    // Many concurrent waitFor() calls are normal in tests; they are not a leak.
    this.emitter.setMaxListeners(0);
  }

  /** Snapshots of all entries, oldest first. */
  entries(): RequestLogEntry[] {
    return this.items.map(snapshot);
  }

  /**
   * Forgets all entries (sequence numbers keep counting). Requests still in flight stay
   * out of the log: their later changes neither appear nor wake `waitFor`.
   */
  clear(): void {
    this.items = [];
    this.live.clear();
  }

  /**
   * Resolves with the first entry that matches `predicate`, now or as soon as an entry is
   * added or changes so that it matches. Rejects after `timeoutMs` (default 60 000) with a
   * summary of what the log holds.
   *
   * @example
   * await model.log.waitFor((e) => e.outcome === 'aborted');
   */
  waitFor(predicate: RequestLogPredicate, { timeoutMs = 60_000 }: { timeoutMs?: number } = {}): Promise<RequestLogEntry> {
    let existing: RequestLogEntry | undefined;
    try {
      existing = this.items.find((e) => predicate(snapshot(e)));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    if (existing) return Promise.resolve(snapshot(existing));
    return new Promise((resolve, reject) => {
      // A predicate that throws fails its own wait; it must never reach the server's request path.
      const onUpdate = (entry: RequestLogEntry): void => {
        let matched: boolean;
        try {
          matched = predicate(entry);
        } catch (err) {
          cleanup();
          reject(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        if (!matched) return;
        cleanup();
        resolve(entry);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`RequestLog.waitFor: no matching entry after ${timeoutMs} ms. Log: ${this.describe()}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.emitter.off('update', onUpdate);
      };
      this.emitter.on('update', onUpdate);
    });
  }

  /** Calls `listener` with a snapshot whenever an entry is added or changes. */
  on(event: 'update', listener: (entry: RequestLogEntry) => void): this {
    this.emitter.on(event, listener);
    return this;
  }

  off(event: 'update', listener: (entry: RequestLogEntry) => void): this {
    this.emitter.off(event, listener);
    return this;
  }

  /** @internal Adds an entry (the server calls this when a request arrives). */
  add(entry: RequestLogEntry): RequestLogEntry {
    this.items.push(entry);
    this.live.add(entry);
    while (this.items.length > this.maxEntries) this.live.delete(this.items.shift() as RequestLogEntry);
    this.emitter.emit('update', snapshot(entry));
    return entry;
  }

  /** @internal Applies a change to an entry and notifies listeners. */
  update(entry: RequestLogEntry, patch: Partial<RequestLogEntry>): void {
    Object.assign(entry, patch);
    if (this.live.has(entry)) this.emitter.emit('update', snapshot(entry));
  }

  private describe(): string {
    if (this.items.length === 0) return '(empty)';
    return this.items.map((e) => `#${e.seq} ${e.method} ${e.path} ${e.status ?? '-'} ${e.outcome}`).join('; ');
  }
}

function snapshot(entry: RequestLogEntry): RequestLogEntry {
  return { ...entry };
}
