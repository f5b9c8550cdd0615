/**
 * Writes a planned reply to the HTTP response and records in the request log how it went:
 * JSON bodies, SSE streams (with per-event delay and mid-stream errors), error bodies and
 * dropped connections. Also commits the request's cache writes when its response begins.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PromptCache } from './cache';
import { type ApiError, errorBody } from './errors';
import type { RequestLog, RequestLogEntry } from './log';
import type { Reply } from './reply';
import { chunk, formatEvent, messageEvents, type SseEvent } from './sse';
import { chatChunks, chatCompletion, chatErrorBody } from './openai/response';

export interface ResponderDeps {
  log: RequestLog;
  cache: PromptCache;
  now: () => number;
  streamChunkDelayMs: number;
  /** Called as each SSE event is written (benchmarks time emit → subscriber with it). */
  onEvent?: (requestId: string, event: SseEvent, at: number) => void;
}

/** A paced stream's text and tool-input deltas: a few words each, as a generating model sends them. */
const PACED_DELTA_CHARS = 12;

/** Per-exchange state shared with the server, which releases cache writes on abort. */
export interface Exchange {
  entry: RequestLogEntry;
  res: ServerResponse;
  signal: AbortSignal;
  /** Set once the response has begun (cache writes committed). */
  began: boolean;
  /** Set for `POST /v1/chat/completions`: answer in OpenAI's shapes (and its stream's usage chunk when asked). */
  openai?: { includeUsage: boolean };
}

function writeJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Writes, and waits for the socket to drain when its buffer is full. */
async function write(res: ServerResponse, chunk: string, signal: AbortSignal): Promise<void> {
  if (!res.write(chunk)) await once(res, 'drain', { signal });
}

export function sendError(deps: ResponderDeps, ex: Exchange, error: ApiError): void {
  const { entry } = ex;
  const now = deps.now();
  deps.log.update(entry, {
    status: error.status,
    outcome: error.options.outcome ?? 'rejected',
    error: { type: error.type, message: error.message },
    responseBeganAt: now,
    endedAt: now,
  });
  const body = ex.openai ? chatErrorBody(error.status, error.message) : errorBody(error.type, error.message, entry.requestId);
  writeJson(ex.res, error.status, body, error.options.headers);
}

/** Sends `reply`. Rejects with an AbortError if the client goes away mid-stream. */
export async function sendReply(deps: ResponderDeps, ex: Exchange, reply: Reply): Promise<void> {
  const { entry, res } = ex;
  switch (reply.kind) {
    case 'error':
      return sendError(deps, ex, reply.error);
    case 'drop':
      deps.log.update(entry, { outcome: 'fault', endedAt: deps.now() });
      res.socket?.destroy();
      return;
    case 'json': {
      const now = deps.now();
      deps.log.update(entry, { status: 200, outcome: 'completed', responseBeganAt: now, endedAt: now });
      return writeJson(res, 200, reply.body);
    }
    case 'text': {
      const now = deps.now();
      deps.log.update(entry, { status: 200, outcome: 'completed', responseBeganAt: now, endedAt: now });
      res.writeHead(200, { 'content-type': reply.contentType, 'content-length': Buffer.byteLength(reply.body) });
      res.end(reply.body);
      return;
    }
    case 'message':
      if (reply.stream) return stream(deps, ex, reply);
      deps.cache.commit(reply.ticket);
      ex.began = true;
      {
        const now = deps.now();
        const { message } = reply;
        deps.log.update(entry, { status: 200, outcome: 'completed', response: message, usage: message.usage, responseBeganAt: now, endedAt: now });
        return writeJson(res, 200, ex.openai ? chatCompletion(message, now) : message);
      }
  }
}

async function stream(deps: ResponderDeps, ex: Exchange, reply: Extract<Reply, { kind: 'message' }>): Promise<void> {
  const { entry, res, signal } = ex;
  const { message } = reply;
  const paced = reply.paceMs !== undefined;
  const events = frames(message, ex, paced, deps.now());
  const delayMs = reply.paceMs ?? deps.streamChunkDelayMs;
  // An error can replace any event but the last: after message_stop the stream is done.
  const errorAt = reply.streamErrorAfter === undefined ? -1 : Math.min(Math.max(0, reply.streamErrorAfter), events.length - 1);
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  deps.log.update(entry, { status: 200, response: message, usage: message.usage });
  for (let i = 0; i < events.length; i++) {
    if (i > 0 && delayMs > 0) await sleep(delayMs, undefined, { signal });
    if (i === errorAt) {
      const error = { type: 'overloaded_error', message: 'Overloaded (mid-stream error injected by the offline model).' };
      deps.log.update(entry, { outcome: 'fault', error, endedAt: deps.now() });
      const frame = ex.openai ? `data: ${JSON.stringify(chatErrorBody(529, error.message))}\n\n` : formatEvent({ event: 'error', data: errorBody(error.type, error.message, entry.requestId) });
      await write(res, frame, signal);
      res.end();
      return;
    }
    if (i === events.length - 1) deps.log.update(entry, { outcome: 'completed', endedAt: deps.now() });
    const event = events[i] as (typeof events)[number];
    const flushed = res.write(event.frame);
    if (event.event) deps.onEvent?.(entry.requestId, event.event, deps.now());
    if (i === 0) {
      // message_start is on its way: the prompt has been "processed", its cache entries are live.
      deps.cache.commit(reply.ticket);
      ex.began = true;
      deps.log.update(entry, { responseBeganAt: deps.now() });
    }
    if (!flushed) await once(res, 'drain', { signal });
  }
  res.end();
}

/**
 * A stream's frames: the Messages events, or for the Chat Completions wire its chunks as
 * `data:` lines closed by `data: [DONE]` (the first frame carries the role, as
 * `message_start` does, so cache writes commit at the same point on both wires).
 */
function frames(message: Extract<Reply, { kind: 'message' }>['message'], ex: Exchange, paced: boolean, now: number): { frame: string; event?: SseEvent }[] {
  if (!ex.openai) return messageEvents(message, paced ? { chunkChars: PACED_DELTA_CHARS } : {}).map((event) => ({ frame: formatEvent(event), event }));
  const split = paced ? (s: string) => chunk(s, Math.max(1, Math.ceil(Array.from(s).length / PACED_DELTA_CHARS))) : (s: string) => chunk(s);
  const chunks = chatChunks(message, now, ex.openai.includeUsage, split).map((c) => ({ frame: `data: ${JSON.stringify(c)}\n\n` }));
  return [...chunks, { frame: 'data: [DONE]\n\n' }];
}
