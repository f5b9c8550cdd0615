/**
 * The agent's live stream (issue 15), hosted by the fork workflow; src/shared/streams/stream-events.ts
 * says what travels on it and how seqs are made.
 *
 * - Recorded events (final tool calls, tool results, delivered messages, turn ends, `done`)
 *   go to a `@temporalio/workflow-streams` log. Publishing only appends to memory: no command,
 *   nothing in history, and replay rebuilds the log. The next run starts at this run's end
 *   offset (carried as `streamOffset`) with an empty log, so seqs stay monotonic and
 *   continue-as-new does not copy the run's stream into the next input.
 * - Live events (the model activity's deltas) arrive by the `streamLive` query and are kept
 *   in memory for readers, bounded (./live-deltas.ts): never in history, and not part of the
 *   workflow's state (nothing the workflow decides reads them, so replay without them is the
 *   same run).
 * - Readers use the `streamRead` query (./stream-read.ts): nothing recorded. The package's own
 *   poll update and publish signal are still served (clients of that protocol, and histories
 *   that hold them), but every poll and batch is an event in history: forkflow's client and
 *   activity use the queries.
 * - Event bodies, and what is left of them when the content is hidden: ./stream-body.ts.
 */
import { ApplicationFailure, condition, setHandler, workflowInfo } from '@temporalio/workflow';
import { decodePayloadWire, WorkflowStream, workflowStreamPollUpdate, workflowStreamPublishSignal } from '@temporalio/workflow-streams/workflow';
import type { PollInput, PollResult, PublishInput } from '@temporalio/workflow-streams/lib/types';
import { z } from 'zod';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import { streamLiveQuery, streamReadQuery, streamWatchedQuery } from '../../shared/wire/messages';
import {
  STREAM_REPLY_CHARS,
  STREAM_TOPIC,
  streamLiveInputSchema,
  streamPreview,
  streamReadInputSchema,
  streamWatchedInputSchema,
  type StreamLiveAck,
  type StreamLiveInput,
  type StreamReadInput,
  type StreamReadResult,
  type StreamUsage,
} from '../../shared/streams/stream-events';
import type { QueuedMessage } from '../../shared/tree/tree-input';
import { workflowNow } from '../clock';
import { schemaOnce } from '../../shared/base/schema-once';
import { LiveDeltas } from './live-deltas';
import { withoutContent, type Body } from './stream-body';
import { readPage, type RecordedLog } from './stream-read';

/**
 * How long a closing run that has a live subscriber waits for it to read the last events: a
 * subscriber between two polls would otherwise find the run closed and miss them.
 */
const LINGER_MS = 3_000;
/** A subscriber that polled within this long counts as live. */
const LIVE_SUBSCRIBER_MS = 10_000;

/** The package's signal and update inputs, checked before its handlers see them (anyone may send either). */
const publishInputSchema = schemaOnce('workflows/fork/live-stream#publishInputSchema', () => z.object({
  items: z.array(z.object({ topic: z.string().max(200), data: z.string() })).max(10_000),
  publisher_id: z.string().max(200),
  sequence: z.number().int().min(0),
}));
const pollInputSchema = schemaOnce('workflows/fork/live-stream#pollInputSchema', () => z.object({ topics: z.array(z.string().max(200)).max(100), from_offset: z.number().int().min(0) }));

export class LiveStream {
  // Set in the constructor, after handlers that may run before it (see there).
  private readonly stream!: WorkflowStream;
  private readonly topic!: ReturnType<WorkflowStream['topic']>;
  /** Publish signals dispatched before the stream existed, applied once it does. */
  private readonly early: PublishInput[] = [];
  /** The highest offset a poll has returned up to (next_offset), and when a poll last started or ended (workflow time). */
  private readUpTo = 0;
  private lastPollAt?: number;
  /** Polls waiting in the handler right now. */
  private polling = 0;
  /** Live events (deltas) by seq, as the model activity sent them; memory only, see above. */
  private readonly live = new LiveDeltas();
  /** When a reader last read, by its clock (`streamRead`'s `now`), and the highest seq one was given. */
  private lastReadAt?: number;
  private readUpToSeq = -1;

  /**
   * Registers the stream's handlers (call before the first await, like the other handlers).
   * `enabled: false` (the fork's `stream: false`) publishes only `done`, so a subscriber ends.
   */
  constructor(
    private readonly agentId: string,
    private readonly enabled: boolean,
    baseOffset = 0,
    polledAt?: number,
    /** Where a malformed publish signal is reported (status.rejectedSignals). */
    private readonly onRejected: (signal: string, issues: string[]) => void = () => undefined,
    /**
     * The agent's content is not served (skipTranscript): its events say what happened (a tool
     * was called, a result came, a turn ended) and how long, but carry no text, input or
     * reply, and no live deltas are kept. Whoever may not read the transcript reads none of it here.
     */
    private readonly contentHidden = false,
  ) {
    this.readUpTo = baseOffset;
    // A subscriber of the previous run re-polls this one: it counts as live here too.
    this.lastPollAt = polledAt;
    // Ours first: a poll or publish that came before any handler existed (a subscriber that
    // polled with the fork's start) is buffered by the SDK and handed to the first handler
    // registered for its name. Were that the package's own, its poll would wait unseen, and
    // the run would take the fork for unwatched for the whole of its first call.
    this.watchPolls();
    this.guardPublish();
    this.stream = new WorkflowStream({ log: [], base_offset: baseOffset, publisher_sequences: {}, publisher_last_seen: {} });
    this.topic = this.stream.topic<unknown>(STREAM_TOPIC);
    // The package's constructor registered its handlers over ours: ours again.
    this.watchPolls();
    this.guardPublish();
    for (const raw of this.early.splice(0)) this.onPublish(raw);
    setHandler(streamWatchedQuery, (probe) => {
      const asked = streamWatchedInputSchema.parse(probe);
      return this.watched || (asked !== undefined && this.lastReadAt !== undefined && Math.abs(asked.now - this.lastReadAt) <= LIVE_SUBSCRIBER_MS);
    });
    setHandler(streamReadQuery, (input) => this.read(streamReadInputSchema.parse(input)));
    setHandler(streamLiveQuery, (input) => this.keepLive(streamLiveInputSchema.parse(input)));
  }

  /** Recorded events from the log and live ones from memory, seq ≥ `fromSeq`, in seq order. */
  private read(input: StreamReadInput): StreamReadResult {
    if (input.now !== undefined) this.lastReadAt = input.now;
    const page = readPage(this.recorded, this.live.kept, input.fromSeq);
    if (page.lastSeq !== undefined) this.readUpToSeq = Math.max(this.readUpToSeq, page.lastSeq);
    return { runId: workflowInfo().runId, events: page.events, more: page.more };
  }

  /** Keeps a model call's (or a tool's) live events for readers: see ./live-deltas.ts. */
  private keepLive(input: StreamLiveInput): StreamLiveAck {
    if (!this.enabled || this.contentHidden) return { kept: 0, readUpTo: this.readUpToSeq };
    return { ...this.live.keep(this.agentId, input, this.endOffset), readUpTo: this.readUpToSeq };
  }

  /** A subscriber is here: a poll waits, or one ended within LIVE_SUBSCRIBER_MS (of the last activation's time). */
  get watched(): boolean {
    return this.polling > 0 || (this.lastPollAt !== undefined && workflowNow() - this.lastPollAt <= LIVE_SUBSCRIBER_MS);
  }

  /**
   * The package's publish signal throws on a malformed batch, and a signal handler that throws
   * fails the workflow task over and over: a bad batch is dropped and reported instead.
   */
  private guardPublish(): void {
    setHandler(workflowStreamPublishSignal, (raw: PublishInput) => {
      if (!this.stream) return void this.early.push(raw);
      this.onPublish(raw);
    });
  }

  private onPublish(raw: PublishInput): void {
    const parsed = publishInputSchema.safeParse(raw);
    if (!parsed.success) return this.onRejected(workflowStreamPublishSignal.name, describeIssues(parsed.error));
    try {
      for (const item of parsed.data.items) decodePayloadWire(item.data);
    } catch (err) {
      return this.onRejected(workflowStreamPublishSignal.name, [`an item is not a base64 Payload: ${String(err).slice(0, 200)}`]);
    }
    const stream = this.stream;
    (stream['onPublish'] as (input: PublishInput) => void).call(stream, parsed.data);
  }

  /**
   * Re-registers the package's poll update around its own handler, to see how far subscribers
   * have read (the package keeps no such record). The validator is the package's rule: no new
   * poll once the run is draining (the subscriber re-polls the next run).
   */
  private watchPolls(): void {
    setHandler(
      workflowStreamPollUpdate,
      async (input: PollInput) => {
        this.lastPollAt = workflowNow();
        this.polling++;
        try {
          // A poll buffered since the start runs inside the constructor, before the stream exists.
          if (!this.stream) await Promise.resolve();
          // The package's handler and draining flag are private in its types, public at run time.
          const stream = this.stream;
          const result = await (stream['onPoll'] as (input: PollInput) => Promise<PollResult>).call(stream, input);
          this.readUpTo = Math.max(this.readUpTo, result.next_offset);
          return result;
        } finally {
          this.polling--;
          this.lastPollAt = workflowNow();
        }
      },
      {
        validator: (input: PollInput) => {
          // Rejected before it is accepted: nothing in history, and the handler sees only good input.
          const parsed = pollInputSchema.safeParse(input);
          if (!parsed.success) throw ApplicationFailure.create({ message: `Invalid stream poll: ${describeIssues(parsed.error).join('; ')}`, type: 'InvalidStreamPoll', nonRetryable: true });
          if (this.stream?.['draining'] as boolean | undefined) throw ApplicationFailure.create({ message: 'Workflow is draining for continue-as-new', type: 'StreamDraining', nonRetryable: true });
        },
      },
    );
  }

  /**
   * Before the run closes or continues as new: a live subscriber gets up to LINGER_MS to read
   * the end of the log. Nothing waits (and no timer is recorded) without one, or when it is
   * already there.
   */
  async linger(): Promise<void> {
    const end = this.endOffset;
    const caughtUp = () => this.readUpTo >= end;
    if (caughtUp() || this.lastPollAt === undefined || workflowNow() - this.lastPollAt > LIVE_SUBSCRIBER_MS) return;
    await condition(caughtUp, LINGER_MS);
  }

  /** When a subscriber last polled (workflow time), carried to the next run. */
  get polledAt(): number | undefined {
    return this.lastPollAt;
  }

  /**
   * The package's log as it holds it (private in its types, public at run time): its public
   * `getState()` re-encodes every item, too costly for each `streamLive` batch.
   */
  private get recorded(): RecordedLog {
    return { base: this.stream['baseOffset'] as number, log: this.stream['log'] as never };
  }

  /** The offset the next recorded event gets; the next run starts here. */
  get endOffset(): number {
    const { base, log } = this.recorded;
    return base + log.length;
  }

  private publish(body: Body, always = false): void {
    if (!this.enabled && !always) return;
    this.topic.publish({ v: 1, agentId: this.agentId, ...(this.contentHidden ? withoutContent(body) : body) });
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

  /** A compaction: the agent's requests start at message `c.at` from now on. */
  compaction(turn: number, c: { by: 'forkflow' | 'provider'; reason: string; at: number; compaction: number; tokensBefore: number; tokensAfter?: number; usage?: StreamUsage }): void {
    this.publish({ type: 'compaction', turn, ...c });
  }

  /** Calls moved to another provider and model, or back (src/shared/providers/failover.ts). */
  failover(turn: number, f: { from: { provider: string; model: string }; to: { provider: string; model: string }; reason: string; until?: number }): void {
    this.publish({ type: 'failover', turn, ...f });
  }

  turnEnd(turn: number, stopReason: string | null, usage: StreamUsage, text = ''): void {
    const reply = text === '' ? {} : (({ preview, chars }) => ({ text: preview, textChars: chars }))(streamPreview(text, STREAM_REPLY_CHARS));
    this.publish({ type: 'turn-end', turn, stopReason: (stopReason ?? 'unknown').slice(0, 100), usage, ...reply });
  }

  /** The last event; a live subscriber is given a moment to read it, then polls are refused (the run is closing). */
  async done(turn: number, status: string, stopReason: string, error?: string): Promise<void> {
    this.publish({ type: 'done', turn, status, stopReason, ...(error ? { error: streamPreview(error).preview } : {}) }, true);
    await this.linger();
    this.stream.detachPollers();
  }

  /** Before continue-as-new: subscribers read this run's end, then re-poll the next run. */
  async detach(): Promise<void> {
    await this.linger();
    this.stream.detachPollers();
  }
}
