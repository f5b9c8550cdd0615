/**
 * Budgets (SEMANTICS "Limits and budgets"): a fork's token, turn and tool-call limits, the
 * policy that sizes a child's token budget from its parent's, and the predicate that says
 * when a limit is reached. Pure functions of plain data, so a workflow and a client agree.
 */
import { z } from 'zod';
import type { Usage } from '../messages-api/anthropic';
import { plainIssues } from '../base/plain-issues';
import { schemaOnce } from '../base/schema-once';

/** Default token budget of one agent. */
export const DEFAULT_MAX_TOKENS = 50_000;

/**
 * How a fork's token budget derives from its parent's:
 * - `equal`: the default per-agent budget, whatever the parent has left;
 * - `remaining`: everything the parent has left;
 * - `proportional`: the parent's remainder split evenly across its live forks, the new one included;
 * - `fixed`: exactly `tokens`.
 * Every policy is capped by the per-agent maximum.
 */
export type ForkBudgetPolicy = { kind: 'equal' } | { kind: 'remaining' } | { kind: 'proportional' } | { kind: 'fixed'; tokens: number };

export const forkBudgetPolicySchema = schemaOnce('tree/budget#forkBudgetPolicySchema', () => z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('equal') }),
  z.strictObject({ kind: z.literal('remaining') }),
  z.strictObject({ kind: z.literal('proportional') }),
  z.strictObject({ kind: z.literal('fixed'), tokens: z.number().int().positive() }),
]));

const FIXED = /^fixed:(\d+)$/;
const EQUAL: ForkBudgetPolicy = { kind: 'equal' };

/** What {@link parseForkBudgetPolicy} returns: the policy to use, and why it is not the one asked for. */
export interface ParsedForkBudgetPolicy {
  policy: ForkBudgetPolicy;
  /** Set when the input could not be read and `equal` is used instead. */
  warning?: string;
}

function fromString(text: string): ForkBudgetPolicy | undefined {
  const s = text.trim().toLowerCase();
  if (s === 'equal' || s === 'remaining' || s === 'proportional') return { kind: s };
  const m = FIXED.exec(s);
  const tokens = m ? Number(m[1]) : NaN;
  return Number.isSafeInteger(tokens) && tokens > 0 ? { kind: 'fixed', tokens } : undefined;
}

/**
 * Reads a fork budget policy from a string (`equal`, `remaining`, `proportional`, `fixed:N`
 * with N a positive integer; case and surrounding spaces ignored) or an object
 * (`{ kind: 'fixed', tokens: 20000 }`). Absent → `equal`. Anything else → `equal` with a
 * `warning` to report: an unreadable policy should not stop a fork, nor pass unnoticed.
 *
 * @example parseForkBudgetPolicy('fixed:20000') // { policy: { kind: 'fixed', tokens: 20000 } }
 */
export function parseForkBudgetPolicy(raw: unknown): ParsedForkBudgetPolicy {
  if (raw === undefined || raw === null) return { policy: EQUAL };
  if (typeof raw === 'string') {
    const policy = fromString(raw);
    if (policy) return { policy };
    return {
      policy: EQUAL,
      warning: `Unknown fork budget policy ${JSON.stringify(raw)}; using "equal". Use equal, remaining, proportional or fixed:N (N a positive whole number of tokens).`,
    };
  }
  const parsed = forkBudgetPolicySchema.safeParse(raw);
  if (parsed.success) return { policy: parsed.data };
  return { policy: EQUAL, warning: `Unreadable fork budget policy (${plainIssues(parsed.error, 'the policy').join('; ')}); using "equal".` };
}

/** The policy in its string form (`fixed:20000`), as reports and CLIs show it. */
export function formatForkBudgetPolicy(policy: ForkBudgetPolicy): string {
  return policy.kind === 'fixed' ? `fixed:${policy.tokens}` : policy.kind;
}

export interface ChildBudgetArgs {
  policy: ForkBudgetPolicy;
  /** Tokens the parent has left (negative after an overrun: counted as 0). */
  parentRemaining: number;
  /** Upper bound for any one agent's budget; absent = no cap. */
  perAgentCap?: number;
  /** The parent's forks still running, **not** counting the one being created. */
  liveSiblings: number;
  /** The default per-agent budget (`equal`). Default {@link DEFAULT_MAX_TOKENS}. */
  defaultBudget?: number;
}

function wholeTokens(name: string, n: number): number {
  if (!Number.isFinite(n)) throw new RangeError(`${name} must be a finite number of tokens, got ${n}`);
  return Math.max(0, Math.floor(n));
}

/**
 * A new fork's token budget under `policy` (always a whole number ≥ 0):
 * `equal` → `defaultBudget`; `remaining` → `parentRemaining`; `proportional` →
 * `floor(parentRemaining / (liveSiblings + 1))`; `fixed:N` → N; each then capped by
 * `perAgentCap`. A result of 0 means the parent has nothing left to give.
 *
 * @example childBudget({ policy: { kind: 'proportional' }, parentRemaining: 30_000, liveSiblings: 2 }) // 10_000
 */
export function childBudget(args: ChildBudgetArgs): number {
  const remaining = wholeTokens('parentRemaining', args.parentRemaining);
  const cap = args.perAgentCap === undefined ? Infinity : wholeTokens('perAgentCap', args.perAgentCap);
  const siblings = wholeTokens('liveSiblings', args.liveSiblings);
  const fallback = wholeTokens('defaultBudget', args.defaultBudget ?? DEFAULT_MAX_TOKENS);
  const uncapped = (() => {
    switch (args.policy.kind) {
      case 'equal':
        return fallback;
      case 'remaining':
        return remaining;
      case 'proportional':
        return Math.floor(remaining / (siblings + 1));
      case 'fixed':
        return wholeTokens('fixed tokens', args.policy.tokens);
    }
  })();
  return Math.min(uncapped, cap);
}

/** An agent's limits. `maxTurns` / `maxToolCalls` absent = not limited by the budget. */
export const budgetSchema = schemaOnce('tree/budget#budgetSchema', () => z.strictObject({
  maxTokens: z.number().int().positive().default(DEFAULT_MAX_TOKENS).describe('Tokens it may use, weighted as priced (cache reads cheaper than input).'),
  maxTurns: z.number().int().min(0).optional().describe('Model calls at most.'),
  maxToolCalls: z.number().int().min(0).optional().describe('Tool calls at most (refused ones count).'),
}));
export type Budget = z.output<typeof budgetSchema>;
export type BudgetInput = z.input<typeof budgetSchema>;

/** What an agent has done so far, besides token usage. */
export interface BudgetCounters {
  /** Model calls made. */
  turns: number;
  /** Tool calls executed (refused ones included: the model still spent a call on them). */
  toolCalls: number;
}

export type BudgetLimit = 'tokens' | 'turns' | 'tool_calls';

export interface BudgetExhaustion {
  limit: BudgetLimit;
  used: number;
  max: number;
}

/**
 * Tokens charged to a budget, weighted as the provider prices them: uncached input, cache
 * writes and output in full, cache reads at a tenth (CACHE_READ_WEIGHT). A fork re-reads its
 * inherited prefix every turn; charging those reads in full would spend the default 50,000
 * on two turns of a 20,000-token parent, while what the fork *costs* is mostly what it adds.
 * A cache miss is charged in full (as a write), so a broken cache still shows in the budget.
 */
export function tokensCharged(usage: Usage): number {
  return usage.inputTokens + usage.cacheCreationInputTokens + usage.outputTokens + Math.ceil(usage.cacheReadInputTokens * CACHE_READ_WEIGHT);
}

/** Cache reads are priced at 0.1× input (ANTHROPIC-API.md); budgets weigh them the same. */
export const CACHE_READ_WEIGHT = 0.1;

/** Tokens left in a budget (never negative). */
export function remainingTokens(usage: Usage, budget: Pick<Budget, 'maxTokens'>): number {
  return Math.max(0, budget.maxTokens - tokensCharged(usage));
}

/**
 * Which limit stops the agent before its next model call, if any: `tokens` when the charged
 * tokens (see {@link tokensCharged}) reached `maxTokens`, `turns` when `turns` reached
 * `maxTurns`, `tool_calls` when `toolCalls` reached `maxToolCalls`. When several are reached
 * the first in that order is reported. `undefined` = keep going.
 */
export function budgetExhausted(usage: Usage, counters: BudgetCounters, budget: Budget): BudgetExhaustion | undefined {
  const checks: [BudgetLimit, number, number | undefined][] = [
    ['tokens', tokensCharged(usage), budget.maxTokens],
    ['turns', counters.turns, budget.maxTurns],
    ['tool_calls', counters.toolCalls, budget.maxToolCalls],
  ];
  for (const [limit, used, max] of checks) if (max !== undefined && used >= max) return { limit, used, max };
  return undefined;
}
