/**
 * What may stop a turn without ending the agent: the cancellation scope of the turn's part in
 * flight (its model call, or its tool calls), an interruption asked for while it runs, and the
 * sync sub-agents an operator asked to move to the background. This class is the only writer
 * of that state; interrupt.ts's handlers drive it, the turn loop and children.ts read it.
 *
 * Nothing here issues a command of its own: a scope, and the cancellation of one, add nothing
 * to history until something in it is cancelled, so recorded runs replay unchanged.
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import type { InterruptedDuring } from '../../shared/tree/interrupt';
import { isoNow } from '../clock';

/** An interruption of one turn, as asked for. */
export interface Interruption {
  seq: number;
  by: string;
  reason?: string;
  during: InterruptedDuring;
  turn: number;
  at: string;
}

/** A part of a turn, run under {@link TurnControl.run}: done, or stopped by an interruption. */
export type TurnPart<T> = { done: true; value: T } | { done: false };

export class TurnControl {
  private outerScope?: CancellationScope;
  private childScope?: CancellationScope;
  private inFlight?: { scope: CancellationScope; during: InterruptedDuring; turn: number };
  private fired?: Interruption;
  private settledSeq = 0;
  private seq = 0;
  private last?: Interruption;
  /** Sync sub-agents their parent's tool call is waiting for now, and those asked to move to the background (by whom). */
  private readonly waitingFor = new Set<string>();
  private readonly toBackground = new Map<string, string>();

  /**
   * Takes the agent's work scope (cancelled by a workflow cancel or the agent's timeout), and
   * opens under it the scope sub-agents' scopes hang from, not from a turn's. Call it before any
   * turn: sub-agents then sit one scope below the work scope, as each turn's calls do, so a
   * cancellation reaches them in the order it did when both hung from the work scope itself
   * (recorded histories keep their order of cancel commands).
   */
  attach(outer: CancellationScope): void {
    this.outerScope = outer;
    this.childScope = new CancellationScope({ cancellable: true, parent: outer });
  }

  /** Where sub-agents' scopes hang (undefined before {@link attach}: the current scope). */
  get children(): CancellationScope | undefined {
    return this.childScope;
  }

  /** The agent itself is being cancelled or timed out (not merely interrupted). */
  get outerCancelled(): boolean {
    return this.outerScope?.consideredCancelled ?? false;
  }

  /** What can be interrupted now: the part of a turn in flight, unless it is already being interrupted. */
  get interruptible(): { during: InterruptedDuring; turn: number } | undefined {
    return this.inFlight && !this.fired ? { during: this.inFlight.during, turn: this.inFlight.turn } : undefined;
  }

  /** The interruption of the current turn, once asked for (until the turn loop takes it). */
  get interruption(): Interruption | undefined {
    return this.fired;
  }

  /** Who interrupted the current turn, if anyone did. */
  interrupter(): string | undefined {
    return this.fired?.by;
  }

  /** True for the cancellation an interruption caused (not the agent's own cancel or timeout). */
  stoppedBy(err: unknown): boolean {
    return this.fired !== undefined && isCancellation(err) && !this.outerCancelled;
  }

  /**
   * Runs one part of turn `turn` in a scope of its own; an interruption cancels that scope, and
   * the part comes back not done. A cancellation of the agent itself is rethrown.
   */
  async run<T>(during: InterruptedDuring, turn: number, fn: () => Promise<T>): Promise<TurnPart<T>> {
    const scope = new CancellationScope();
    this.inFlight = { scope, during, turn };
    try {
      return { done: true, value: await scope.run(fn) };
    } catch (err) {
      if (this.stoppedBy(err)) return { done: false };
      throw err;
    } finally {
      this.inFlight = undefined;
      if (this.fired) this.settledSeq = this.fired.seq;
    }
  }

  /** Interrupts the part of the turn in flight (the caller checked {@link interruptible}). */
  interrupt(by: string, reason: string | undefined): Interruption {
    const flight = this.inFlight!;
    this.seq += 1;
    this.fired = { seq: this.seq, by, ...(reason ? { reason } : {}), during: flight.during, turn: flight.turn, at: isoNow() };
    this.last = this.fired;
    flight.scope.cancel();
    return this.fired;
  }

  /** Whether the turn stopped by interruption `seq` has been closed (its scope has ended). */
  settled(seq: number): boolean {
    return this.settledSeq >= seq;
  }

  /** Takes the current turn's interruption (the turn loop, as it records it). */
  take(): Interruption | undefined {
    const fired = this.fired;
    this.fired = undefined;
    return fired;
  }

  /** The parent's tool call waits for sync sub-agent `agentId` (or stops waiting). */
  waiting(agentId: string, on: boolean): void {
    if (on) this.waitingFor.add(agentId);
    else {
      this.waitingFor.delete(agentId);
      this.toBackground.delete(agentId);
    }
  }

  isWaitingFor(agentId: string): boolean {
    return this.waitingFor.has(agentId);
  }

  /** Asks the waiting tool call to stop waiting for `agentId`. */
  requestBackground(agentId: string, by: string): void {
    this.toBackground.set(agentId, by);
  }

  /** Who asked to move `agentId` to the background, if anyone did. */
  backgroundRequestedBy(agentId: string): string | undefined {
    return this.toBackground.get(agentId);
  }

  /** For status: how many interruptions this run took, and the latest. */
  status(): { count: number; last?: Omit<Interruption, 'seq'> } | undefined {
    if (!this.last) return undefined;
    const { seq: _seq, ...last } = this.last;
    return { count: this.seq, last };
  }
}
