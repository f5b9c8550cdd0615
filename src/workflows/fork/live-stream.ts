/**
 * The agent's live stream (issue 15): a `@temporalio/workflow-streams` log hosted by the fork
 * workflow. The model activity publishes its deltas to it by batched signal; this module is
 * the only workflow-side writer, for the events the workflow knows first (final tool calls,
 * tool results, delivered messages, turn ends, `done`). Subscribers long-poll it by update.
 *
 * Publishing here only appends to the in-memory log: no command, nothing in history (a
 * subscriber's poll records what it reads). The log's offsets are the events' `seq`: the
 * next run starts at this run's end offset (carried as `streamOffset`), with an empty log, so
 * seqs stay monotonic and continue-as-new does not copy the run's stream into the next input.
 */
import { WorkflowStream } from '@temporalio/workflow-streams/workflow';
import { STREAM_TOPIC, streamPreview, type PublishedStreamEvent, type StreamUsage } from '../../shared/stream-events';
import type { QueuedMessage } from '../../shared/tree-input';

/** An event body as a publisher here writes it: `v` and `agentId` are added. */
type Body = PublishedStreamEvent extends infer E ? (E extends PublishedStreamEvent ? Omit<E, 'v' | 'agentId'> : never) : never;

export class LiveStream {
  private readonly stream: WorkflowStream;
  private readonly topic;

  /**
   * Registers the stream's handlers (call before the first await, like the other handlers).
   * `enabled: false` (the fork's `stream: false`) publishes only `done`, so a subscriber ends.
   */
  constructor(
    private readonly agentId: string,
    private readonly enabled: boolean,
    baseOffset = 0,
  ) {
    this.stream = new WorkflowStream({ log: [], base_offset: baseOffset, publisher_sequences: {}, publisher_last_seen: {} });
    this.topic = this.stream.topic<unknown>(STREAM_TOPIC);
  }

  /** The offset the next run starts at (the package keeps no public length; read once, at continue-as-new). */
  get endOffset(): number {
    const state = this.stream.getState();
    return state.base_offset + state.log.length;
  }

  private publish(body: Body, always = false): void {
    if (!this.enabled && !always) return;
    this.topic.publish({ v: 1, agentId: this.agentId, ...body });
  }

  toolUse(turn: number, use: { id: string; name: string; input: unknown }): void {
    this.publish({ type: 'tool-use', turn, toolUseId: use.id, name: use.name, input: use.input });
  }

  toolResult(turn: number, r: { toolUseId: string; name?: string; isError: boolean; text: string }): void {
    this.publish({ type: 'tool-result', turn, toolUseId: r.toolUseId, ...(r.name ? { name: r.name } : {}), isError: r.isError, ...streamPreview(r.text) });
  }

  message(turn: number, m: QueuedMessage): void {
    this.publish({ type: 'message', turn, ...(m.from ? { from: m.from.slice(0, 200) } : {}), ...(m.summary ? { summary: m.summary.slice(0, 500) } : {}), ...streamPreview(m.text) });
  }

  turnEnd(turn: number, stopReason: string | null, usage: StreamUsage): void {
    this.publish({ type: 'turn-end', turn, stopReason: (stopReason ?? 'unknown').slice(0, 100), usage });
  }

  /** The last event; polls waiting now return it, later ones are refused (the run is closing). */
  done(turn: number, status: string, stopReason: string, error?: string): void {
    this.publish({ type: 'done', turn, status, stopReason, ...(error ? { error: streamPreview(error).preview } : {}) }, true);
    this.stream.detachPollers();
  }

  /** Before continue-as-new: waiting polls return what they have and re-poll the next run. */
  detach(): void {
    this.stream.detachPollers();
  }
}
