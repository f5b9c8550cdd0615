/**
 * Where each of this run's turns began: the message count and chained digest its model call
 * covered, and what the agent had spent before it. It is what the `turnPoint` query answers
 * from (a fork from turn k starts from the conversation of call k + 1). This class is its only
 * writer, fed by the turn loop as each call is scheduled; nothing of it crosses runs (each run
 * answers for its own turns) or reaches history, so replays rebuild it as they go.
 */
import type { TurnCall } from '../../shared/prefix/time-travel';

export class TurnIndex {
  /** By turn number (a plain object: state stays JSON-safe). */
  private readonly calls: Record<number, TurnCall> = {};

  /** The model call of `turn` is being made over this conversation. */
  called(turn: number, call: TurnCall): void {
    this.calls[turn] = call;
  }

  at(turn: number): TurnCall | undefined {
    return this.calls[turn];
  }
}
