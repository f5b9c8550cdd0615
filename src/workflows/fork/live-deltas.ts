/**
 * The live events of the agent's stream (a model call's deltas, a tool's progress), as the
 * model and tool activities send them by the `streamLive` query: kept in memory for readers,
 * bounded, never in history and not part of the workflow's state (nothing the workflow decides
 * reads them, so replay without them is the same run). ./live-stream.ts hosts them beside the
 * recorded log; ./stream-read.ts merges both for a reader.
 */
import { LIVE_EVENT_TYPES, LIVE_SEQ_PER_ATTEMPT, liveSeq, type StreamLiveInput } from '../../shared/streams/stream-events';

/** Live events kept for readers: at most this many characters of them (oldest dropped first), and only of the last two turns. */
const LIVE_KEPT_CHARS = 2_000_000;

/** One kept live event: its seq, the turn it belongs to, its size, and the key a resent batch is known by. */
export interface KeptLiveEvent {
  seq: number;
  turn: number;
  chars: number;
  event: Record<string, unknown>;
  key: string;
}

export class LiveDeltas {
  /** Live events by seq, as the activity sent them. */
  private readonly events: KeptLiveEvent[] = [];
  /** The seq of each of `events` by its key: a batch the publisher sends again (its first answer lost) is kept once. */
  private readonly keys = new Map<string, number>();
  private chars = 0;

  /**
   * Keeps a batch's events that are this agent's live kind, of the call they claim (readers
   * parse everything; this checks only that). `logEnd` is the recorded log's end offset, which
   * the seqs of this turn's live events follow.
   */
  keep(agentId: string, input: StreamLiveInput, logEnd: number): { kept: number; lastSeq?: number } {
    let kept = 0;
    let lastSeq: number | undefined;
    input.events.forEach((event, i) => {
      const n = input.from + i;
      const type = event.type;
      if (n >= LIVE_SEQ_PER_ATTEMPT || !(LIVE_EVENT_TYPES as readonly unknown[]).includes(type)) return;
      if (event.agentId !== agentId || event.turn !== input.turn || event.attempt !== input.attempt) return;
      // A tool's progress comes with its lane, a model call's deltas without one (stream-events.ts).
      if ((type === 'tool-progress') !== (input.lane !== undefined)) return;
      const key = `${input.turn}:${input.lane !== undefined ? `lane${input.lane}` : `attempt${input.attempt}`}:${n}`;
      const known = this.keys.get(key);
      if (known !== undefined) return void (lastSeq = known);
      const chars = JSON.stringify(event).length;
      lastSeq = liveSeq(logEnd, input.lane ?? input.attempt, n);
      this.events.push({ seq: lastSeq, turn: input.turn, chars, event, key });
      this.keys.set(key, lastSeq);
      this.chars += chars;
      kept++;
    });
    // Readers lag by a poll or two: two turns' worth is plenty, and the reply is recorded anyway.
    while (this.events.length > 0 && (this.chars > LIVE_KEPT_CHARS || this.events[0]!.turn < input.turn - 1)) {
      const dropped = this.events.shift()!;
      this.chars -= dropped.chars;
      this.keys.delete(dropped.key);
    }
    return { kept, ...(lastSeq !== undefined ? { lastSeq } : {}) };
  }

  /** The kept events, in the order they were kept. */
  get kept(): readonly KeptLiveEvent[] {
    return this.events;
  }
}
