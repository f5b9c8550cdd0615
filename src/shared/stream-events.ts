/**
 * Live stream events of one agent (issue 15): what a subscriber of `handle.stream()` receives.
 *
 * The events travel over the fork workflow's `@temporalio/workflow-streams` log, topic
 * `STREAM_TOPIC`. A publisher (the model activity or the workflow) publishes an event
 * *without* `seq`: the sequence number is the item's offset in the workflow's stream log,
 * which the package keeps monotonic across continue-as-new, so a client that reconnects
 * resumes with `fromSeq` = last seen seq + 1 and the offset is never written twice.
 *
 * Who publishes what (and why):
 * - the model activity, live while the provider streams: `turn-start` (once per attempt,
 *   because only the activity knows its attempt number), `attempt-abandoned` (a retried
 *   call: the earlier attempts' deltas of that turn are void), `text-delta`,
 *   `thinking-delta`, `tool-input-delta`;
 * - the workflow, from its own deterministic state: `tool-use` (the reply's final tool
 *   calls), `tool-result`, `message` (a user message delivered at a turn boundary),
 *   `turn-end` (usage and stop reason), `done`.
 *
 * Every event is versioned (`v: 1`) and parsed with these schemas at the client: the stream
 * carries model output, so nothing in it is trusted. Pure and JSON-safe (no I/O).
 */
import { z } from 'zod';

/** The workflow-streams topic every forkflow agent publishes on. */
export const STREAM_TOPIC = 'forkflow.events';

/** Previews of tool results and messages are cut to this many characters (the transcript has them whole). */
export const STREAM_PREVIEW_CHARS = 2_000;

const turn = z.number().int().min(0);
const attempt = z.number().int().min(1);
/** A content block's index in the reply being streamed. */
const blockIndex = z.number().int().min(0);

const base = {
  v: z.literal(1),
  agentId: z.string().min(1).max(512),
  turn,
  /** The item's offset in the agent's stream; monotonic across continue-as-new. */
  seq: z.number().int().min(0),
};

const usageSchema = z.strictObject({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  cacheReadInputTokens: z.number().int().min(0),
  cacheCreationInputTokens: z.number().int().min(0),
});

export const streamEventSchema = z.discriminatedUnion('type', [
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
   * The turn's model call ended. `text`: the reply's text (a preview, `textChars` long in full),
   * so a subscriber that missed the call's deltas still reads what the agent said.
   */
  z.strictObject({ ...base, type: z.literal('turn-end'), stopReason: z.string().max(100), usage: usageSchema.optional(), text: z.string().max(STREAM_PREVIEW_CHARS).optional(), textChars: z.number().int().min(0).optional() }),
  /** The agent ended; nothing follows. */
  z.strictObject({
    ...base,
    type: z.literal('done'),
    status: z.string().max(100),
    stopReason: z.string().max(100).optional(),
    error: z.string().max(STREAM_PREVIEW_CHARS).optional(),
  }),
]);

export type StreamEvent = z.output<typeof streamEventSchema>;
export type StreamEventType = StreamEvent['type'];
export type StreamUsage = z.output<typeof usageSchema>;

/** What a publisher sends: an event without `seq` (the stream offset becomes the seq). */
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

/** Cuts a preview to STREAM_PREVIEW_CHARS. */
export function streamPreview(text: string): { preview: string; chars: number } {
  return { preview: text.length > STREAM_PREVIEW_CHARS ? text.slice(0, STREAM_PREVIEW_CHARS) : text, chars: text.length };
}
