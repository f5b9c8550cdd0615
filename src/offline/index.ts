/**
 * Offline model: a loopback HTTP server that speaks the Anthropic Messages API (JSON and
 * SSE, errors, prompt-cache accounting) with a deterministic scripted model. The real SDK
 * talks to it over HTTP; `npm start` uses it when no key is set, and every test does.
 * See ./README.md for the script language and the accounting rules.
 */
import { defaultMinCacheableTokens } from './cache';
import type { Faults } from './faults';
import type { RequestLog } from './log';
import { OfflineServer } from './server';

export interface OfflineModelOptions {
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Port to listen on. Default 0 (an ephemeral port; read it from `url`). */
  port?: number;
  /** Clock in ms for cache TTLs and log timestamps. Default `Date.now`. */
  now?: () => number;
  /** Extra delay before every response, in ms. Default 0. */
  latencyMs?: number;
  /** Delay between SSE events, in ms. Default 0. */
  streamChunkDelayMs?: number;
  /** Minimum cacheable prefix in tokens, for all models or per model. Default: a per-model table. */
  minCacheableTokens?: number | ((model: string) => number);
  /** When set, requests must present exactly this key (`x-api-key` or `Authorization: Bearer`). */
  apiKey?: string;
  /** Keep at most this many log entries, dropping the oldest (long-running servers). Default: all. */
  maxLogEntries?: number;
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
export async function startOfflineModel(opts: OfflineModelOptions = {}): Promise<OfflineModel> {
  const min = opts.minCacheableTokens;
  const server = new OfflineServer({
    host: opts.host ?? '127.0.0.1',
    port: opts.port ?? 0,
    now: opts.now ?? (() => Date.now()),
    latencyMs: opts.latencyMs ?? 0,
    streamChunkDelayMs: opts.streamChunkDelayMs ?? 0,
    minCacheableTokens: typeof min === 'function' ? min : typeof min === 'number' ? () => min : defaultMinCacheableTokens,
    apiKey: opts.apiKey,
    maxLogEntries: opts.maxLogEntries ?? Infinity,
    onStreamEvent: opts.onStreamEvent,
  });
  const url = await server.listen();
  return {
    url,
    log: server.log,
    faults: server.faults,
    cache: { clear: () => server.cache.clear(), size: () => server.cache.size() },
    close: () => server.close(),
  };
}

export { RequestLog, type RequestLogEntry, type RequestOutcome, type RequestLogPredicate } from './log';
export { Faults, type Fault, type StatusFault, type StreamErrorFault, type DropFault, type LatencyFault } from './faults';
export { defaultMinCacheableTokens, LOOKBACK_BLOCKS } from './cache';
export type { WireMessage, WireUsage } from './types';
