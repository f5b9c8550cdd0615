/**
 * Sends a model call's live events to its fork's workflow (issue 15) while the provider
 * streams: text, thinking and tool-input deltas, each with the turn and the activity attempt.
 * A retried call (attempt > 1) first says so (`turn-start` with its attempt and an
 * `attempt-abandoned`), so a subscriber drops what the earlier attempt streamed.
 *
 * They go by the `streamLive` query, which the workflow answers by keeping them in memory for
 * readers: nothing of it reaches history (src/shared/streams/stream-events.ts). A query still costs the
 * workflow's worker an activation, so deltas are sent only while someone watches: the
 * workflow's `streamWatched` query, asked at the start (at most once a WATCH_CHECK_MS per fork
 * while it is unwatched, see lastAsked), and again every WATCH_CHECK_MS until it says yes; what the call streamed before that is sent coalesced the
 * moment it does, so a late subscriber still gets the call whole. While sending, consecutive
 * deltas of one content block become one event per tick (the batch interval), and one query
 * is in flight at a time, carrying whatever queued meanwhile. Streaming never fails a call: a
 * query that fails is sent again for a while (the workflow keeps each event once), then logged,
 * and the rest of the call goes unstreamed (the result, not the stream, is the record).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import type { MessageParam } from '../../shared/messages-api/anthropic';
import { LIVE_SEQ_PER_ATTEMPT, MAX_LIVE_ATTEMPT, STREAM_READ_MAX_BACKOFF_MS, type PublishedStreamEvent, type StreamLiveAck, type StreamLiveInput } from '../../shared/streams/stream-events';
import { streamLiveQuery, streamWatchedQuery } from '../../shared/wire/messages';

export interface LiveStreamOptions {
  /** Publish deltas at all (default true). The fork's `stream: false` turns one fork off. */
  enabled?: boolean;
  /** How often a content block's buffered deltas become one event. Default 100 ms. */
  batchIntervalMs?: number;
  /** Called when a delta leaves the worker (benchmarks stamp emit→receive latency with it). */
  onPublish?: (event: PublishedStreamEvent) => void;
}

export const DEFAULT_BATCH_INTERVAL_MS = 100;
/** How often an unwatched call asks whether a subscriber came. */
const WATCH_CHECK_MS = 1_000;
/** How long close() waits for the last events to reach the workflow. */
const DRAIN_MS = 5_000;
/**
 * Then, how long it waits for a reader to have read them, asking every LINGER_STEP_MS: the run
 * may close right after the call, and a closed run answers reads from replay, without its
 * live events (a reader that missed them still has the reply whole in `turn-end`). Longer than
 * a reader's longest pause between failed reads, so that a subscriber still backing off from
 * a worker's crash reads the retried call before the run closes. A reader that keeps up ends
 * the wait within a poll.
 */
const LINGER_MS = STREAM_READ_MAX_BACKOFF_MS + 500;
/** A send that fails is sent again after this long, doubling up to SEND_RETRY_MAX_MS, for at most SEND_GIVE_UP_MS. */
const SEND_RETRY_FIRST_MS = 100;
const SEND_RETRY_MAX_MS = 1_000;
const SEND_GIVE_UP_MS = 10_000;
const LINGER_STEP_MS = 20;

/**
 * When this worker last asked about each fork, and the answer (this worker's clock). A call
 * asks at its start when the fork was last seen watched, or not asked about for
 * WATCH_CHECK_MS: a fork in quick turns costs one query a second, not one a turn, and a
 * subscriber who came during a wait is seen by the next call's first delta. Bounded.
 */
const lastAsked = new Map<string, { at: number; watched: boolean }>();
const LAST_ASKED_MAX = 1_000;
function noteAsked(workflowId: string, watched: boolean): void {
  lastAsked.delete(workflowId);
  lastAsked.set(workflowId, { at: Date.now(), watched });
  if (lastAsked.size > LAST_ASKED_MAX) lastAsked.delete(lastAsked.keys().next().value!);
}
function worthAsking(workflowId: string): boolean {
  const last = lastAsked.get(workflowId);
  return !last || last.watched || Date.now() - last.at >= WATCH_CHECK_MS;
}

type Send = (input: StreamLiveInput) => Promise<StreamLiveAck>;

type Delta = { kind: 'text'; index: number; text: string } | { kind: 'thinking'; index: number; text: string } | { kind: 'tool'; index: number; text: string };

export class LivePublisher {
  private pending?: Delta;
  private readonly tools = new Map<number, { id: string; name: string }>();
  private readonly timer: NodeJS.Timeout;
  private failed = false;
  /** Whether a subscriber is known to watch; until then events wait in `held`, coalesced. */
  private watched = false;
  private held: PublishedStreamEvent[] = [];
  private checking?: NodeJS.Timeout;
  private closed = false;
  /** Whether the workflow was asked at all during this call. */
  private looked = false;

  /** Events waiting for the query in flight to end; `sent`: how many this attempt has sent (the next one's `n`). */
  private outbox: PublishedStreamEvent[] = [];
  private sent = 0;
  private inFlight?: Promise<void>;
  private drained?: () => void;
  /** The seq the workflow gave this call's last event (from its answer). */
  private lastSeq?: number;
  /** Since when sends have failed without a success between (undefined: the last one worked). */
  private failingSince?: number;
  private retryDelay = SEND_RETRY_FIRST_MS;
  /** close() has returned: what is still queued is dropped. */
  private finished = false;

  /** Built by open() in an activity; a test builds one with its own send and watched query. */
  constructor(
    private readonly sendLive: Send,
    private readonly workflowId: string,
    private readonly agentId: string,
    private readonly turn: number,
    private readonly attempt: number,
    private readonly opts: LiveStreamOptions,
    private readonly watchedQuery: () => Promise<boolean>,
    watchedAtSchedule: boolean,
    askNow: boolean,
  ) {
    this.timer = setInterval(() => this.tick(), opts.batchIntervalMs ?? DEFAULT_BATCH_INTERVAL_MS);
    this.timer.unref();
    // Watched when scheduled: stream at once. Otherwise ask now, or (asked about within the
    // last WATCH_CHECK_MS, and unwatched) once the call has run that long: see lastAsked.
    this.watched = watchedAtSchedule;
    if (!watchedAtSchedule && askNow) void this.checkWatched();
    else if (!watchedAtSchedule) {
      this.checking = setTimeout(() => void this.checkWatched(), WATCH_CHECK_MS);
      this.checking.unref();
    }
  }

  /** Asks the workflow whether anyone watches; until someone does, asks again every WATCH_CHECK_MS. */
  private async checkWatched(): Promise<void> {
    if (this.closed || this.watched) return;
    this.looked = true;
    // A workflow too busy to answer (its worker's tasks queued) counts as unwatched: asked again later.
    const watched = await this.watchedQuery().catch((err: unknown) => {
      this.debug('live stream: whether anyone watches went unanswered', err);
      return false;
    });
    noteAsked(this.workflowId, watched);
    if (this.closed) return;
    if (watched) {
      this.watched = true;
      const held = this.held;
      this.held = [];
      for (const e of held) this.send(e);
      return;
    }
    this.checking = setTimeout(() => void this.checkWatched(), WATCH_CHECK_MS);
    this.checking.unref();
  }

  /** A publisher for this activity's call, or undefined when streaming is off (for the worker or this fork). */
  static open(call: { agentId: string; turn: number; stream?: false; keepAlive?: number; watched?: true; askWatched?: true }, opts: LiveStreamOptions = {}): LivePublisher | undefined {
    // A keep-alive (cacheWhileWaiting) only re-reads the cache: nothing of it is the fork's output.
    if (opts.enabled === false || call.stream === false || call.keepAlive !== undefined) return undefined;
    const ctx = Context.current();
    const execution = ctx.info.workflowExecution;
    if (!execution) return undefined;
    // Attempts past the last one seqs have room for stream nothing (stream-events.ts).
    if (ctx.info.attempt > MAX_LIVE_ATTEMPT) return undefined;
    try {
      // The run the call belongs to (a query to the workflow id alone may reach a newer run).
      const handle = ctx.client.workflow.getHandle(execution.workflowId, execution.runId);
      const askNow = call.askWatched === true || worthAsking(execution.workflowId);
      return new LivePublisher(
        (input) => handle.query(streamLiveQuery, input),
        execution.workflowId,
        call.agentId,
        call.turn,
        ctx.info.attempt,
        opts,
        () => handle.query(streamWatchedQuery, { now: Date.now() }),
        call.watched === true,
        askNow,
      );
    } catch (err) {
      // No Temporal client in this activity's context (a test environment without one): no stream.
      ctx.log.debug('live stream unavailable for this call', { error: String(err) });
      return undefined;
    }
  }

  /** The call (this attempt) starts; a retry marks the earlier attempts' deltas void. */
  start(model?: string): void {
    this.emit({ type: 'turn-start', turn: this.turn, attempt: this.attempt, ...(model ? { model: model.slice(0, 200) } : {}) });
    if (this.attempt > 1) this.emit({ type: 'attempt-abandoned', turn: this.turn, attempt: this.attempt, abandonedAttempt: this.attempt - 1 });
  }

  /** One event of the provider's stream. */
  onEvent(event: Anthropic.Messages.RawMessageStreamEvent): void {
    if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
      this.tools.set(event.index, { id: event.content_block.id, name: event.content_block.name });
      return;
    }
    if (event.type !== 'content_block_delta') return;
    const d = event.delta;
    if (d.type === 'text_delta') this.add({ kind: 'text', index: event.index, text: d.text });
    else if (d.type === 'thinking_delta') this.add({ kind: 'thinking', index: event.index, text: d.thinking });
    else if (d.type === 'input_json_delta') this.add({ kind: 'tool', index: event.index, text: d.partial_json });
  }

  /** A response recovered from an earlier attempt (no provider stream): its text and thinking, whole. */
  replay(message: MessageParam): void {
    const blocks = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
    blocks.forEach((b, index) => {
      if (b.type === 'text') this.add({ kind: 'text', index, text: b.text });
      else if (b.type === 'thinking') this.add({ kind: 'thinking', index, text: b.thinking });
    });
  }

  /** Sends what is buffered and stops; waits for the workflow to have it (bounded), never throws. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.checking);
    this.tick();
    // A subscriber that came since the last look still gets this call whole; with none, the
    // held events go with the call (nothing was sent, nothing to wait for). A short call that
    // never looked does not ask: its reply reaches late subscribers in `turn-end`.
    if (!this.watched && this.looked) await this.checkWatched();
    this.closed = true;
    clearTimeout(this.checking);
    if (!this.watched) return void (this.finished = true);
    if (this.outbox.length > 0 || this.inFlight) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((resolve) => (this.drained = resolve)), new Promise<void>((resolve) => (timer = setTimeout(resolve, DRAIN_MS)))]);
      clearTimeout(timer);
    }
    await this.lingerForReader();
    this.finished = true;
  }

  /** Waits (at most LINGER_MS) until a reader has been given this call's last event. */
  private async lingerForReader(): Promise<void> {
    const last = this.lastSeq;
    if (last === undefined || this.failed) return;
    const until = Date.now() + LINGER_MS;
    while (Date.now() < until) {
      const ack = await this.sendLive({ turn: this.turn, attempt: this.attempt, from: Math.min(this.sent, LIVE_SEQ_PER_ATTEMPT), events: [] }).catch(() => undefined);
      if (!ack || ack.readUpTo >= last) return;
      await new Promise((resolve) => setTimeout(resolve, LINGER_STEP_MS));
    }
  }

  private add(d: Delta): void {
    const p = this.pending;
    if (p && p.kind === d.kind && p.index === d.index) {
      p.text += d.text;
      return;
    }
    this.tick();
    this.pending = { ...d };
  }

  /** Turns the pending delta into an event (sent at once unless a query is in flight). */
  private tick(): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    const base = { turn: this.turn, attempt: this.attempt, index: p.index };
    if (p.kind === 'text') this.emit({ type: 'text-delta', ...base, text: p.text });
    else if (p.kind === 'thinking') this.emit({ type: 'thinking-delta', ...base, thinking: p.text });
    else {
      const tool = this.tools.get(p.index);
      this.emit({ type: 'tool-input-delta', ...base, ...(tool ? { toolUseId: tool.id, name: tool.name } : {}), partialJson: p.text });
    }
  }

  private emit(body: DistributiveOmit<PublishedStreamEvent, 'v' | 'agentId'>): void {
    const event = { v: 1, agentId: this.agentId, ...body } as PublishedStreamEvent;
    if (this.watched) return this.send(event);
    // Held until someone watches: a delta joins the previous one of its block (one item, not hundreds).
    const last = this.held.at(-1);
    if (last && event.type === last.type && 'index' in event && 'index' in last && event.index === last.index && event.attempt === last.attempt) {
      if (event.type === 'text-delta' && last.type === 'text-delta') return void (last.text += event.text);
      if (event.type === 'thinking-delta' && last.type === 'thinking-delta') return void (last.thinking += event.thinking);
      if (event.type === 'tool-input-delta' && last.type === 'tool-input-delta') return void (last.partialJson += event.partialJson);
    }
    this.held.push(event);
  }

  private send(event: PublishedStreamEvent): void {
    if (this.failed) return;
    this.outbox.push(event);
    this.opts.onPublish?.(event);
    this.pump();
  }

  /** One query at a time, carrying everything queued; the next goes when it returns. */
  private pump(): void {
    if (this.inFlight || this.finished) return;
    if (this.outbox.length === 0 || this.failed) {
      this.drained?.();
      return;
    }
    const events = this.outbox.splice(0);
    const from = this.sent;
    if (from + events.length > LIVE_SEQ_PER_ATTEMPT) {
      // Seqs have room for this many events per attempt (stream-events.ts): the rest of a call
      // this long goes unstreamed, its reply recorded as always.
      this.failed = true;
      this.warn(new Error(`more than ${LIVE_SEQ_PER_ATTEMPT} live events in one call`));
      return this.drained?.();
    }
    this.sent += events.length;
    this.inFlight = this.sendLive({ turn: this.turn, attempt: this.attempt, from, events }).then(
      (ack) => {
        this.failingSince = undefined;
        this.retryDelay = SEND_RETRY_FIRST_MS;
        if (ack.lastSeq !== undefined) this.lastSeq = ack.lastSeq;
      },
      async (err: unknown) => {
        // A workflow briefly out of reach (its worker restarting after a crash, as when this
        // call is the retry of one cut off) gets the same batch again, with the same `from`:
        // the workflow keeps each event once. Past SEND_GIVE_UP_MS the call goes unstreamed.
        this.failingSince ??= Date.now();
        if (Date.now() - this.failingSince > SEND_GIVE_UP_MS || this.finished) {
          this.failed = true;
          return this.warn(err);
        }
        this.debug('live stream: a send went unanswered; sending it again', err);
        this.outbox.unshift(...events);
        this.sent = from;
        await new Promise((resolve) => setTimeout(resolve, this.retryDelay).unref());
        this.retryDelay = Math.min(this.retryDelay * 2, SEND_RETRY_MAX_MS);
      },
    );
    void this.inFlight.finally(() => {
      this.inFlight = undefined;
      this.pump();
    });
  }

  private debug(what: string, err: unknown): void {
    try {
      Context.current().log.debug(what, { turn: this.turn, error: String(err) });
    } catch {
      // Outside an activity context (closing late): nothing to log to.
    }
  }

  private warn(err: unknown): void {
    try {
      Context.current().log.warn('live stream publish failed; the call goes on unstreamed', { turn: this.turn, error: String(err) });
    } catch {
      // Outside an activity context (closing late): nothing to log to.
    }
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
