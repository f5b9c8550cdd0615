/**
 * An agent's own side of its budget share (src/shared/tree/tree-shares.ts): what it holds, what its
 * calls in flight may still charge of it, what it spent since it last told its root, and the
 * ask it waits on. Plain state, no I/O: src/workflows/fork/tree-shares.ts drives it and sends
 * the messages. Carried across continue-as-new (never with a call in flight or an ask open).
 */
import type { Usage } from '../../shared/messages-api/anthropic';
import { addCall, NO_SPEND, type Spend } from '../../shared/tree/tree-shares';

export interface CarriedShare {
  held: number;
  asks: number;
  unsent: Spend;
}

/** The answer to an open ask: tokens lent, or why none ever will be. */
export type AskOutcome = { tokens: number } | { refused: string };

export class ShareBook {
  /** Tokens it holds (negative only if a provider charged past a call's estimated bound). */
  held: number;
  /** Tokens passed to its calls in flight: theirs to charge until they end. */
  pending = 0;
  /** Spend since its last message to the root. */
  unsent: Spend;
  /** Asks sent so far (each ask's id is numbered by it). */
  asks: number;
  /** The ask it waits on, and its answer once it came. */
  waiting?: { id: string; outcome?: AskOutcome };
  /** The root asked for its share back; answered once no call of its own is in flight. */
  recallAsked = false;
  /** The latest grant was what the tree could give: the next call goes on with it rather than ask again. */
  final = false;
  /** The root is gone (its tree closed): calls are bounded by the agent's own budget alone. */
  untethered = false;

  /** `local`: the root's own book (its asks and reports are function calls, not signals). */
  constructor(
    readonly local: boolean,
    held: number,
    carried?: CarriedShare,
  ) {
    this.held = carried?.held ?? held;
    this.asks = carried?.asks ?? 0;
    this.unsent = carried?.unsent ?? NO_SPEND;
  }

  /** What a new call may charge: what it holds, less what calls in flight may still charge. */
  get available(): number {
    return Math.max(0, this.held - this.pending);
  }

  /** A call starts that may charge `tokens`. */
  begin(tokens: number): void {
    this.pending += tokens;
  }

  /** A call that was passed `tokens` ended; `served`: what it charged, when it was answered. */
  end(tokens: number, served?: { provider?: string; model: string; usage: Usage; charged: number; kind: 'turn' | 'keepAlive' | 'compaction'; toolUses: number; turn?: number }): void {
    this.pending = Math.max(0, this.pending - tokens);
    if (!served) return;
    this.held -= served.charged;
    this.unsent = addCall(this.unsent, served);
    this.final = false;
  }

  /** Takes what it gives back now (all it holds but what calls in flight may charge; nothing when `keep`) and its unsent spend. */
  takeReturn(keep = false): { returned: number; spend: Spend } {
    const returned = keep ? 0 : this.available;
    this.held -= returned;
    const spend = this.unsent;
    this.unsent = NO_SPEND;
    return { returned, spend };
  }

  /** Opens an ask (its id), giving back what it holds. */
  open(prefix: string): { id: string; returned: number; spend: Spend } {
    this.asks += 1;
    const id = `${prefix}-${this.asks}`;
    this.waiting = { id };
    return { id, ...this.takeReturn() };
  }

  /** An answer arrived for `id`: true when it answers the open ask (else the caller gives back a stray grant). */
  answered(id: string, outcome: AskOutcome): boolean {
    if (!this.waiting || this.waiting.id !== id || this.waiting.outcome) return false;
    this.waiting.outcome = outcome;
    if ('tokens' in outcome) this.held += outcome.tokens;
    return true;
  }

  /** Closes the answered ask and says how it went. */
  close(): AskOutcome {
    const outcome = this.waiting?.outcome ?? { refused: 'no answer' };
    this.waiting = undefined;
    return outcome;
  }

  carry(): CarriedShare {
    return { held: this.held, asks: this.asks, unsent: this.unsent };
  }
}
