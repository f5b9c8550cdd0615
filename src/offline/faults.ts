/**
 * Programmatic fault injection: tests queue failures (an HTTP error status, a mid-stream
 * error event, a dropped connection, extra latency) that the next matching requests get
 * instead of, or on top of, their normal answer.
 */
import type { RequestLogEntry } from './log';

interface FaultCommon {
  /** How many requests this fault applies to (default 1; `Infinity` for all). */
  times?: number;
  /** Only requests whose log entry (body already parsed) satisfies this. Default: all. */
  match?: (entry: RequestLogEntry) => boolean;
  /**
   * A fault window: only requests received before this time of the model's clock (emulated
   * ms, `model.clock.now()`); the first request at or after it removes the fault. Combine with
   * `times: Infinity` for an outage of a given length, ended by time passing or `clock.advance`.
   */
  until?: number;
}

/** Answer with this HTTP status and the matching error type. */
export interface StatusFault extends FaultCommon {
  kind: 'status';
  status: number;
  /** Sent as the `retry-after` header (seconds). */
  retryAfterSeconds?: number;
  message?: string;
}

/**
 * For a streaming request: send `afterEvents` SSE events (default 1: `message_start`),
 * then an `overloaded_error` error event. A non-streaming request gets a 529 instead.
 */
export interface StreamErrorFault extends FaultCommon {
  kind: 'stream_error';
  afterEvents?: number;
}

/**
 * Answer as the real API does a prompt over its context window: 400 `invalid_request_error`,
 * `prompt is too long: N tokens > M maximum` (N: the request's own count, at least M + 1;
 * M: the window the request was granted).
 */
export interface PromptTooLongFault extends FaultCommon {
  kind: 'prompt_too_long';
}

/** Destroy the connection without writing a response. */
export interface DropFault extends FaultCommon {
  kind: 'drop';
}

/** Delay the response by `ms`, then answer normally (combines with the other kinds). */
export interface LatencyFault extends FaultCommon {
  kind: 'latency';
  ms: number;
}

export type Fault = StatusFault | StreamErrorFault | DropFault | LatencyFault | PromptTooLongFault;

/** A fault that replaces the normal answer. */
export type TerminalFault = StatusFault | StreamErrorFault | DropFault | PromptTooLongFault;

/** What the queued faults do to one request. */
export interface FaultDecision {
  latencyMs: number;
  terminal?: TerminalFault;
}

interface Queued {
  fault: Fault;
  remaining: number;
}

/** The fault queue of one offline model. */
export class Faults {
  private queue: Queued[] = [];

  /** Queues a fault. Faults are tried in the order they were added. */
  add(fault: Fault): void {
    const times = fault.times ?? 1;
    if (!(times > 0)) throw new RangeError(`Fault "times" must be positive, got ${times}`);
    if (fault.kind === 'status' && !(Number.isInteger(fault.status) && fault.status >= 400 && fault.status <= 599)) {
      throw new RangeError(`A status fault needs an HTTP error status (400-599), got ${fault.status}`);
    }
    if (fault.kind === 'latency' && !(fault.ms >= 0)) throw new RangeError(`Latency must be ≥ 0 ms, got ${fault.ms}`);
    if (fault.until !== undefined && !Number.isFinite(fault.until)) throw new RangeError(`A fault window's "until" must be a finite clock time, got ${fault.until}`);
    this.queue.push({ fault, remaining: times });
  }

  /** Removes every queued fault. */
  clear(): void {
    this.queue = [];
  }

  /** Number of faults still queued. */
  size(): number {
    return this.queue.length;
  }

  /**
   * @internal Consumes the faults that apply to a request: every matching latency fault
   * (their delays add up) and the first matching terminal fault.
   */
  take(entry: RequestLogEntry): FaultDecision {
    const decision: FaultDecision = { latencyMs: 0 };
    for (const q of this.queue) {
      if (q.fault.until !== undefined && entry.receivedAt >= q.fault.until) {
        q.remaining = 0;
        continue;
      }
      if (q.fault.match && !q.fault.match(entry)) continue;
      if (q.fault.kind === 'latency') {
        decision.latencyMs += q.fault.ms;
      } else if (!decision.terminal) {
        decision.terminal = q.fault;
      } else {
        continue;
      }
      q.remaining -= 1;
    }
    this.queue = this.queue.filter((q) => q.remaining > 0);
    return decision;
  }
}
