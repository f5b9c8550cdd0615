/**
 * The usage-and-budget part of an agent's state: turns, tool calls, token usage (all of it,
 * and the part charged against this run's budget), the last text the model wrote, and
 * whether the turn limit was reached. This class is its only writer: the turn loop records
 * model calls, tool rounds count tool calls; the status, stop conditions and results read.
 */
import { addUsage, textOf, ZERO_USAGE, type MessageParam, type Usage } from '../../shared/messages-api/anthropic';

/** Keep-alive calls (cacheWhileWaiting `keep-alive`) and their usage, which `usage` includes. */
export interface KeepAliveTally {
  calls: number;
  usage: Usage;
}

/** Calls and usage per provider that served them (provider-usage.ts). */
export type ProviderTally = Record<string, { calls: number; usage: Usage }>;

export interface CarriedTally {
  turns: number;
  toolUses: number;
  usage: Usage;
  budgetUsage: Usage;
  lastText?: string;
  maxTurnsReached: boolean;
  keepAlive?: KeepAliveTally;
  providers?: ProviderTally;
}

export class Tally {
  private t: CarriedTally = { turns: 0, toolUses: 0, usage: ZERO_USAGE, budgetUsage: ZERO_USAGE, maxTurnsReached: false };

  get turns(): number {
    return this.t.turns;
  }
  get toolUses(): number {
    return this.t.toolUses;
  }
  get usage(): Usage {
    return this.t.usage;
  }
  /** Usage charged against the budget (equals `usage` unless this run resumed a finished agent). */
  get budgetUsage(): Usage {
    return this.t.budgetUsage;
  }
  get lastText(): string | undefined {
    return this.t.lastText;
  }
  get maxTurnsReached(): boolean {
    return this.t.maxTurnsReached;
  }
  /** Keep-alive calls so far (absent until the first). */
  get keepAlive(): KeepAliveTally | undefined {
    return this.t.keepAlive;
  }
  /** Calls and usage per provider (absent until the first counted). */
  get providers(): ProviderTally | undefined {
    return this.t.providers;
  }

  /** A call (of any kind) that `provider` served: its usage is already in `usage` by the record above. */
  recordOnProvider(provider: string, usage: Usage): void {
    const p = this.t.providers?.[provider] ?? { calls: 0, usage: ZERO_USAGE };
    this.t.providers = { ...this.t.providers, [provider]: { calls: p.calls + 1, usage: addUsage(p.usage, usage) } };
  }

  /** A reply of this agent's own model call (inherited assistant turns are not its text). */
  recordModelCall(usage: Usage, reply: MessageParam): void {
    this.t.turns += 1;
    this.t.usage = addUsage(this.t.usage, usage);
    this.t.budgetUsage = addUsage(this.t.budgetUsage, usage);
    const text = textOf(reply).trim();
    if (text) this.t.lastText = text;
  }

  /**
   * A keep-alive call: paid like any call (usage and budget), but no turn and no text. Its
   * own count and usage show what keeping the cache warm cost.
   */
  recordKeepAlive(usage: Usage): void {
    this.t.usage = addUsage(this.t.usage, usage);
    this.t.budgetUsage = addUsage(this.t.budgetUsage, usage);
    const k = this.t.keepAlive ?? { calls: 0, usage: ZERO_USAGE };
    this.t.keepAlive = { calls: k.calls + 1, usage: addUsage(k.usage, usage) };
  }

  /**
   * A forkflow compaction call: paid like any call (usage and budget), but no turn and no text.
   * Its own count and usage are kept apart by the context keeper (context-keeper.ts).
   */
  recordCompaction(usage: Usage): void {
    this.t.usage = addUsage(this.t.usage, usage);
    this.t.budgetUsage = addUsage(this.t.budgetUsage, usage);
  }

  countToolUse(): void {
    this.t.toolUses += 1;
  }

  markMaxTurnsReached(): void {
    this.t.maxTurnsReached = true;
  }

  /** Takes over a previous run's counts (continue-as-new keeps the budget; a resume starts a new one). */
  adopt(state: CarriedTally, opts: { keepBudget: boolean }): void {
    this.t = {
      turns: state.turns,
      toolUses: state.toolUses,
      usage: state.usage,
      budgetUsage: opts.keepBudget ? state.budgetUsage : ZERO_USAGE,
      lastText: state.lastText,
      maxTurnsReached: state.maxTurnsReached,
      ...(state.keepAlive ? { keepAlive: state.keepAlive } : {}),
      ...(state.providers ? { providers: state.providers } : {}),
    };
  }
}
