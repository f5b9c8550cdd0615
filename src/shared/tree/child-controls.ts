/**
 * What an Agent call may set for the one child it starts (seed 002's spawn/fork parameters),
 * when its tree offers it (`subAgents.spawnControls`): a `budget` (tokens, turns, tool calls),
 * `tool_access` (an allow and/or deny list of the caller's own tools) and `budget_policy`.
 * The call can only narrow: numbers are clamped to what the caller has, tool names it does not
 * have are refused. Pure: the workflow resolves a call with these and a client can explain one.
 */
import { z } from 'zod';
import { applyToolAccess } from '../tools/agent-access';
import { toolNameSchema } from '../agents/agents';
import { childBudget, type ForkBudgetPolicy } from './budget';
import { schemaOnce } from '../base/schema-once';

/** Most entries one call's allow or deny list may have (a hostile call could send millions). */
export const MAX_ACCESS_ENTRIES = 200;

const limit = (what: string, min: number) => z.number().int().min(min).max(Number.MAX_SAFE_INTEGER).optional().describe(what);

/** The `budget` argument: each limit optional; more than the caller has is clamped, not refused. */
export const childBudgetArg = schemaOnce('tree/child-controls#childBudgetArg', () => z.strictObject({
  max_tokens: limit('Token budget for the sub-agent (at most what you have left).', 1),
  max_turns: limit('Model turns it may take (at most what it would get anyway).', 1),
  max_tool_calls: limit('Tool calls it may make (at most your own limit).', 0),
}));
export type ChildBudgetArg = z.infer<typeof childBudgetArg>;

/** `tool_access` as an object; also what the model is shown (a JSON string is accepted too, see below). */
export const accessObject = schemaOnce('tree/child-controls#accessObject', () => z.strictObject({
  allow: z.array(toolNameSchema).max(MAX_ACCESS_ENTRIES).optional().describe('Only these of your tools (a trailing * matches a prefix).'),
  deny: z.array(toolNameSchema).max(MAX_ACCESS_ENTRIES).optional().describe('None of these.'),
}).refine((v) => v.allow !== undefined || v.deny !== undefined, { message: 'give allow, deny or both (lists of your own tool names)' }));
export type ToolAccessArg = z.infer<typeof accessObject>;

export const TOOL_ACCESS_TEXT = 'Which of your tools the sub-agent may use: {"allow": [...]} and/or {"deny": [...]} (only tools you have).';

/** The `tool_access` argument: an object, or the same object as a JSON string (models often stringify nested objects). */
export const toolAccessArg = schemaOnce('tree/child-controls#toolAccessArg', () => z.union([
  accessObject,
  z.string().max(20_000).transform((raw, ctx) => {
    let value: unknown;
    try {
      value = JSON.parse(raw) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'tool_access is a string but not JSON: send {"allow": [...]} and/or {"deny": [...]}' });
      return z.NEVER;
    }
    const parsed = accessObject.safeParse(value);
    if (parsed.success) return parsed.data;
    ctx.addIssue({ code: 'custom', message: `tool_access: ${parsed.error.issues.map((i) => i.message).join('; ')}` });
    return z.NEVER;
  }),
]).describe(TOOL_ACCESS_TEXT));

/** The `budget_policy` argument, as the config takes it (src/shared/tree/budget.ts), but unreadable is refused, not `equal`. */
export const budgetPolicyArg = schemaOnce('tree/child-controls#budgetPolicyArg', () => z
  .string()
  .max(40)
  .regex(/^\s*(equal|remaining|proportional|fixed:[1-9]\d{0,14})\s*$/i, 'budget_policy is equal, remaining, proportional or fixed:N (N whole tokens)')
  .describe('How its token budget derives from yours: equal, remaining, proportional or fixed:N. max_tokens wins over it.'));

/** What the caller has, that a child's limits are clamped to. */
export interface CallerLimits {
  /** Tokens the caller has left. */
  remainingTokens: number;
  perAgentCap: number;
  /** The turns and tool calls the child would get without asking. */
  defaultTurns?: number;
  defaultToolCalls?: number;
}

/** The limits a child is granted: each the lower of what was asked and what the caller has. */
export interface GrantedLimits {
  maxTokens?: number;
  maxTurns?: number;
  maxToolCalls?: number;
}

/** The token budget under a call's own policy: the config's rule, never more than the caller has left. */
export function tokensUnderPolicy(policy: ForkBudgetPolicy, caller: CallerLimits, liveSiblings: number, defaultBudget: number): number {
  const rule = childBudget({ policy, parentRemaining: caller.remainingTokens, perAgentCap: caller.perAgentCap, liveSiblings, defaultBudget });
  return Math.min(rule, caller.remainingTokens);
}

const lower = (asked: number | undefined, cap: number | undefined): number | undefined => (asked === undefined ? undefined : cap === undefined ? asked : Math.min(asked, cap));

/**
 * The call's budget clamped: tokens to the caller's remaining tokens and the per-agent cap
 * (seed 002: an explicit budget is capped), turns and tool calls to what the child would get
 * anyway. Absent limits stay absent (the child gets its defaults).
 *
 * @example grantLimits({ max_tokens: 1e9 }, { remainingTokens: 8000, perAgentCap: 200000 }) // { maxTokens: 8000 }
 */
export function grantLimits(asked: ChildBudgetArg | undefined, caller: CallerLimits): GrantedLimits {
  if (!asked) return {};
  const tokens = lower(asked.max_tokens, Math.min(caller.remainingTokens, caller.perAgentCap));
  const turns = lower(asked.max_turns, caller.defaultTurns);
  const calls = lower(asked.max_tool_calls, caller.defaultToolCalls);
  return { ...(tokens !== undefined ? { maxTokens: tokens } : {}), ...(turns !== undefined ? { maxTurns: turns } : {}), ...(calls !== undefined ? { maxToolCalls: calls } : {}) };
}

/** The entries of a list that cover none of the caller's tools (a name it does not have). */
function strangers(entries: readonly string[] | undefined, own: readonly string[]): string[] {
  return (entries ?? []).filter((e) => applyToolAccess({ mode: 'allow_list', tools: [e] }, own).length === 0);
}

/**
 * The caller's tools the child may use under `access` (in the caller's order), or why the call
 * is refused: a name the caller does not have (it cannot give what it lacks, and a silent
 * drop would leave the child without a tool the model meant it to have), or nothing left.
 */
export function narrowTools(access: ToolAccessArg, own: readonly string[]): { ok: true; tools: string[] } | { ok: false; error: string } {
  const unknown = [...strangers(access.allow, own), ...strangers(access.deny, own)];
  if (unknown.length > 0) {
    const shown = unknown.slice(0, 5).map((n) => JSON.stringify(n.slice(0, 60))).join(', ');
    return { ok: false, error: `tool_access names ${shown}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ''}, which you do not have: a sub-agent gets only your own tools. Yours: ${own.join(', ')}.` };
  }
  let tools = [...own];
  if (access.allow) tools = applyToolAccess({ mode: 'allow_list', tools: access.allow }, tools);
  if (access.deny) tools = applyToolAccess({ mode: 'deny_list', tools: access.deny }, tools);
  if (tools.length === 0) return { ok: false, error: 'tool_access leaves the sub-agent no tools at all: allow at least one of yours.' };
  return { ok: true, tools };
}
