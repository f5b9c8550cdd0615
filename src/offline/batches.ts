/**
 * The offline model's Message Batches: what `/v1/messages/batches` creates, and how a batch
 * ends on the emulated clock. A batch is processed when it is first looked at after its
 * processing time has passed (`processingMs`, emulated): each request is answered by the same
 * scripted model and prompt cache as `POST /v1/messages` (a scripted `@fail` becomes an
 * `errored` result). Tests inject an errored request or an expired batch, and read every
 * processed request (with its usage) from `entries()`: the offline model's own accounting.
 */
import { z } from 'zod';
import { ApiError, invalidRequest, isApiError } from './errors';
import { planMessages, type MessagesDeps } from './routes/messages';
import type { ApiVersion } from './routes/validation';
import type { WireMessage, WireUsage } from './types';
import { sha256HexNative } from './native-hash';

/** A batch's lifetime on the real API: results come within 24 hours, or the requests expire. */
export const BATCH_EXPIRY_MS = 24 * 3_600_000;

/** An injected batch failure; `match` picks the requests (by custom_id), default: any. */
export type BatchFault =
  /** The matching request's result is `errored` (an `api_error`). */
  | { kind: 'errored'; times?: number; match?: (customId: string) => boolean }
  /** A batch holding a matching request is not processed in time: every request `expired`, at `expires_at`. */
  | { kind: 'expired'; times?: number; match?: (customId: string) => boolean };

export type BatchResult =
  | { type: 'succeeded'; message: WireMessage }
  | { type: 'errored'; error: { type: 'error'; error: { type: string; message: string } } }
  | { type: 'canceled' }
  | { type: 'expired' };

/** One request of a batch as processed: the accounting tests read. */
export interface BatchEntry {
  batchId: string;
  customId: string;
  result: BatchResult['type'];
  /** Billed at the batch rate (half of interactive) when present. */
  usage?: WireUsage;
  model?: string;
  processedAt: number;
}

const customId = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'custom_id must be 1-64 characters of letters, digits, _ and -');
const createSchema = z.strictObject({
  requests: z.array(z.strictObject({ custom_id: customId, params: z.record(z.string(), z.unknown()) })).min(1).max(100_000),
});

interface Batch {
  id: string;
  createdAt: number;
  endsAt: number;
  expire: boolean;
  erroredIds: Set<string>;
  requests: { custom_id: string; params: Record<string, unknown> }[];
  version: ApiVersion;
  /** The create request's `anthropic-beta` headers: every request of the batch is made with them. */
  betas: readonly string[];
  cancelInitiatedAt?: number;
  endedAt?: number;
  results?: { custom_id: string; result: BatchResult }[];
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export interface BatchStoreSettings {
  now: () => number;
  /** Emulated ms from create until a batch ends (default one minute). */
  processingMs: number;
  messages: MessagesDeps;
}

/** The batches of one offline model. */
export class BatchStore {
  private readonly batches = new Map<string, Batch>();
  private readonly faults: { fault: BatchFault; remaining: number }[] = [];
  private readonly processed: BatchEntry[] = [];
  private seq = 0;

  constructor(private readonly settings: BatchStoreSettings) {}

  /** Queues a batch fault, applied to the next batches created with a matching request. */
  inject(fault: BatchFault): void {
    const times = fault.times ?? 1;
    if (!(times > 0)) throw new RangeError(`Batch fault "times" must be positive, got ${times}`);
    this.faults.push({ fault, remaining: times });
  }

  /** Every request processed so far, oldest first. */
  entries(): BatchEntry[] {
    return this.processed.map((e) => ({ ...e }));
  }

  /** Ids of the batches created so far, oldest first. */
  ids(): string[] {
    return [...this.batches.keys()];
  }

  /** Takes a queued fault of `kind` for `customId`: the OpenAI wire's batches (openai/batches.ts) share the queue. */
  takeFault(kind: BatchFault['kind'], customId: string): boolean {
    return this.take(kind, customId);
  }

  /** A request processed by a batch of the OpenAI wire: one accounting for both (`entries()`). */
  record(entry: BatchEntry): void {
    this.processed.push({ ...entry });
  }

  private take(kind: BatchFault['kind'], id: string): boolean {
    const q = this.faults.find((f) => f.fault.kind === kind && f.remaining > 0 && (f.fault.match?.(id) ?? true));
    if (!q) return false;
    q.remaining--;
    return true;
  }

  create(body: unknown, version: ApiVersion, betas: readonly string[] = []): unknown {
    const parsed = createSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalidRequest(`${(issue?.path ?? []).map(String).join('.') || '(body)'}: ${issue?.message ?? 'invalid'}`);
    }
    const ids = parsed.data.requests.map((r) => r.custom_id);
    if (new Set(ids).size !== ids.length) throw invalidRequest('requests: custom_id values must be unique within a batch');
    const now = this.settings.now();
    const id = `msgbatch_offline_${sha256HexNative(`${++this.seq}:${now}`).slice(0, 24)}`;
    const expire = ids.some((c) => this.take('expired', c));
    const erroredIds = new Set(ids.filter((c) => this.take('errored', c)));
    const batch: Batch = { id, createdAt: now, endsAt: expire ? now + BATCH_EXPIRY_MS : now + this.settings.processingMs, expire, erroredIds, requests: parsed.data.requests, version, betas };
    this.batches.set(id, batch);
    return this.view(batch);
  }

  retrieve(id: string): unknown {
    return this.view(this.find(id));
  }

  cancel(id: string): unknown {
    const batch = this.find(id);
    this.settle(batch);
    if (batch.endedAt === undefined) {
      // The emulator cancels at once: what has not been processed is `canceled`.
      batch.cancelInitiatedAt = this.settings.now();
      this.end(batch, () => ({ type: 'canceled' }));
    }
    return this.view(batch);
  }

  /** Newest first, `limit` (1-1000, default 20) after `after_id` / before `before_id`. */
  list(query: URLSearchParams): unknown {
    const all = [...this.batches.values()].reverse();
    const limit = Number(query.get('limit') ?? 20);
    if (!(Number.isInteger(limit) && limit >= 1 && limit <= 1000)) throw invalidRequest('limit: must be an integer from 1 to 1000');
    let from = 0;
    let to = all.length;
    const after = query.get('after_id');
    const before = query.get('before_id');
    if (after) from = all.findIndex((b) => b.id === after) + 1;
    if (before) to = Math.max(0, all.findIndex((b) => b.id === before));
    const page = before ? all.slice(Math.max(from, to - limit), to) : all.slice(from, Math.min(to, from + limit));
    const data = page.map((b) => this.view(b));
    const hasMore = before ? to - limit > from : from + limit < to;
    return { data, has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page[page.length - 1]?.id ?? null };
  }

  /** The results as JSONL; 404 until the batch has ended. */
  results(id: string): string {
    const batch = this.find(id);
    this.settle(batch);
    if (!batch.results) throw new ApiError(404, `Batch ${id} has not ended yet: no results (processing_status in_progress).`);
    return batch.results.map((r) => JSON.stringify(r)).join('\n') + '\n';
  }

  private find(id: string): Batch {
    const batch = this.batches.get(id);
    if (!batch) throw new ApiError(404, `No message batch with id ${id}.`);
    return batch;
  }

  /** Processes the batch if its time has come on the emulated clock. */
  private settle(batch: Batch): void {
    if (batch.endedAt !== undefined || this.settings.now() < batch.endsAt) return;
    this.end(batch, (r) => this.answer(batch, r));
  }

  private end(batch: Batch, resultOf: (r: Batch['requests'][number]) => BatchResult): void {
    const now = this.settings.now();
    batch.endedAt = now;
    batch.results = batch.requests.map((r) => {
      const result = resultOf(r);
      const usage = result.type === 'succeeded' ? { usage: result.message.usage, model: result.message.model } : {};
      this.processed.push({ batchId: batch.id, customId: r.custom_id, result: result.type, processedAt: now, ...usage });
      return { custom_id: r.custom_id, result };
    });
  }

  private answer(batch: Batch, r: Batch['requests'][number]): BatchResult {
    if (batch.expire) return { type: 'expired' };
    const errored = (type: string, message: string): BatchResult => ({ type: 'errored', error: { type: 'error', error: { type, message } } });
    if (batch.erroredIds.has(r.custom_id)) return errored('api_error', 'Internal error (injected by the offline model).');
    if (r.params.stream === true) return errored('invalid_request_error', 'stream: batch requests cannot stream');
    try {
      const planned = planMessages(r.params, batch.version, this.settings.messages, 0, { betas: batch.betas });
      const reply = planned.reply;
      if (reply.kind === 'message') {
        this.settings.messages.cache.commit(reply.ticket);
        return { type: 'succeeded', message: reply.message };
      }
      if (reply.kind === 'error') return errored(reply.error.type, reply.error.message);
      return errored('api_error', 'The scripted model dropped this request.');
    } catch (e) {
      if (isApiError(e)) return errored(e.type, e.message);
      throw e;
    }
  }

  private view(batch: Batch): unknown {
    this.settle(batch);
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    if (batch.results) for (const r of batch.results) counts[r.result.type]++;
    else counts.processing = batch.requests.length;
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: batch.endedAt === undefined ? (batch.cancelInitiatedAt === undefined ? 'in_progress' : 'canceling') : 'ended',
      request_counts: counts,
      created_at: iso(batch.createdAt),
      ended_at: iso(batch.endedAt),
      expires_at: iso(batch.createdAt + BATCH_EXPIRY_MS),
      cancel_initiated_at: iso(batch.cancelInitiatedAt),
      archived_at: null,
      // Relative here; the route makes it absolute with the server's own address.
      results_url: batch.endedAt === undefined ? null : `/v1/messages/batches/${batch.id}/results`,
    };
  }
}
