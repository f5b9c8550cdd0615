/**
 * Folds stream events into what a viewer shows: each turn's text as of its live attempt, with
 * the deltas of abandoned attempts (a retried model call) dropped. The same rule a client of
 * `handle.stream()` must apply, kept here so the CLI, the web view and the tests agree.
 * Pure (no I/O).
 */
import type { StreamEvent } from './stream-events';

interface TurnText {
  /** The attempt whose deltas count; deltas of lower attempts are void. */
  attempt: number;
  /** Text per content block index. */
  blocks: Map<number, string>;
  thinking: Map<number, string>;
  /** Deltas dropped because their attempt was abandoned. */
  discarded: number;
  /** The reply's whole text from `turn-end`, when it came whole: it wins over the deltas. */
  final?: string;
}

export class StreamAssembler {
  private readonly turns = new Map<number, TurnText>();
  /** Whether `done` arrived. */
  done = false;
  /** The highest seq applied (events at or below it are ignored: a resumed stream may overlap). */
  lastSeq = -1;

  /** Applies one event; returns false when it was a duplicate (seq already seen). */
  apply(e: StreamEvent): boolean {
    if (e.seq <= this.lastSeq) return false;
    this.lastSeq = e.seq;
    switch (e.type) {
      case 'turn-start':
      case 'attempt-abandoned':
        this.raise(e.turn, e.attempt);
        break;
      case 'text-delta':
        this.add(e.turn, e.attempt, 'blocks', e.index, e.text);
        break;
      case 'thinking-delta':
        this.add(e.turn, e.attempt, 'thinking', e.index, e.thinking);
        break;
      case 'turn-end':
        // Deltas can be missed (a late subscriber, a run that closed between two reads): the
        // recorded reply is the truth.
        if (e.text !== undefined && e.textChars === e.text.length) this.turn(e.turn).final = e.text;
        break;
      case 'done':
        this.done = true;
        break;
      default:
        break;
    }
    return true;
  }

  /** A turn's text: its live attempt's text blocks joined by newlines (as the fork's result joins them). */
  text(turn: number): string {
    const t = this.turns.get(turn);
    if (!t) return '';
    if (t.final !== undefined) return t.final;
    return [...t.blocks.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, s]) => s)
      .join('\n');
  }

  thinking(turn: number): string {
    const t = this.turns.get(turn);
    return t ? [...t.thinking.entries()].sort(([a], [b]) => a - b).map(([, s]) => s).join('\n') : '';
  }

  /** The live attempt of a turn (1 when it never restarted). */
  attempt(turn: number): number {
    return this.turns.get(turn)?.attempt ?? 1;
  }

  /** How many deltas of a turn were dropped as abandoned. */
  discarded(turn: number): number {
    return this.turns.get(turn)?.discarded ?? 0;
  }

  /** The turns seen, ascending. */
  turnNumbers(): number[] {
    return [...this.turns.keys()].sort((a, b) => a - b);
  }

  /** The latest non-empty turn text: what a fork's result reports as `text`. */
  lastText(): string {
    const turns = this.turnNumbers();
    for (let i = turns.length - 1; i >= 0; i--) {
      const s = this.text(turns[i]!);
      if (s) return s;
    }
    return '';
  }

  private turn(n: number): TurnText {
    let t = this.turns.get(n);
    if (!t) {
      t = { attempt: 1, blocks: new Map(), thinking: new Map(), discarded: 0 };
      this.turns.set(n, t);
    }
    return t;
  }

  /** A newer attempt voids what the older ones streamed. */
  private raise(n: number, attempt: number): void {
    const t = this.turn(n);
    if (attempt <= t.attempt) return;
    t.attempt = attempt;
    t.discarded += t.blocks.size + t.thinking.size;
    t.blocks.clear();
    t.thinking.clear();
  }

  private add(n: number, attempt: number, kind: 'blocks' | 'thinking', index: number, s: string): void {
    const t = this.turn(n);
    if (attempt < t.attempt) {
      t.discarded++;
      return;
    }
    if (attempt > t.attempt) this.raise(n, attempt);
    t[kind].set(index, (t[kind].get(index) ?? '') + s);
  }
}
