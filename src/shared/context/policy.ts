/**
 * How an agent keeps its context inside the model's window (`contextManagement` in a fork's
 * input and in agent definitions), as a zod schema and the policy it resolves to.
 *
 * - `compact` by `forkflow` (the default): before a request would pass `threshold` of the
 *   window, a model call of its own summarises the older turns (a durable step, billed and
 *   charged like any call); the agent goes on from the summary plus its most recent turns.
 * - `compact` by `provider`: every request carries the provider's compaction edit
 *   (`compact_20260112`, trigger at `threshold` of the window, at least the API's 50,000);
 *   the compaction block it returns is recorded like any reply and later requests start at it.
 * - `clear-tool-results`: older tool results are replaced by a short placeholder once the
 *   request passes `threshold`, keeping the last `keepToolUses` — by the provider's context
 *   editing (`clear_tool_uses_20250919`, and `clear_thinking_20251015` when thinking is on) or
 *   by forkflow itself when `by: 'forkflow'`.
 * - `off`: nothing; callers who manage the context themselves.
 *
 * Whatever the policy (but `off`), a `prompt is too long` that still happens is answered by a
 * forkflow compaction and the call is made once more, instead of failing the agent.
 *
 * Why forkflow compaction by default: it works on every endpoint (provider compaction exists
 * on a few models of one provider, and not on local endpoints), the summary is plain text in
 * the transcript that forks can start from, and its cost shows as a step of its own.
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';

export const CONTEXT_STRATEGIES = ['compact', 'clear-tool-results', 'off'] as const;
export type ContextStrategy = (typeof CONTEXT_STRATEGIES)[number];
export type ContextActor = 'forkflow' | 'provider';

/** The policy as callers write it: a shorthand, or the object form. */
export const contextManagementSchema = schemaOnce('context/policy#contextManagementSchema', () =>
  z.union([
    /** `forkflow`: compact by forkflow; `provider`: compact by the provider; `clear-tool-results`: the provider's context editing; `off`. */
    z.enum(['forkflow', 'provider', 'clear-tool-results', 'off']),
    z.strictObject({
      strategy: z.enum(CONTEXT_STRATEGIES),
      /** Who does it (default `forkflow`). */
      by: z.enum(['forkflow', 'provider']).optional(),
      /** Share of the window a request may reach before the strategy acts (default 0.8). */
      threshold: z.number().gt(0).lt(1).optional(),
      /** forkflow compaction: the share of the window the most recent turns may take, kept verbatim after the summary (default 0.1; 0 keeps none). */
      keepRecent: z.number().min(0).lt(0.5).optional(),
      /** clear-tool-results: the most recent tool uses whose results are kept (default 3). */
      keepToolUses: z.number().int().min(0).max(100).optional(),
      /** Compaction: what the summary should pay particular attention to (added to the summary prompt). */
      instructions: z.string().trim().min(1).max(4_000).optional(),
    }),
  ]),
);
export type ContextManagementInput = z.input<typeof contextManagementSchema>;

/** A policy with every default filled in. */
export interface ContextPolicy {
  strategy: ContextStrategy;
  by: ContextActor;
  threshold: number;
  keepRecent: number;
  keepToolUses: number;
  instructions?: string;
}

export const DEFAULT_CONTEXT_POLICY: Readonly<ContextPolicy> = Object.freeze({ strategy: 'compact', by: 'forkflow', threshold: 0.8, keepRecent: 0.1, keepToolUses: 3 });

/** The API refuses a compaction trigger below this many input tokens. */
export const MIN_COMPACTION_TRIGGER = 50_000;

const SHORTHANDS: Record<Extract<ContextManagementInput, string>, Pick<ContextPolicy, 'strategy' | 'by'>> = {
  forkflow: { strategy: 'compact', by: 'forkflow' },
  provider: { strategy: 'compact', by: 'provider' },
  'clear-tool-results': { strategy: 'clear-tool-results', by: 'provider' },
  off: { strategy: 'off', by: 'forkflow' },
};

/**
 * The policy an input asks for, defaults filled in (absent: forkflow compaction at 80%).
 *
 * @example contextPolicyOf('provider') // { strategy: 'compact', by: 'provider', threshold: 0.8, keepRecent: 0.1, keepToolUses: 3 }
 */
export function contextPolicyOf(input: ContextManagementInput | undefined): ContextPolicy {
  if (input === undefined) return { ...DEFAULT_CONTEXT_POLICY };
  if (typeof input === 'string') return { ...DEFAULT_CONTEXT_POLICY, ...SHORTHANDS[input] };
  return {
    strategy: input.strategy,
    by: input.by ?? 'forkflow',
    threshold: input.threshold ?? DEFAULT_CONTEXT_POLICY.threshold,
    keepRecent: input.keepRecent ?? DEFAULT_CONTEXT_POLICY.keepRecent,
    keepToolUses: input.keepToolUses ?? DEFAULT_CONTEXT_POLICY.keepToolUses,
    ...(input.instructions ? { instructions: input.instructions } : {}),
  };
}

/** The policy's name as status and metrics show it: `forkflow compaction`, `provider clear-tool-results`, `off`. */
export function policyName(p: ContextPolicy): string {
  if (p.strategy === 'off') return 'off';
  return p.strategy === 'compact' ? `${p.by} compaction` : `${p.by} clear-tool-results`;
}

/** Input tokens at which the policy acts, for a window of `window` tokens. */
export function thresholdTokens(p: ContextPolicy, window: number): number {
  return Math.floor(window * p.threshold);
}

/** The provider's compaction trigger for this window: the threshold, but never below the API's minimum. */
export function providerTrigger(p: ContextPolicy, window: number): number {
  return Math.max(MIN_COMPACTION_TRIGGER, thresholdTokens(p, window));
}

/** Whether forkflow itself compacts when a request would pass the threshold (before the call, not after a refusal). */
export function forkflowCompacts(p: ContextPolicy): boolean {
  return p.strategy === 'compact' && p.by === 'forkflow';
}

/** Whether a `prompt is too long` is answered by compacting and calling again (every policy but `off`). */
export function compactsOnTooLong(p: ContextPolicy): boolean {
  return p.strategy !== 'off';
}
