/**
 * The worker's batch desk (delivery `batch`). Batched model calls that arrive within a short
 * window (`windowMs`, default one second) from any agent on this worker go to the provider as
 * one batch (per provider's batch interface, batch-api.ts, and beta set: a batch's betas apply
 * to all of its requests). Each submitted batch is then watched once for all of its callers: one poll loop
 * and one read of its results, handed to each caller by its `custom_id`. A batch is cancelled
 * at the provider only when every request it holds belongs to a cancelled agent (the API
 * cancels whole batches, and a coalesced batch carries other agents' work).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { BatchApi, BatchRequestResult } from './batch-api';

export type { BatchRequestResult } from './batch-api';

/** How long a batched call waits for others to share its batch, in ms. */
export const DEFAULT_BATCH_WINDOW_MS = 1_000;
/** How often a submitted batch is asked about, in ms (real time). */
export const DEFAULT_BATCH_POLL_MS = 30_000;
/** A batch is sent at once when it holds this many requests (the API takes 100,000 or 256 MB). */
export const DEFAULT_BATCH_MAX_REQUESTS = 1_000;
/**
 * A batch is sent before it grows past this many bytes of request bodies: under the model
 * gateway's 40 MB request limit (a batch passes through it whole: Message Batches' JSON, or an
 * OpenAI Batch API upload) and far under the providers' own (256 MB, 200 MB).
 */
export const DEFAULT_BATCH_MAX_BYTES = 32 * 1024 * 1024;


export interface BatcherOptions {
  windowMs?: number;
  pollMs?: number;
  /** A batch gathered this many requests is sent before its window ends (default 1,000). */
  maxRequests?: number;
  /** A batch is sent before its request bodies pass this many bytes (default 32 MB). */
  maxBytes?: number;
}

interface Pending {
  customId: string;
  params: unknown;
  resolve: (batchId: string) => void;
  reject: (err: unknown) => void;
}

interface Group {
  api: BatchApi;
  betas: readonly string[];
  requests: Pending[];
  /** Bytes of the request bodies gathered (as JSON). */
  bytes: number;
  timer: NodeJS.Timeout;
}

interface Watch {
  /** How many requests the batch holds (known once submitted here or first retrieved). */
  total: number;
  waiters: number;
  cancelled: number;
  stop: AbortController;
  results: Promise<Map<string, BatchRequestResult>>;
}

/** A batch id the provider does not know (404): expired from its records, or another account's. */
export class BatchNotFoundError extends Error {
  override name = 'BatchNotFoundError';
}

const isNotFound = (err: unknown) => (err as { status?: unknown } | null)?.status === 404;

/** Rejects with the abort reason when `signal` aborts first. */
function raced<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** One per worker: coalesces batched calls into provider batches and watches each batch once. */
export class Batcher {
  readonly windowMs: number;
  readonly pollMs: number;
  readonly maxRequests: number;
  readonly maxBytes: number;
  private readonly groups = new Map<string, Group>();
  private readonly watches = new Map<string, Watch>();
  private readonly clientIds = new WeakMap<BatchApi, number>();
  private clients = 0;
  /** Batches this desk created, and how many requests each held (for tests and logs). */
  readonly created: { batchId: string; requests: number }[] = [];

  constructor(opts: BatcherOptions = {}) {
    this.windowMs = opts.windowMs ?? DEFAULT_BATCH_WINDOW_MS;
    this.pollMs = opts.pollMs ?? DEFAULT_BATCH_POLL_MS;
    this.maxRequests = opts.maxRequests ?? DEFAULT_BATCH_MAX_REQUESTS;
    this.maxBytes = opts.maxBytes ?? DEFAULT_BATCH_MAX_BYTES;
  }

  private clientId(client: BatchApi): number {
    let id = this.clientIds.get(client);
    if (id === undefined) this.clientIds.set(client, (id = ++this.clients));
    return id;
  }

  /**
   * Adds a request to the batch being gathered and resolves with that batch's id once the
   * provider has it. Aborting `signal` before the batch is sent takes the request out again.
   */
  submit(api: BatchApi, request: { customId: string; params: unknown; betas: readonly string[] }, signal: AbortSignal): Promise<string> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    const groupKey = `${this.clientId(api)}\n${[...request.betas].sort().join(',')}\n${api.groupOf?.(request.params) ?? ''}`;
    const size = Buffer.byteLength(JSON.stringify(request.params));
    return new Promise<string>((resolve, reject) => {
      let group = this.groups.get(groupKey);
      // The gathered batch would grow past its byte limit: it goes now, and this request starts the next.
      if (group && group.requests.length > 0 && group.bytes + size > this.maxBytes) {
        this.flush(groupKey);
        group = undefined;
      }
      if (!group) {
        group = { api, betas: request.betas, requests: [], bytes: 0, timer: setTimeout(() => this.flush(groupKey), this.windowMs) };
        this.groups.set(groupKey, group);
      }
      const pending: Pending = { customId: request.customId, params: request.params, resolve, reject };
      group.requests.push(pending);
      group.bytes += size;
      const onAbort = () => {
        const g = this.groups.get(groupKey);
        const at = g?.requests.indexOf(pending) ?? -1;
        if (!g || at < 0) return;
        g.requests.splice(at, 1);
        g.bytes -= size;
        if (g.requests.length === 0) {
          clearTimeout(g.timer);
          this.groups.delete(groupKey);
        }
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const settle = (fn: () => void) => {
        signal.removeEventListener('abort', onAbort);
        fn();
      };
      pending.resolve = (id) => settle(() => resolve(id));
      pending.reject = (err) => settle(() => reject(err instanceof Error ? err : new Error(String(err))));
      if (group.requests.length >= this.maxRequests) this.flush(groupKey);
    });
  }

  private flush(groupKey: string): void {
    const group = this.groups.get(groupKey);
    if (!group) return;
    clearTimeout(group.timer);
    this.groups.delete(groupKey);
    const { api, betas, requests } = group;
    // Two calls with one custom_id (a retry racing its first attempt on this worker) share a slot.
    const unique = [...new Map(requests.map((r) => [r.customId, r])).values()];
    api
      .create(unique.map((r) => ({ customId: r.customId, params: r.params })), betas, AbortSignal.timeout(120_000))
      .then(
        (batchId) => {
          this.created.push({ batchId, requests: unique.length });
          this.watchOf(api, batchId, unique.length);
          for (const r of requests) r.resolve(batchId);
        },
        (err: unknown) => {
          for (const r of requests) r.reject(err);
        },
      );
  }

  private watchOf(api: BatchApi, batchId: string, total?: number): Watch {
    let watch = this.watches.get(batchId);
    if (watch) return watch;
    const stop = new AbortController();
    const w: Watch = { total: total ?? Number.POSITIVE_INFINITY, waiters: 0, cancelled: 0, stop, results: Promise.resolve(new Map<string, BatchRequestResult>()) };
    w.results = this.poll(api, batchId, w).finally(() => {
      if (this.watches.get(batchId) === w) this.watches.delete(batchId);
    });
    // Nobody may be left to hear a failure (every caller gone): it is theirs, not the process's.
    w.results.catch(() => undefined);
    this.watches.set(batchId, (watch = w));
    return watch;
  }

  private async poll(api: BatchApi, batchId: string, w: Watch): Promise<Map<string, BatchRequestResult>> {
    const signal = w.stop.signal;
    try {
      for (;;) {
        const batch = await api.retrieve(batchId, signal);
        if (!Number.isFinite(w.total)) w.total = batch.total;
        if (batch.ended) break;
        await sleep(this.pollMs, undefined, { signal });
      }
      return await api.results(batchId, signal);
    } catch (err) {
      if (isNotFound(err)) throw new BatchNotFoundError(`the provider does not know batch ${batchId}`);
      throw err;
    }
  }

  /**
   * Every result of the batch, once it has ended. `cancelled` says whether the caller's agent
   * was cancelled when `signal` aborts; when every request of the batch is a cancelled agent's,
   * the batch is cancelled at the provider. Callers that merely leave (a stopping worker) stop
   * the watch when they are the last, and leave the batch running.
   */
  async results(api: BatchApi, batchId: string, signal: AbortSignal, cancelled: () => boolean): Promise<Map<string, BatchRequestResult>> {
    const w = this.watchOf(api, batchId);
    w.waiters++;
    try {
      return await raced(w.results, signal);
    } catch (err) {
      if (signal.aborted) await this.leave(api, batchId, w, cancelled());
      throw err;
    } finally {
      w.waiters--;
    }
  }

  private async leave(api: BatchApi, batchId: string, w: Watch, cancelled: boolean): Promise<void> {
    if (cancelled) w.cancelled++;
    if (w.waiters > 1) return;
    w.stop.abort();
    if (this.watches.get(batchId) === w) this.watches.delete(batchId);
    if (w.cancelled < w.total) return;
    try {
      await api.cancel(batchId, AbortSignal.timeout(5_000));
    } catch {
      // Best effort: an uncancelled batch is answered for nobody, and its requests are billed once.
    }
  }
}
