/**
 * The loopback HTTP server: accepts a request, logs it, reads its body, lets faults and
 * the routes decide the reply, applies delays, and hands the reply to the writer. It
 * notices clients that hang up (the log records `aborted`) and closes every socket on
 * `close()`.
 */
import { type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { PromptCache } from './cache';
import type { OfflineClock } from './clock';
import { ApiError, defaultFaultMessage, invalidRequest, isApiError } from './errors';
import { type FaultDecision, Faults } from './faults';
import { RateLimiter, type RateLimitOptions } from './rate-limit';
import { requestId } from './ids';
import { RequestLog, type RequestLogEntry } from './log';
import type { PlannedReply } from './reply';
import { type Exchange, type ResponderDeps, sendError, sendReply } from './respond';
import { ADMIN_CLOCK_PATH, planClock } from './routes/admin';
import { checkAuth, checkVersion } from './routes/headers';
import { planCountTokens, planMessages } from './routes/messages';
import { BatchStore } from './batches';
import { batchOpOf, planBatches, type BatchOp } from './routes/batches';
import { betasOf, windowFor, type WindowOption } from './limits';
import { toMessagesBody } from './openai/request';
import { ChatBatchStore } from './openai/batches';
import { chatBatchOpOf, planChatBatches, readUploadForm, type ChatBatchOp, type UploadForm } from './openai/batch-routes';

/** The real API refuses bodies over 32 MB. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface ServerSettings {
  host: string;
  port: number;
  now: () => number;
  /** The clock behind `now`, when the admin route may move it. */
  adminClock?: OfflineClock;
  latencyMs: number;
  /** Upper bound of a uniformly drawn extra delay per request (0: none). */
  latencyJitterMs: number;
  streamChunkDelayMs: number;
  minCacheableTokens: (model: string) => number;
  /** The context window per request (default: the model's, src/shared/context/windows.ts). */
  contextWindow?: WindowOption;
  apiKey?: string;
  maxLogEntries: number;
  /** A provider rate limit on Messages requests (src/offline/rate-limit.ts); none when unset. */
  rateLimit?: RateLimitOptions;
  /** Emulated ms from a batch's creation to its end. */
  batchProcessingMs: number;
  /** Emulated ms an OpenAI-wire batch reports `validating` (zero counts) after its creation. */
  batchValidatingMs: number;
  onStreamEvent?: ResponderDeps['onEvent'];
}

/** `{ openai }`: the OpenAI wire's files and batches (openai/batch-routes.ts). */
type Route = 'messages' | 'chat_completions' | 'count_tokens' | 'clock' | BatchOp | { openai: ChatBatchOp } | undefined;

function lowerCaseHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function routeOf(method: string, url: string, admin: boolean): Route {
  const path = new URL(url, 'http://offline').pathname.replace(/\/+$/, '');
  if (admin && path === ADMIN_CLOCK_PATH && (method === 'GET' || method === 'POST')) return 'clock';
  const batch = batchOpOf(method, path);
  if (batch) return batch;
  const chatBatch = chatBatchOpOf(method, path);
  if (chatBatch) return { openai: chatBatch };
  if (method !== 'POST') return undefined;
  if (path === '/v1/messages') return 'messages';
  if (path === '/v1/messages/count_tokens') return 'count_tokens';
  if (path === '/v1/chat/completions') return 'chat_completions';
  return undefined;
}

/** Reads the whole body; `tooLarge` past the limit (the bytes are drained, not kept). */
function readBody(req: IncomingMessage, signal: AbortSignal): Promise<{ raw: string; bytes: Buffer; tooLarge: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onAbort = (): void => reject(new Error('The client closed the connection while sending the body.'));
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('error', reject);
    req.on('end', () => {
      signal.removeEventListener('abort', onAbort);
      const bytes = size > MAX_BODY_BYTES ? Buffer.alloc(0) : Buffer.concat(chunks);
      resolve({ raw: bytes.toString('utf8'), bytes, tooLarge: size > MAX_BODY_BYTES });
    });
  });
}

export class OfflineServer {
  readonly log: RequestLog;
  readonly faults = new Faults();
  readonly rateLimiter?: RateLimiter;
  readonly cache: PromptCache;
  readonly batches: BatchStore;
  /** The OpenAI wire's files and batches (their faults and accounting are `batches`'). */
  readonly chatBatches: ChatBatchStore;
  private readonly attempts = new Map<string, number>();
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly responder: ResponderDeps;
  private seq = 0;
  private closing?: Promise<void>;

  constructor(private readonly settings: ServerSettings) {
    if (settings.rateLimit) this.rateLimiter = new RateLimiter(settings.rateLimit, settings.now);
    this.log = new RequestLog(settings.maxLogEntries);
    this.cache = new PromptCache(settings.now);
    const window = settings.contextWindow;
    const messages = { cache: this.cache, attempts: this.attempts, minCacheableTokens: settings.minCacheableTokens, contextWindow: (model: string, b: readonly string[]) => windowFor(window, model, b) };
    this.batches = new BatchStore({ now: settings.now, processingMs: settings.batchProcessingMs, messages });
    this.chatBatches = new ChatBatchStore({ now: settings.now, processingMs: settings.batchProcessingMs, validatingMs: settings.batchValidatingMs, messages, shared: this.batches });
    this.responder = { log: this.log, cache: this.cache, now: settings.now, streamChunkDelayMs: settings.streamChunkDelayMs, onEvent: settings.onStreamEvent };
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Starts listening; resolves with the base URL (no `/v1`). */
  async listen(): Promise<string> {
    const { host, port } = this.settings;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const address = this.server.address() as AddressInfo;
    return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  }

  /** Stops accepting connections and destroys open ones (in-flight requests become `aborted`). */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
    return this.closing;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const now = this.settings.now;
    const seq = ++this.seq;
    const entry = this.log.add({
      seq,
      requestId: requestId(seq),
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: lowerCaseHeaders(req.headers),
      rawBody: '',
      body: undefined,
      stream: false,
      receivedAt: now(),
      outcome: 'pending',
    });
    const abort = new AbortController();
    const ex: Exchange = { entry, res, signal: abort.signal, began: false };
    let planned: PlannedReply | undefined;
    res.once('close', () => {
      if (res.writableFinished) return;
      abort.abort();
      if (entry.outcome === 'pending' || entry.outcome === 'completed') this.log.update(entry, { outcome: 'aborted', endedAt: now() });
    });
    res.setHeader('request-id', entry.requestId);
    try {
      const { raw, bytes, tooLarge } = await readBody(req, abort.signal);
      const route = routeOf(entry.method, entry.path, this.settings.adminClock !== undefined);
      let body: unknown;
      let jsonError: string | undefined;
      try {
        body = raw === '' ? undefined : (JSON.parse(raw) as unknown);
      } catch (e) {
        jsonError = (e as Error).message;
      }
      const stream = (route === 'messages' || route === 'chat_completions') && (body as { stream?: unknown } | undefined)?.stream === true;
      const openaiWire = route === 'chat_completions' || (typeof route === 'object' && 'openai' in route);
      // OpenAI's SDKs read the request id from x-request-id.
      if (openaiWire) res.setHeader('x-request-id', entry.requestId);
      if (openaiWire) ex.openai = { includeUsage: (body as { stream_options?: { include_usage?: unknown } } | undefined)?.stream_options?.include_usage === true };
      this.log.update(entry, { rawBody: raw, body, stream });
      // An upload's multipart body, read before planning (a body that is no form is refused there).
      const form = typeof route === 'object' && 'openai' in route && route.openai.op === 'file-upload' && !tooLarge ? await readUploadForm(bytes, req.headers['content-type']).catch((e: unknown) => e as Error) : undefined;
      const decision = this.faults.take({ ...entry });
      planned = this.plan(entry, route, { body, jsonError, tooLarge, stream, host: req.headers.host, form }, decision);
      const jitter = this.settings.latencyJitterMs > 0 ? Math.random() * this.settings.latencyJitterMs : 0;
      const delay = this.settings.latencyMs + jitter + decision.latencyMs + planned.delayMs;
      this.log.update(entry, { delayMs: delay });
      if (delay > 0) await sleep(delay, undefined, { signal: abort.signal });
      await sendReply(this.responder, ex, planned.reply);
    } catch (e) {
      if (!abort.signal.aborted) this.internalError(ex, e);
    } finally {
      // A request that ends before its response began leaves no cache entry behind.
      const reply = planned?.reply;
      if (reply?.kind === 'message' && !ex.began) this.cache.release(reply.ticket);
    }
  }

  /** Decides the reply: injected faults first, then routing, headers, body and the route. */
  private plan(
    entry: RequestLogEntry,
    route: Route,
    input: { body: unknown; jsonError?: string; tooLarge: boolean; stream: boolean; host?: string; form?: UploadForm | Error },
    decision: FaultDecision,
  ): PlannedReply {
    const error = (e: ApiError): PlannedReply => ({ reply: { kind: 'error', error: e }, delayMs: 0 });
    const fault = decision.terminal;
    if (fault?.kind === 'status') {
      const headers: Record<string, string> = fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
      return error(new ApiError(fault.status, fault.message ?? defaultFaultMessage(fault.status), { headers, outcome: 'fault' }));
    }
    if (fault?.kind === 'drop') return { reply: { kind: 'drop' }, delayMs: 0 };
    if (fault?.kind === 'stream_error' && !input.stream) return error(new ApiError(529, defaultFaultMessage(529), { outcome: 'fault' }));
    try {
      if (!route) {
        throw new ApiError(
          404,
          `Not found: ${entry.method} ${entry.path}. The offline model serves POST /v1/messages, POST /v1/messages/count_tokens, /v1/messages/batches, POST /v1/chat/completions, /v1/files and /v1/batches.`,
        );
      }
      // The admin route is the emulator's own (no API version); it exists only when enabled.
      if (route === 'clock') {
        if (input.jsonError !== undefined) throw invalidRequest(`Request body is not valid JSON: ${input.jsonError}`);
        return planClock(entry.method, input.body, this.settings.adminClock as OfflineClock);
      }
      checkAuth(entry.headers, this.settings.apiKey);
      if (typeof route === 'object' && 'openai' in route) {
        if (input.tooLarge) throw new ApiError(413, `Request body exceeds the ${MAX_BODY_BYTES} byte limit.`);
        if (input.form instanceof Error) throw input.form;
        return planChatBatches(route.openai, this.chatBatches, { body: input.body, jsonError: input.jsonError, query: new URL(entry.path, 'http://offline').searchParams, form: input.form });
      }
      // Chat Completions has no version header; its body is restated as a 2023-06-01 Messages body.
      const version = route === 'chat_completions' ? '2023-06-01' : checkVersion(entry.headers);
      if ((route === 'messages' || route === 'chat_completions') && this.rateLimiter) {
        const verdict = this.rateLimiter.take();
        if (!verdict.admitted) {
          const seconds = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
          throw new ApiError(429, `Rate limit of the offline model reached; retry in ${seconds} s.`, { headers: { 'retry-after': String(seconds) } });
        }
      }
      if (input.tooLarge) throw new ApiError(413, `Request body exceeds the ${MAX_BODY_BYTES} byte limit.`);
      if (input.jsonError !== undefined) throw invalidRequest(`Request body is not valid JSON: ${input.jsonError}`);
      const betas = betasOf(entry.headers);
      if (route === 'count_tokens') return planCountTokens(input.body, version, betas);
      if (typeof route === 'object') {
        const origin = `http://${input.host ?? `${this.settings.host}:${this.settings.port}`}`;
        return planBatches(route, this.batches, { body: input.body, query: new URL(entry.path, 'http://offline').searchParams, version, betas, origin });
      }
      const window = this.settings.contextWindow;
      const deps = { cache: this.cache, attempts: this.attempts, minCacheableTokens: this.settings.minCacheableTokens, contextWindow: (model: string, b: readonly string[]) => windowFor(window, model, b) };
      const afterEvents = fault?.kind === 'stream_error' ? (fault.afterEvents ?? 1) : undefined;
      const opts = { betas, streamErrorAfter: afterEvents, promptTooLong: fault?.kind === 'prompt_too_long' };
      if (route === 'chat_completions') return planMessages(toMessagesBody(input.body).messages, version, deps, entry.seq, { ...opts, betas: [], prefixCaching: true, reasonUnasked: true, mediaRules: 'openai' });
      return planMessages(input.body, version, deps, entry.seq, opts);
    } catch (e) {
      if (isApiError(e)) return error(e);
      throw e;
    }
  }

  /** A bug in the emulator: answer 500 and say so in the log rather than hang the client. */
  private internalError(ex: Exchange, e: unknown): void {
    const message = `Offline model internal error: ${e instanceof Error ? e.message : String(e)}`;
    if (ex.res.headersSent) {
      this.log.update(ex.entry, { outcome: 'fault', error: { type: 'api_error', message }, endedAt: this.settings.now() });
      ex.res.destroy();
      return;
    }
    sendError(this.responder, ex, new ApiError(500, message, { outcome: 'fault' }));
  }
}
