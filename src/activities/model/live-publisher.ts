/**
 * Publishes a model call's deltas to its fork's live stream (issue 15) while the provider
 * streams: text, thinking and tool-input deltas, each with the turn and the activity attempt.
 * A retried call (attempt > 1) first says so (`turn-start` with its attempt and an
 * `attempt-abandoned`), so a subscriber drops what the earlier attempt streamed.
 *
 * Cost: every batch the package sends is one signal in the fork's history, so deltas are
 * coalesced here — consecutive deltas of one content block become one item per tick — and
 * a tick (the batch interval) sends at most one signal. Streaming never fails a call: a
 * publish or flush that fails is logged and dropped (the result, not the stream, is the record).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { MessageParam } from '../../shared/anthropic';
import { STREAM_TOPIC, type PublishedStreamEvent } from '../../shared/stream-events';

export interface LiveStreamOptions {
  /** Publish deltas at all (default true). The fork's `stream: false` turns one fork off. */
  enabled?: boolean;
  /** How often buffered deltas are sent (one signal per interval at most). Default 100 ms. */
  batchIntervalMs?: number;
  /** Called when a delta leaves the worker (benchmarks stamp emit→receive latency with it). */
  onPublish?: (event: PublishedStreamEvent) => void;
}

export const DEFAULT_BATCH_INTERVAL_MS = 100;

type Delta = { kind: 'text'; index: number; text: string } | { kind: 'thinking'; index: number; text: string } | { kind: 'tool'; index: number; text: string };

export class LivePublisher {
  private pending?: Delta;
  private readonly tools = new Map<number, { id: string; name: string }>();
  private readonly timer: NodeJS.Timeout;
  private failed = false;

  private constructor(
    private readonly client: WorkflowStreamClient,
    private readonly agentId: string,
    private readonly turn: number,
    private readonly attempt: number,
    private readonly opts: LiveStreamOptions,
  ) {
    this.timer = setInterval(() => this.tick(), opts.batchIntervalMs ?? DEFAULT_BATCH_INTERVAL_MS);
    this.timer.unref();
  }

  /** A publisher for this activity's call, or undefined when streaming is off (for the worker or this fork). */
  static open(call: { agentId: string; turn: number; stream?: false }, opts: LiveStreamOptions = {}): LivePublisher | undefined {
    if (opts.enabled === false || call.stream === false) return undefined;
    const ctx = Context.current();
    if (!ctx.info.workflowExecution) return undefined;
    const interval = opts.batchIntervalMs ?? DEFAULT_BATCH_INTERVAL_MS;
    // The package's own flusher runs at the same interval; ticks here hand it coalesced items.
    const client = WorkflowStreamClient.fromWithinActivity({ batchInterval: interval, maxRetryDuration: '30 seconds' });
    return new LivePublisher(client, call.agentId, call.turn, ctx.info.attempt, opts);
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
    this.tick();
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
    if (this.failed) return;
    const event = { v: 1, agentId: this.agentId, ...body } as PublishedStreamEvent;
    try {
      this.client.topic<PublishedStreamEvent>(STREAM_TOPIC).publish(event, { forceFlush });
      this.opts.onPublish?.(event);
    } catch (err) {
      this.failed = true;
      this.warn(err);
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
