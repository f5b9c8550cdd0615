/**
 * Publishes a model call's deltas to its fork's live stream (issue 15) while the provider
 * streams: text, thinking and tool-input deltas, each with the turn and the activity attempt.
 * A retried call (attempt > 1) first says so (`turn-start` with its attempt and an
 * `attempt-abandoned`), so a subscriber drops what the earlier attempt streamed.
 *
 * Cost: every batch the package sends is one signal in the fork's history (with its workflow
 * task, about 1 KB whatever it carries: `npm run bench:stream`), so deltas are sent only while
 * someone watches — the workflow's `streamWatched` query, asked at the start and every
 * WATCH_CHECK_MS until it says yes; what the call streamed before that is sent coalesced the
 * moment it does, so a late subscriber still gets the call whole. While sending, consecutive
 * deltas of one content block become one item per tick, and a tick (the batch interval) sends
 * at most one signal. Streaming never fails a call: a publish, flush or query that fails is
 * logged and dropped (the result, not the stream, is the record).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { MessageParam } from '../../shared/anthropic';
import { STREAM_TOPIC, type PublishedStreamEvent } from '../../shared/stream-events';
import { streamWatchedQuery } from '../../shared/messages';

export interface LiveStreamOptions {
  /** Publish deltas at all (default true). The fork's `stream: false` turns one fork off. */
  enabled?: boolean;
  /** How often buffered deltas are sent (one signal per interval at most). Default 100 ms. */
  batchIntervalMs?: number;
  /** Called when a delta leaves the worker (benchmarks stamp emit→receive latency with it). */
  onPublish?: (event: PublishedStreamEvent) => void;
}

export const DEFAULT_BATCH_INTERVAL_MS = 100;
/** How often an unwatched call asks whether a subscriber came. */
const WATCH_CHECK_MS = 1_000;

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

  private constructor(
    private readonly client: WorkflowStreamClient,
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
    // Watched when scheduled: stream at once. Otherwise ask only once the call has run
    // WATCH_CHECK_MS: a query per call would cost every turn a round trip to the workflow.
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
    const watched = await this.watchedQuery().catch((err: unknown) => {
      this.warn(err);
      return false;
    });
    if (this.closed) return;
    if (watched) {
      this.watched = true;
      const held = this.held;
      this.held = [];
      for (const e of held) this.send(e, false);
      this.flushSoon();
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
    const interval = opts.batchIntervalMs ?? DEFAULT_BATCH_INTERVAL_MS;
    try {
      // The package's own flusher runs at the same interval; ticks here hand it coalesced items.
      const client = WorkflowStreamClient.fromWithinActivity({ batchInterval: interval, maxRetryDuration: '30 seconds' });
      // The run the call belongs to (a query to the workflow id alone may reach a newer run).
      const handle = ctx.client.workflow.getHandle(execution.workflowId, execution.runId);
      return new LivePublisher(client, call.agentId, call.turn, ctx.info.attempt, opts, () => handle.query(streamWatchedQuery), call.watched === true, call.askWatched === true);
    } catch (err) {
      // No Temporal client in this activity's context (a test environment without one): no stream.
      ctx.log.debug('live stream unavailable for this call', { error: String(err) });
      return undefined;
    }
  }

  /** The call (this attempt) starts; a retry marks the earlier attempts' deltas void. */
  start(model?: string): void {
    this.emit({ type: 'turn-start', turn: this.turn, attempt: this.attempt, ...(model ? { model: model.slice(0, 200) } : {}) }, true);
    if (this.attempt > 1) this.emit({ type: 'attempt-abandoned', turn: this.turn, attempt: this.attempt, abandonedAttempt: this.attempt - 1 }, true);
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

  /** Sends what is buffered and stops; waits for the server to have it (bounded), never throws. */
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
    if (!this.watched) return;
    try {
      await this.client[Symbol.asyncDispose]();
    } catch (err) {
      this.warn(err);
    }
  }

  private add(d: Delta): void {
    const p = this.pending;
    if (p && p.kind === d.kind && p.index === d.index) {
      p.text += d.text;
      return;
    }
    this.tick(false);
    this.pending = { ...d };
  }

  /** Hands the pending delta to the package; `flush`: send now rather than at the package's next interval. */
  private tick(flush = true): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    const base = { turn: this.turn, attempt: this.attempt, index: p.index };
    if (p.kind === 'text') this.emit({ type: 'text-delta', ...base, text: p.text }, flush);
    else if (p.kind === 'thinking') this.emit({ type: 'thinking-delta', ...base, thinking: p.text }, flush);
    else {
      const tool = this.tools.get(p.index);
      this.emit({ type: 'tool-input-delta', ...base, ...(tool ? { toolUseId: tool.id, name: tool.name } : {}), partialJson: p.text }, flush);
    }
  }

  private emit(body: DistributiveOmit<PublishedStreamEvent, 'v' | 'agentId'>, forceFlush: boolean): void {
    const event = { v: 1, agentId: this.agentId, ...body } as PublishedStreamEvent;
    if (this.watched) return this.send(event, forceFlush);
    // Held until someone watches: a delta joins the previous one of its block (one item, not hundreds).
    const last = this.held.at(-1);
    if (last && event.type === last.type && 'index' in event && 'index' in last && event.index === last.index && event.attempt === last.attempt) {
      if (event.type === 'text-delta' && last.type === 'text-delta') return void (last.text += event.text);
      if (event.type === 'thinking-delta' && last.type === 'thinking-delta') return void (last.thinking += event.thinking);
      if (event.type === 'tool-input-delta' && last.type === 'tool-input-delta') return void (last.partialJson += event.partialJson);
    }
    this.held.push(event);
  }

  private send(event: PublishedStreamEvent, forceFlush: boolean): void {
    if (this.failed) return;
    try {
      this.client.topic<PublishedStreamEvent>(STREAM_TOPIC).publish(event, { forceFlush });
      this.opts.onPublish?.(event);
    } catch (err) {
      this.failed = true;
      this.warn(err);
    }
  }

  private flushSoon(): void {
    this.client.flush().catch((err: unknown) => this.warn(err));
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
