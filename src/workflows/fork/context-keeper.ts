/**
 * The context-management part of an agent's state (src/shared/context/): its policy and
 * window, where its model context starts (the latest compaction boundary) and what it clears,
 * the boundaries so far, what summarising cost and what it saved, and the newest request's
 * size, from which the next request's size is estimated. This class is its only writer: the
 * turn loop reports model calls, compaction.ts records compactions and clearing; status, the
 * model call's input and forks read. It crosses runs (carried state `context`), and forks
 * take its cut (PrefixRef `window`).
 */
import { totalInputTokens, ZERO_USAGE, addUsage, type MessageParam, type Usage } from '../../shared/messages-api/anthropic';
import type { ModelCallResult } from '../../shared/wire/activity-io';
import type { ContextCallSpec } from '../../shared/context/call';
import { providerEdits } from '../../shared/context/edits';
import { contextPolicyOf, forkflowCompacts, policyName, thresholdTokens, type ContextManagementInput, type ContextPolicy } from '../../shared/context/policy';
import { BOUNDARIES_KEPT, type CarriedContext, type ContextBoundary, type ContextStatus } from '../../shared/context/state';
import { messageTokens } from '../../shared/context/view';
import { resolveWindow, type ResolvedWindow } from '../../shared/context/windows';
import type { PrefixRef } from '../../shared/prefix/prefix';
import { estimateCostUsd } from '../../shared/providers/pricing';
import { mediaRulesFor } from './media-rules';

/** Where the window of a model comes from until the conversation is open. */
const UNRESOLVED: ResolvedWindow = resolveWindow('');

export class ContextKeeper {
  readonly policy: ContextPolicy;
  private window = UNRESOLVED;
  private s: CarriedContext = { from: 0, compactions: 0, boundaries: [], summarising: ZERO_USAGE, saved: 0, dropped: 0 };

  constructor(input: ContextManagementInput | undefined) {
    this.policy = contextPolicyOf(input);
  }

  /** The window requests are planned against (the model's, or the fork's override). */
  configure(window: ResolvedWindow): void {
    this.window = window;
  }

  private adopted = false;

  /** Takes over a previous run's state (continue-as-new, a resume that carried it). */
  adoptState(state: CarriedContext | undefined): void {
    if (!state) return;
    this.s = state;
    this.adopted = true;
  }

  /** A fork, or a resumed run that carried no state: starts from the cut its prefix was sent with. */
  adoptCut(cut: PrefixRef['window']): void {
    if (this.adopted || !cut) return;
    this.s = { ...this.s, from: cut.from, compactions: cut.compactions, ...(cut.clearedThrough !== undefined ? { clearedThrough: cut.clearedThrough } : {}) };
  }

  get from(): number {
    return this.s.from;
  }
  get compactions(): number {
    return this.s.compactions;
  }
  get windowTokens(): number {
    return this.window.tokens;
  }
  /** Tokens every request leaves out since the compactions so far (what each saves). */
  get dropped(): number {
    return this.s.dropped;
  }
  get threshold(): number {
    return thresholdTokens(this.policy, this.window.tokens);
  }

  /** What a model call needs to cut, edit and check its request. `compactAbove`: refuse above the threshold (forkflow compacts first). */
  spec(thinking: boolean, opts: { compactAbove: boolean }): ContextCallSpec {
    const { edits, betas } = providerEdits(this.policy, this.window.tokens, thinking);
    const allBetas = [...new Set([...this.window.betas, ...betas])];
    return {
      window: this.window.tokens,
      ...(this.s.from > 0 ? { from: this.s.from } : {}),
      ...(this.s.clearedThrough ? { clearedThrough: this.s.clearedThrough } : {}),
      ...(allBetas.length > 0 ? { betas: allBetas } : {}),
      ...(edits.length > 0 ? { edits } : {}),
      ...(opts.compactAbove && forkflowCompacts(this.policy) ? { compactAbove: this.threshold } : {}),
      ...(this.policy.strategy === 'off' ? { measureOnly: true as const } : {}),
    };
  }

  /**
   * The next request's size: the newest request's (as the provider counted it) plus the
   * estimate of every message since. Undefined when no request was measured, or the messages
   * since lie outside `messages` (a prefix held by reference).
   */
  expected(messages: readonly MessageParam[], base: number): number | undefined {
    const m = this.s.measured;
    if (!m || m.count < base || m.count < this.s.from) return undefined;
    let tokens = m.tokens;
    const since = messages.slice(m.count - base);
    const rules = mediaRulesFor(since);
    for (const message of since) tokens += messageTokens(message, rules);
    return tokens;
  }

  /**
   * `expected`, answered again without counting while nothing it counts from has changed: the
   * same message list, as long and ending in the same message, from the same measured request.
   * A turn that starts many agents sizes each one's first share from it (tree-shares.ts
   * `callTokensFor`): counting that turn's thousand Agent calls once per admission took a
   * root's workflow task past the SDK's 5 s limit. Only for those admissions, where no message
   * changes between asks; the rest of the loop counts afresh.
   */
  expectedAgain(messages: readonly MessageParam[], base: number): number | undefined {
    const m = this.lastExpected;
    if (m && m.messages === messages && m.length === messages.length && m.last === messages[messages.length - 1] && m.base === base && m.measured === this.s.measured && m.from === this.s.from) return m.tokens;
    const tokens = this.expected(messages, base);
    this.lastExpected = { messages, length: messages.length, last: messages[messages.length - 1], base, measured: this.s.measured, from: this.s.from, tokens };
    return tokens;
  }
  private lastExpected?: { messages: readonly MessageParam[]; length: number; last: MessageParam | undefined; base: number; measured: CarriedContext['measured']; from: number; tokens: number | undefined };

  /** Whether the next request would pass the threshold where forkflow acts before it (compaction, or its own clearing). */
  overThreshold(messages: readonly MessageParam[], base: number): number | undefined {
    if (this.policy.strategy === 'off' || this.policy.by !== 'forkflow') return undefined;
    const tokens = this.expected(messages, base);
    return tokens !== undefined && tokens > this.threshold ? tokens : undefined;
  }

  /** A model call came back: its request's size is the base of the next estimate; boundaries waiting for their `tokensAfter` get it. */
  called(messageCount: number, result: ModelCallResult): void {
    const tokens = totalInputTokens(result.usage) - (result.compaction ? totalInputTokens(result.compaction.usage) : 0);
    this.s.measured = { count: messageCount, tokens };
    const last = this.s.boundaries[this.s.boundaries.length - 1];
    if (last && last.tokensAfter === undefined && last.by === 'forkflow') {
      last.tokensAfter = tokens;
      this.s.dropped += Math.max(0, last.tokensBefore - tokens);
    }
    this.s.saved += this.s.dropped;
    if (result.cleared) {
      const c = this.s.cleared ?? { toolUses: 0, tokens: 0 };
      this.s.cleared = { toolUses: c.toolUses + result.cleared.toolUses, tokens: c.tokens + result.cleared.tokens };
    }
  }

  /**
   * A compaction: the context starts at `boundary.at` from now on. A provider's is known whole
   * at once (its pass read `tokensBefore`, the call's own size is what is left); forkflow's learns
   * its `tokensAfter` at the next call.
   */
  compacted(boundary: ContextBoundary, summarising: Usage): void {
    this.s.from = boundary.at;
    this.s.compactions += 1;
    this.s.summarising = addUsage(this.s.summarising, summarising);
    if (boundary.tokensAfter !== undefined) this.s.dropped += Math.max(0, boundary.tokensBefore - boundary.tokensAfter);
    this.s.boundaries = [...this.s.boundaries, boundary].slice(-BOUNDARIES_KEPT);
  }

  /** forkflow's clearing: tool results before `point` are sent cleared from now on. */
  clearThrough(point: number): boolean {
    if (point <= (this.s.clearedThrough ?? 0)) return false;
    this.s.clearedThrough = point;
    return true;
  }

  carry(): CarriedContext {
    return { ...this.s, boundaries: [...this.s.boundaries] };
  }

  /** The cut a fork of this agent starts from (absent: the whole conversation). */
  cut(): PrefixRef['window'] {
    if (this.s.from === 0 && !this.s.clearedThrough) return undefined;
    return { from: this.s.from, compactions: this.s.compactions, ...(this.s.clearedThrough ? { clearedThrough: this.s.clearedThrough } : {}) };
  }

  status(model: string): ContextStatus {
    return {
      policy: policyName(this.policy),
      window: this.window.tokens,
      threshold: this.threshold,
      ...(this.s.measured ? { lastRequestTokens: this.s.measured.tokens } : {}),
      from: this.s.from,
      compactions: this.s.compactions,
      boundaries: this.s.boundaries,
      summarising: { usage: this.s.summarising, costUsd: estimateCostUsd(model, this.s.summarising) },
      tokensSaved: this.s.saved,
      ...(this.s.cleared ? { cleared: this.s.cleared } : {}),
    };
  }
}
