/**
 * The `streamRead` answer: the agent's recorded events (from the stream's log) and its live
 * ones (./live-deltas.ts) from a seq on, in one seq-ordered page of bounded size. A query, so
 * nothing is recorded; ./live-stream.ts registers it.
 */
import { defaultPayloadConverter } from '@temporalio/workflow';
import { firstOffsetFrom, recordedSeq, STREAM_TOPIC } from '../../shared/streams/stream-events';

/** One `streamRead` answer carries at most this many events, or about this many characters. */
const READ_MAX_EVENTS = 2_000;
const READ_MAX_CHARS = 1_000_000;

/** The stream package's log as it holds it: its first item's offset and the items. */
export interface RecordedLog {
  base: number;
  log: { topic: string; payload: Parameters<typeof defaultPayloadConverter.fromPayload>[0] }[];
}

/** A page of events, each with its seq; `lastSeq` is the highest seq in it (absent: empty). */
export interface StreamPage {
  events: Record<string, unknown>[];
  more: boolean;
  lastSeq?: number;
}

/** Recorded events from the log and the live ones given, seq ≥ `fromSeq`, in seq order. */
export function readPage(recorded: RecordedLog, live: readonly { seq: number; chars: number; event: Record<string, unknown> }[], fromSeq: number): StreamPage {
  const { base, log } = recorded;
  const events: { seq: number; chars: number; event: Record<string, unknown> }[] = [];
  for (let offset = Math.max(base, firstOffsetFrom(fromSeq)); offset < base + log.length; offset++) {
    const item = log[offset - base]!;
    const seq = recordedSeq(offset);
    if (item.topic !== STREAM_TOPIC || seq < fromSeq) continue;
    let value: unknown;
    try {
      value = defaultPayloadConverter.fromPayload(item.payload);
    } catch {
      value = { undecodable: true };
    }
    const event = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
    events.push({ seq, chars: item.payload.data?.length ?? 0, event });
  }
  for (const e of live) if (e.seq >= fromSeq) events.push(e);
  events.sort((a, b) => a.seq - b.seq);
  let chars = 0;
  let n = 0;
  while (n < events.length && n < READ_MAX_EVENTS && (n === 0 || chars + events[n]!.chars <= READ_MAX_CHARS)) chars += events[n++]!.chars;
  return { events: events.slice(0, n).map((e) => ({ ...e.event, seq: e.seq })), more: n < events.length, ...(n > 0 ? { lastSeq: events[n - 1]!.seq } : {}) };
}
