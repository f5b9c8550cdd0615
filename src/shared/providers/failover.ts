/**
 * Failover: where an agent's model calls go when its provider is overloaded or out.
 *
 * - The chain of a provider and model is the primary, then the provider's `fallbacks` that
 *   apply to that model, in order (src/shared/providers/providers.ts; a tree gets them in its catalogue).
 * - The model activity gives up on an outage (529, 5xx, a mid-stream overload, a connection
 *   error; never a 4xx, never a 429) after `afterAttempts` attempts of a call that has a next
 *   candidate, with the failure type {@link MODEL_UNAVAILABLE_FAILURE}; the workflow then calls
 *   the next candidate (src/workflows/fork/failover.ts), so the switch is a decision recorded
 *   in history. The chain's last candidate retries as any call does.
 * - After a switch the agent's calls stay on the fallback for `cooldownMs` of workflow time;
 *   then each call tries the primary first again, and the first it serves moves the agent back.
 *
 * {@link FailoverBook} is the agent's failover state: pure, JSON-safe, carried across
 * continue-as-new, and unit-testable without a workflow.
 */
import { z } from 'zod';
import { addUsage, subtractUsage, ZERO_USAGE, type Usage } from '../messages-api/anthropic';
import type { ProviderCatalogue } from './agent-provider';
import { failoverSettingsSchema, type FailoverSettings } from './providers';
import { schemaOnce } from '../base/schema-once';
import { usageSchema } from '../tree/tree-ledger';

/** A provider and a model of it. */
export interface Route {
  provider: string;
  model: string;
}

/** The failure type of a call that gave up on an outage so that the workflow moves it on. */
export const MODEL_UNAVAILABLE_FAILURE = 'ModelUnavailable';

/**
 * An agent's own fallbacks, in its input: set by a parent for a sub-agent that gets no
 * provider catalogue (a fork, a spawn without nested spawning), so it fails over as its tree does.
 */
export const failoverInputSchema = schemaOnce('providers/failover#failoverInputSchema', () => z.strictObject({
  fallbacks: z.array(z.strictObject({ provider: z.string().min(1).max(64), model: z.string().min(1).max(200) })).min(1).max(8),
  settings: failoverSettingsSchema.optional(),
}));
export type FailoverInput = z.output<typeof failoverInputSchema>;

/** Defaults of a provider's `failover` settings. */
export const FAILOVER_DEFAULTS: FailoverSettings = { afterAttempts: 3, cooldownMs: 30_000 };

/** The primary followed by its fallbacks (no duplicates); just the primary without any. */
export function failoverChain(catalogue: ProviderCatalogue | undefined, primary: Route): Route[] {
  const chain: Route[] = [primary];
  for (const f of catalogue?.[primary.provider]?.fallbacks ?? []) {
    if (f.for && !f.for.includes(primary.model)) continue;
    if (!catalogue?.[f.provider]) continue;
    if (!chain.some((r) => r.provider === f.provider && r.model === f.model)) chain.push({ provider: f.provider, model: f.model });
  }
  return chain;
}

/** The primary provider's failover settings. */
export function failoverSettings(catalogue: ProviderCatalogue | undefined, provider: string): FailoverSettings {
  return catalogue?.[provider]?.failover ?? FAILOVER_DEFAULTS;
}

/**
 * True for a failure that says the provider is overloaded or out: overload (529, a mid-stream
 * `overloaded_error` or `api_error`), any 5xx, a connection error. Never a 4xx (a 400 fails as
 * it always did), never a rate limit (429: the agent's own quota, waited out where it is).
 */
export function isOutage(failure: { type?: string | null; message: string; details?: unknown[] | null }): boolean {
  const status = (failure.details?.[0] as { status?: unknown } | undefined)?.status;
  if (typeof status === 'number') return status >= 500;
  if (failure.type === 'ModelConnectionError') return true;
  return failure.type === 'ModelStreamError' && (failure.message.startsWith('overloaded_error') || failure.message.startsWith('api_error'));
}

const routeSchema = schemaOnce('providers/failover#routeSchema', () => z.object({ provider: z.string(), model: z.string() }));

/** A switch between candidates, as status and the stream show it. */
const switchSchema = schemaOnce('providers/failover#switchSchema', () => z.object({
  from: routeSchema,
  to: routeSchema,
  /** Workflow time of the switch, ms. */
  at: z.number(),
  turn: z.number().int().min(0),
  /** The failure that moved the call (`recovered`: the primary served again). */
  reason: z.string(),
}));
export type FailoverSwitch = z.output<typeof switchSchema>;

/** The agent's failover state (one writer: the workflow's failover driver); crosses continue-as-new. */
export const failoverStateSchema = schemaOnce('providers/failover#failoverStateSchema', () => z.object({
  /** On a fallback: its place in the chain and until when (workflow ms) calls stay there. */
  away: z.object({ index: z.number().int().min(1), until: z.number() }).optional(),
  switches: z.number().int().min(0),
  last: switchSchema.optional(),
  /** Calls fallbacks served, their usage and cost (at the fallbacks' prices). */
  fallbackCalls: z.object({ calls: z.number().int().min(0), usage: usageSchema, costUsd: z.number().min(0) }),
}));
export type FailoverState = z.output<typeof failoverStateSchema>;

/** What `status` shows of an agent with fallbacks. */
export interface FailoverStatus {
  primary: Route;
  /** Where its next call goes. */
  serving: Route;
  fallbacks: Route[];
  /** While on a fallback: when the primary is tried first again (ISO, workflow time). */
  until?: string;
  switches: number;
  last?: Omit<FailoverSwitch, 'at'> & { at: string };
  fallbackCalls: { calls: number; usage: Usage; costUsd: number };
}

/** The status of `book` for `chain` at workflow time `now`. */
export function failoverStatus(book: FailoverBook, chain: readonly Route[], now: number): FailoverStatus {
  const s = book.state;
  const index = book.start(chain, now);
  return {
    primary: chain[0]!,
    serving: chain[index]!,
    fallbacks: chain.slice(1),
    ...(index > 0 && s.away ? { until: new Date(s.away.until).toISOString() } : {}),
    switches: s.switches,
    ...(s.last ? { last: { ...s.last, at: new Date(s.last.at).toISOString() } } : {}),
    fallbackCalls: s.fallbackCalls,
  };
}

/** The agent's failover state; see the file header. */
export class FailoverBook {
  private s: FailoverState = { switches: 0, fallbackCalls: { calls: 0, usage: ZERO_USAGE, costUsd: 0 } };

  /** The chain index the next call starts at: the fallback while its cooldown runs, else the primary. */
  start(chain: readonly Route[], now: number): number {
    const away = this.s.away;
    return away && now < away.until && away.index < chain.length ? away.index : 0;
  }

  /** Candidate `index` was unavailable: the call moves to the next one, and the agent stays there for `cooldownMs`. */
  failed(chain: readonly Route[], index: number, now: number, turn: number, reason: string, cooldownMs: number): FailoverSwitch {
    const next = index + 1;
    this.s.away = { index: next, until: now + cooldownMs };
    this.s.switches += 1;
    this.s.last = { from: chain[index]!, to: chain[next]!, at: now, turn, reason: reason.slice(0, 300) };
    return this.s.last;
  }

  /**
   * Candidate `index` served a call costing `costUsd`. Returns the switch back to the primary
   * when the primary served after a failover (it recovered), else undefined.
   */
  served(chain: readonly Route[], index: number, now: number, turn: number, usage: Usage, costUsd: number): FailoverSwitch | undefined {
    if (index > 0) {
      const f = this.s.fallbackCalls;
      this.s.fallbackCalls = { calls: f.calls + 1, usage: addUsage(f.usage, usage), costUsd: Math.round((f.costUsd + costUsd) * 1_000_000) / 1_000_000 };
      return undefined;
    }
    if (!this.s.away) return undefined;
    const from = chain[this.s.away.index] ?? chain[0]!;
    this.s.away = undefined;
    this.s.last = { from, to: chain[0]!, at: now, turn, reason: 'recovered' };
    return this.s.last;
  }

  /** The usage the primary's model served, and what fallbacks cost: for the agent's cost estimate. */
  split(total: Usage): { primary: Usage; fallbackCostUsd: number } {
    return { primary: subtractUsage(total, this.s.fallbackCalls.usage), fallbackCostUsd: this.s.fallbackCalls.costUsd };
  }

  get state(): Readonly<FailoverState> {
    return this.s;
  }

  /** What a continuing run takes over (nothing before the first switch). */
  carry(): FailoverState | undefined {
    return this.s.switches > 0 ? this.s : undefined;
  }

  adopt(state: FailoverState | undefined): void {
    if (state) this.s = state;
  }
}
