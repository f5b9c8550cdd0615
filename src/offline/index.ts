/**
 * Offline model: a loopback HTTP server that speaks the Anthropic Messages API (JSON and
 * SSE, errors, prompt-cache accounting) with a deterministic scripted model. The real SDK
 * talks to it over HTTP; `npm start` uses it when no key is set, and every test does.
 * See ./README.md for the script language and the accounting rules.
 */
import { defaultMinCacheableTokens } from './cache';
import { OfflineClock } from './clock';
import type { Faults } from './faults';
import { RateLimitOptions } from './rate-limit';
import type { RequestLog } from './log';
import type { WindowOption } from './limits';
import { OfflineServer } from './server';
import type { BatchStore } from './batches';

export interface OfflineModelOptions {
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Port to listen on. Default 0 (an ephemeral port; read it from `url`). */
  port?: number;
  /** Clock in ms for cache TTLs and log timestamps. Default `Date.now`. */
  now?: () => number;
  /**
   * Emulated time runs this many times faster than `now` (≥ 1; default 1): a 5-minute TTL
   * lasts 3 s at 100. Give a worker the same `modelClockScale` so its keep-alive timers agree.
   */
  clockScale?: number;
  /** Serve `GET|POST /_offline/clock` (read or advance the clock over HTTP). Default false: tests only. */
  admin?: boolean;
  /** Extra delay before every response, in ms. Default 0. */
  latencyMs?: number;
  /**
   * On top of `latencyMs`, a further delay drawn uniformly from [0, latencyJitterMs] per
   * request, so load benchmarks see a spread of model latencies (1–3 s is
   * `{ latencyMs: 1000, latencyJitterMs: 2000 }`). Default 0.
   */
  latencyJitterMs?: number;
  /** Delay between SSE events, in ms. Default 0. */
  streamChunkDelayMs?: number;
  /** Minimum cacheable prefix in tokens, for all models or per model. Default: a per-model table. */
  minCacheableTokens?: number | ((model: string) => number);
  /**
   * The context window a request is granted, in tokens: for all models, or per model and the
   * request's beta headers. Past it a request gets 400 `prompt is too long: N tokens > M maximum`.
   * Default: the model's (200K; 1M with `context-1m-2025-08-07` on the models that have it).
   */
  contextWindow?: WindowOption;
  /** When set, requests must present exactly this key (`x-api-key` or `Authorization: Bearer`). */
  apiKey?: string;
  /** Keep at most this many log entries, dropping the oldest (long-running servers). Default: all. */
  maxLogEntries?: number;
  /** A provider rate limit: at most `requests` Messages requests per `perMs`, else 429 with `retry-after`. */
  rateLimit?: RateLimitOptions;
  /** Emulated ms from a batch's creation (`/v1/messages/batches`) to its end. Default 60000. */
  batchProcessingMs?: number;
  /**
   * Emulated ms an OpenAI-wire batch (`/v1/batches`) first reports `validating` with zero
   * `request_counts`, as the API does before it has read the input file. Default 0 (none).
   */
  batchValidatingMs?: number;
  /** Called as each SSE event is written, with the request's id and the clock's time (emit-time stamps for benchmarks). */
  onStreamEvent?: (requestId: string, event: { event: string; data: unknown }, at: number) => void;
}

export interface OfflineModel {
  /** Base URL for the SDK's `baseURL`, e.g. `http://127.0.0.1:34567` (no `/v1`). */
  readonly url: string;
  /** Every request received and how it ended. */
  readonly log: RequestLog;
  /** Queue of injected failures. */
  readonly faults: Faults;
  /** The emulated prompt cache: `size()` counts readable entries. */
  readonly cache: { clear(): void; size(): number };
  /** The emulated clock: `now()`, `advance(ms)` (a jump forward: the cache ages at once), `scale`. */
  readonly clock: Pick<OfflineClock, 'now' | 'advance' | 'scale'>;
  /**
   * The Message Batches (src/offline/batches.ts): `inject` an errored request or an expired
   * batch; `entries()` lists every processed request with its usage (billed at half price);
   * `ids()` the batches created.
   */
  readonly batches: Pick<BatchStore, 'inject' | 'entries' | 'ids'> & {
    /** Ids of the OpenAI wire's batches (`/v1/batches`, src/offline/openai/batches.ts), oldest first; `inject` and `entries` cover them too. */
    chatIds(): string[];
  };
  /** Closes the server and destroys open sockets; in-flight requests are logged `aborted`. */
  close(): Promise<void>;
}

/**
 * Starts an offline model.
 *
 * @example
 * const model = await startOfflineModel();
 * const client = new Anthropic({ baseURL: model.url, apiKey: 'test-key', maxRetries: 0 });
 * const msg = await client.messages.create({
 *   model: 'claude-sonnet-4-5', max_tokens: 256,
 *   messages: [{ role: 'user', content: '@reply hello' }],
 * });
 * // msg.content[0] → { type: 'text', text: 'hello' }
 * await model.close();
 */
/** A delay option: a finite number of ms, ≥ 0 (a typo must not silently mean "no delay"). */
function delayOption(name: string, value: number | undefined): number {
  if (value === undefined) return 0;
  if (!(Number.isFinite(value) && value >= 0)) throw new RangeError(`Offline model option "${name}" must be a finite number of ms ≥ 0, got ${value}`);
  return value;
}

export async function startOfflineModel(opts: OfflineModelOptions = {}): Promise<OfflineModel> {
  const min = opts.minCacheableTokens;
  const clock = new OfflineClock({ ...(opts.now ? { base: opts.now } : {}), scale: opts.clockScale ?? 1 });
  const server = new OfflineServer({
    host: opts.host ?? '127.0.0.1',
    port: opts.port ?? 0,
    now: () => clock.now(),
    ...(opts.admin ? { adminClock: clock } : {}),
    latencyMs: delayOption('latencyMs', opts.latencyMs),
    latencyJitterMs: delayOption('latencyJitterMs', opts.latencyJitterMs),
    streamChunkDelayMs: delayOption('streamChunkDelayMs', opts.streamChunkDelayMs),
    minCacheableTokens: typeof min === 'function' ? min : typeof min === 'number' ? () => min : defaultMinCacheableTokens,
    ...(opts.contextWindow !== undefined ? { contextWindow: opts.contextWindow } : {}),
    apiKey: opts.apiKey,
    maxLogEntries: opts.maxLogEntries ?? Infinity,
    ...(opts.rateLimit ? { rateLimit: RateLimitOptions.parse(opts.rateLimit) } : {}),
    batchProcessingMs: delayOption('batchProcessingMs', opts.batchProcessingMs ?? 60_000),
    batchValidatingMs: delayOption('batchValidatingMs', opts.batchValidatingMs),
    onStreamEvent: opts.onStreamEvent,
  });
  const url = await server.listen();
  return {
    url,
    log: server.log,
    faults: server.faults,
    cache: { clear: () => server.cache.clear(), size: () => server.cache.size() },
    clock,
    batches: { inject: (f) => server.batches.inject(f), entries: () => server.batches.entries(), ids: () => server.batches.ids(), chatIds: () => server.chatBatches.ids() },
    close: () => server.close(),
  };
}

export { RequestLog, type RequestLogEntry, type RequestOutcome, type RequestLogPredicate } from './log';
export { Faults, type Fault, type StatusFault, type StreamErrorFault, type DropFault, type LatencyFault, type PromptTooLongFault } from './faults';
export { type WindowOption } from './limits';
export { isSummaryRequest } from './scripted/summary';
export { defaultMinCacheableTokens, LOOKBACK_BLOCKS } from './cache';
export { OfflineClock } from './clock';
export { BATCH_EXPIRY_MS, type BatchFault, type BatchEntry, type BatchResult } from './batches';
export { ADMIN_CLOCK_PATH, type ClockReading } from './routes/admin';
export type { WireMessage, WireUsage } from './types';
