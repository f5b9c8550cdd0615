/**
 * What the server decided to answer to one request, before any delay is applied and
 * anything is written: the contract between the route handlers and the response writer.
 */
import type { CacheTicket } from './cache';
import type { ApiError } from './errors';
import type { WireMessage } from './types';

export type Reply =
  | { kind: 'error'; error: ApiError }
  /** Destroy the socket without answering. */
  | { kind: 'drop' }
  /** A plain 200 JSON body (count_tokens). */
  | { kind: 'json'; body: unknown }
  /** A 200 body sent as is (batch results, JSONL). */
  | { kind: 'text'; body: string; contentType: string }
  | {
      kind: 'message';
      message: WireMessage;
      stream: boolean;
      /** Pending cache writes, committed when the response begins. */
      ticket: CacheTicket;
      /** Streams only: send this many events, then an `overloaded_error` event. */
      streamErrorAfter?: number;
      /** Streams only (`@pace`): this delay between events, and text in small deltas, like a model generating. */
      paceMs?: number;
    };

export interface PlannedReply {
  reply: Reply;
  /** Scripted delay (`@sleep`) before the response begins. */
  delayMs: number;
}
