/**
 * Live stream events of one agent (issue 15): what a subscriber of `handle.stream()` receives.
 *
 * Two kinds of event, on two channels, so that watching an agent writes nothing to its history:
 * - **Recorded events**, published by the workflow from its own deterministic state: `tool-use`
 *   (the reply's final tool calls), `tool-result`, `message` (a user message delivered at a
 *   turn boundary), `compaction` (the context was compacted), `failover` (calls moved to a
 *   fallback provider, or back), `turn-end` (usage, stop reason,
 *   a preview of the reply), `done`. They are
 *   kept in the run's `@temporalio/workflow-streams` log (topic `STREAM_TOPIC`), which replay
 *   rebuilds from history: nothing is written to keep them.
 * - **Live events**, sent by the model activity while the provider streams: `turn-start` (once
 *   per attempt: only the activity knows its attempt), `attempt-abandoned` (a retried call: the
 *   earlier attempts' deltas of that turn are void), `text-delta`, `thinking-delta`,
 *   `tool-input-delta`. The activity hands them to the workflow by query (`streamLive`), which
 *   keeps them in memory only: they never reach history. A workflow evicted from its worker's
 *   cache forgets them; the reply itself is recorded all the same (the call's result, and
 *   `turn-end`).
 *
 * Subscribers read both by query (`streamRead`), which is not recorded either.
 *
 * `seq` orders both kinds in one sequence, monotonic across continue-as-new and across retries
 * of a call, ordered but not contiguous: a recorded event at log offset `o` has
 * `(o + 1) · SEQ_BAND`; a live event sent while the log ends at `e` has
 * `e · SEQ_BAND + attempt · LIVE_SEQ_PER_ATTEMPT + n` (its index `n` within its attempt), so
 * it sorts after every recorded event before it and before every one after it. A client that
 * reconnects resumes with `fromSeq` = last seen seq + 1.
 *
 * Every event is versioned (`v: 1`) and parsed with these schemas at the client: the stream
 * carries model output, so nothing in it is trusted. Pure and JSON-safe (no I/O).
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';

/** The workflow-streams topic every forkflow agent publishes on. */
export const STREAM_TOPIC = 'forkflow.events';

/** Previews of tool results and messages are cut to this many characters (the transcript has them whole). */
export const STREAM_PREVIEW_CHARS = 2_000;
/** `turn-end` carries a reply's text whole up to this many characters (a preview beyond). */
export const STREAM_REPLY_CHARS = 200_000;

const turn = schemaOnce('streams/stream-events#turn', () => z.number().int().min(0));
const attempt = schemaOnce('streams/stream-events#attempt', () => z.number().int().min(1));
/** A content block's index in the reply being streamed. */
const blockIndex = schemaOnce('streams/stream-events#blockIndex', () => z.number().int().min(0));

const base = schemaOnce('streams/stream-events#base', () => ({
  v: z.literal(1),
  agentId: z.string().min(1).max(512),
  turn,
  /** Its place in the agent's stream: ordered (not contiguous), monotonic across continue-as-new (see above). */
  seq: z.number().int().min(0),
}));

const usageSchema = schemaOnce('streams/stream-events#usageSchema', () => z.strictObject({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  cacheReadInputTokens: z.number().int().min(0),
  cacheCreationInputTokens: z.number().int().min(0),
}));

export const streamEventSchema = schemaOnce('streams/stream-events#streamEventSchema', () => z.discriminatedUnion('type', [
  /** A model call (attempt) of `turn` started. `attempt > 1`: a retry, see `attempt-abandoned`. */
  z.strictObject({ ...base, type: z.literal('turn-start'), attempt, model: z.string().max(200).optional() }),
  /** Deltas of `turn` with an attempt below `attempt` came from a call that was retried: discard them. */
  z.strictObject({
    ...base,
    type: z.literal('attempt-abandoned'),
    attempt,
    /** The last attempt given up (attempt − 1). */
    abandonedAttempt: attempt,
  }),
  z.strictObject({ ...base, type: z.literal('text-delta'), attempt, index: blockIndex, text: z.string() }),
  z.strictObject({ ...base, type: z.literal('thinking-delta'), attempt, index: blockIndex, thinking: z.string() }),
  /** A piece of a tool call's JSON input as the model writes it (not parseable until complete). */
  z.strictObject({
    ...base,
    type: z.literal('tool-input-delta'),
    attempt,
    index: blockIndex,
    toolUseId: z.string().max(200).optional(),
    name: z.string().max(200).optional(),
    partialJson: z.string(),
  }),
  /**
   * Progress of a running tool call (an MCP server's progress notifications), live: `progress`
   * rises, `total` when the server knows it. `attempt` is the call's attempt (a re-run starts again).
   */
  z.strictObject({
    ...base,
    type: z.literal('tool-progress'),
    attempt,
    toolUseId: z.string().max(200),
    name: z.string().max(200).optional(),
    progress: z.number().finite(),
    total: z.number().finite().optional(),
    message: z.string().max(STREAM_PREVIEW_CHARS).optional(),
  }),
  /** A tool call of the turn's final reply. */
  z.strictObject({ ...base, type: z.literal('tool-use'), toolUseId: z.string().max(200), name: z.string().max(200), input: z.unknown() }),
  z.strictObject({
    ...base,
    type: z.literal('tool-result'),
    toolUseId: z.string().max(200),
    name: z.string().max(200).optional(),
    isError: z.boolean(),
    /** The result's text, cut to STREAM_PREVIEW_CHARS. */
    preview: z.string(),
    /** Its whole length in characters. */
    chars: z.number().int().min(0),
  }),
  /** A user message (SendMessage, an operator) delivered at the boundary before `turn`. */
  z.strictObject({
    ...base,
    type: z.literal('message'),
    from: z.string().max(200).optional(),
    summary: z.string().max(500).optional(),
    preview: z.string(),
    chars: z.number().int().min(0),
  }),
  /**
   * The agent's context was compacted before (forkflow) or in (provider) `turn`: its requests
   * start at message `at` from now on. `tokensBefore`: the request's size before; `tokensAfter`:
   * after, when known (a provider's, at once); `usage`: what summarising cost.
   */
  z.strictObject({
    ...base,
    type: z.literal('compaction'),
    by: z.enum(['forkflow', 'provider']),
    reason: z.string().max(100),
    at: z.number().int().min(0),
    compaction: z.number().int().min(1),
    tokensBefore: z.number().int().min(0),
    tokensAfter: z.number().int().min(0).optional(),
    usage: usageSchema.optional(),
  }),
  /**
   * The agent's model calls moved (src/shared/providers/failover.ts): from an unavailable provider and
   * model to the next fallback (`reason`: the failure), or back to the primary once it served
   * again (`reason` `recovered`). `until`: workflow ms until which calls stay on `to`.
   */
  z.strictObject({
    ...base,
    type: z.literal('failover'),
    from: z.strictObject({ provider: z.string().max(64), model: z.string().max(200) }),
    to: z.strictObject({ provider: z.string().max(64), model: z.string().max(200) }),
    reason: z.string().max(300),
    until: z.number().int().min(0).optional(),
  }),
  /**
   * The turn's model call ended. `text`: the reply's text, whole when `textChars` equals its
   * length (up to STREAM_REPLY_CHARS), so a subscriber that missed some of the call's deltas
   * (it came late, or the run closed between two reads) still has what the agent said.
   */
  z.strictObject({ ...base, type: z.literal('turn-end'), stopReason: z.string().max(100), usage: usageSchema.optional(), text: z.string().max(STREAM_REPLY_CHARS).optional(), textChars: z.number().int().min(0).optional() }),
  /** The agent ended; nothing follows. */
  z.strictObject({
    ...base,
    type: z.literal('done'),
    status: z.string().max(100),
    stopReason: z.string().max(100).optional(),
    error: z.string().max(STREAM_PREVIEW_CHARS).optional(),
  }),
]));

export type StreamEvent = z.output<typeof streamEventSchema>;
export type StreamEventType = StreamEvent['type'];
export type StreamUsage = z.output<typeof usageSchema>;

/** What a publisher sends: an event without `seq` (the workflow gives it one). */
export type PublishedStreamEvent = StreamEvent extends infer E ? (E extends StreamEvent ? Omit<E, 'seq'> : never) : never;

/** An event of one type. */
export type StreamEventOf<T extends StreamEventType> = Extract<StreamEvent, { type: T }>;

/** Parses an item read from the stream at `offset`; throws a ZodError on anything else. */
export function parseStreamEvent(value: unknown, offset: number): StreamEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return streamEventSchema.parse(value);
  }
  return streamEventSchema.parse({ ...(value as Record<string, unknown>), seq: offset });
}

/** Cuts a preview to STREAM_PREVIEW_CHARS (or `max`). */
export function streamPreview(text: string, max = STREAM_PREVIEW_CHARS): { preview: string; chars: number } {
  return { preview: text.length > max ? text.slice(0, max) : text, chars: text.length };
}

/**
 * A reader whose reads fail (the agent's worker restarting, the server away) reads again after
 * a pause that doubles up to this; the model activity's publisher waits longer than it for a
 * reader to catch up before a call ends (src/activities/model/live-publisher.ts).
 */
export const STREAM_READ_MAX_BACKOFF_MS = 2_000;
/** Seqs of one band: the live events sent between two recorded events (see above). */
export const SEQ_BAND = 2 ** 20;
/** Live events one attempt of a call may send (its `n` stays below this); attempts above MAX_LIVE_ATTEMPT stream nothing. */
export const LIVE_SEQ_PER_ATTEMPT = 2 ** 14;
export const MAX_LIVE_ATTEMPT = SEQ_BAND / LIVE_SEQ_PER_ATTEMPT - 1;

/** The seq of the recorded event at log offset `offset`. */
export const recordedSeq = (offset: number): number => (offset + 1) * SEQ_BAND;
/** The seq of live event `n` of `attempt`, sent while the recorded log ends at `logEnd`. */
export const liveSeq = (logEnd: number, attempt: number, n: number): number => logEnd * SEQ_BAND + attempt * LIVE_SEQ_PER_ATTEMPT + n;
/** The first log offset whose recorded event has a seq ≥ `seq`. */
export const firstOffsetFrom = (seq: number): number => Math.max(0, Math.ceil(seq / SEQ_BAND) - 1);

/** Event types a model activity sends live (by query, off history). */
export const LIVE_EVENT_TYPES = ['turn-start', 'attempt-abandoned', 'text-delta', 'thinking-delta', 'tool-input-delta', 'tool-progress'] as const;

/**
 * Tool progress (`tool-progress`) travels by the same `streamLive` query with `lane`: the
 * call's place in its round (1-based, at most MAX_LIVE_ATTEMPT), which takes the attempt's
 * place in the seq, since a round's calls run side by side while the log stands still; each
 * attempt of a call numbers its events from `(attempt - 1) · TOOL_PROGRESS_PER_ATTEMPT`.
 */
export const TOOL_PROGRESS_PER_ATTEMPT = 1024;

/** `streamRead` query input: events with seq ≥ `fromSeq`; `now`, the reader's clock (ms), tells model calls someone watches. */
export const streamReadInputSchema = schemaOnce('streams/stream-events#streamReadInputSchema', () => z.strictObject({
  fromSeq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  now: z.number().finite().min(0).optional(),
}));
export type StreamReadInput = z.infer<typeof streamReadInputSchema>;

export interface StreamReadResult {
  /** The run that answered: a client that sees it change reads the end of the one before. */
  runId: string;
  /** Events, seq ascending, each as published plus `seq` (unparsed: the client parses them). */
  events: Record<string, unknown>[];
  /** More events are waiting than one answer carries: read again at once. */
  more: boolean;
}

/** `streamLive` query input: live events `from`, `from + 1`, … of one attempt of one turn's call. */
export const streamLiveInputSchema = schemaOnce('streams/stream-events#streamLiveInputSchema', () => z.strictObject({
  turn,
  attempt: attempt.max(MAX_LIVE_ATTEMPT),
  /** Set by a tool call sending `tool-progress` (see TOOL_PROGRESS_PER_ATTEMPT). */
  lane: z.number().int().min(1).max(MAX_LIVE_ATTEMPT).optional(),
  from: z.number().int().min(0).max(LIVE_SEQ_PER_ATTEMPT),
  events: z.array(z.record(z.string(), z.unknown())).max(1_000),
}));
export type StreamLiveInput = z.infer<typeof streamLiveInputSchema>;

export interface StreamLiveAck {
  /** How many of the events the workflow kept (not another agent's, not a recorded kind). */
  kept: number;
  /** The seq the last kept one got. */
  lastSeq?: number;
  /** The highest seq any reader has been given (-1: none): a closing call waits a moment for a reader to pass its last event. */
  readUpTo: number;
}

/** `streamWatched` query input (optional): the asking model call's clock, ms. */
export const streamWatchedInputSchema = schemaOnce('streams/stream-events#streamWatchedInputSchema', () => z.strictObject({ now: z.number().finite().min(0) }).optional());
export type StreamWatchedInput = NonNullable<z.infer<typeof streamWatchedInputSchema>>;
