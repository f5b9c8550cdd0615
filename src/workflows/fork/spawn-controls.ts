/**
 * An Agent call's own limits for its child (`subAgents.spawnControls`; rules in
 * src/shared/tree/child-controls.ts): refused when they name tools the caller lacks or leave the
 * child nothing, else applied to the child's input — tokens, turns and tool calls lowered to
 * what the caller has, tools narrowed to the allowed ones. A fork keeps its parent's tools
 * array (the cache needs the same bytes) and is held to the narrower set call by call; a
 * spawned child's tools array itself is narrowed. Pure, so a resumed child is rebuilt alike.
 */
import type { ToolResultBlock } from '../../shared/messages-api/anthropic';
import type { AgentToolInput } from '../../shared/tree/agent-tools';
import { applyToolAccess, type ToolAccessPolicy } from '../../shared/tools/agent-access';
import { parseForkBudgetPolicy, remainingTokens } from '../../shared/tree/budget';
import { grantLimits, narrowTools, tokensUnderPolicy, type CallerLimits, type GrantedLimits } from '../../shared/tree/child-controls';
import type { ForkInputJson } from '../../shared/wire/fork-input';
import type { SubAgentsConfig } from '../../shared/tree/tree-input';
import type { ForkAgent } from './agent';

/** Whether the call sets any of its child's limits. */
export function hasControls(input: AgentToolInput): boolean {
  return input.budget !== undefined || input.tool_access !== undefined || input.budget_policy !== undefined;
}

/** The caller's tools it may itself use (its own access policy applied). */
function usableTools(agent: ForkAgent): string[] {
  return applyToolAccess(agent.input.toolAccess ?? { mode: 'inherit' }, agent.summary.toolNames);
}

function callerLimits(agent: ForkAgent, config: SubAgentsConfig, child?: ForkInputJson): CallerLimits {
  return {
    remainingTokens: remainingTokens(agent.budgetUsage, agent.input.budget),
    perAgentCap: config.perAgentMaxTokens,
    ...(child?.maxTurns !== undefined ? { defaultTurns: child.maxTurns } : {}),
    ...(child?.budget?.maxToolCalls !== undefined ? { defaultToolCalls: child.budget.maxToolCalls } : {}),
  };
}

/** The child's token budget the call asks for: its max_tokens, else its policy; undefined: the tree's rule. */
function askedTokens(agent: ForkAgent, config: SubAgentsConfig, input: AgentToolInput, limits: CallerLimits): number | undefined {
  if (input.budget?.max_tokens !== undefined) return grantLimits({ max_tokens: input.budget.max_tokens }, limits).maxTokens;
  if (input.budget_policy === undefined) return undefined;
  return tokensUnderPolicy(parseForkBudgetPolicy(input.budget_policy).policy, limits, agent.runningChildren.length, agent.input.budget.maxTokens);
}

/**
 * Why the call's `system_prompt` cannot be given, or undefined: only a general-purpose child
 * takes one (seed 002's spawn override). A fork keeps its caller's system prompt (its cached
 * prefix), a named agent is its definition, a teammate's prompt is its team's.
 */
function systemPromptRefusal(config: SubAgentsConfig, input: AgentToolInput): string | undefined {
  if (input.system_prompt === undefined) return undefined;
  if (input.team_name !== undefined) return 'system_prompt is for a general-purpose sub-agent, not a teammate: omit it, or omit team_name.';
  if (!input.subagent_type && config.forkGate) return 'system_prompt is for a general-purpose sub-agent: a fork keeps your system prompt (it shares your context). Set subagent_type "general-purpose", or omit system_prompt.';
  if (config.agents.some((a) => a.name === input.subagent_type && a.context !== 'fork')) return `system_prompt is for a general-purpose sub-agent: "${input.subagent_type}" has its own. Omit system_prompt, or use subagent_type "general-purpose".`;
  return undefined;
}

/** Why the call's limits cannot be given, or undefined. Teammates take none (they are peers with budgets of their own). */
export function controlsRefusal(agent: ForkAgent, config: SubAgentsConfig, input: AgentToolInput): string | undefined {
  const prompt = systemPromptRefusal(config, input);
  if (prompt) return prompt;
  if (!hasControls(input)) return undefined;
  if (input.team_name !== undefined) return 'budget, tool_access and budget_policy are for sub-agents, not teammates: omit them, or omit team_name.';
  if (input.tool_access) {
    const narrowed = narrowTools(input.tool_access, usableTools(agent));
    if (!narrowed.ok) return narrowed.error;
  }
  const tokens = askedTokens(agent, config, input, callerLimits(agent, config));
  if (tokens !== undefined && tokens < 1) return 'You have no tokens left to give a sub-agent: finish the work yourself.';
  return undefined;
}

/** The child's input with the call's limits applied (unchanged for a call that sets none). */
export function withControls(agent: ForkAgent, config: SubAgentsConfig, input: AgentToolInput, child: ForkInputJson): ForkInputJson {
  if (!hasControls(input)) return child;
  const limits = callerLimits(agent, config, child);
  const granted = grantLimits(input.budget, limits);
  const tokens = askedTokens(agent, config, input, limits);
  const budget = {
    ...child.budget,
    ...(tokens !== undefined && tokens >= 1 ? { maxTokens: tokens } : {}),
    ...(granted.maxToolCalls !== undefined ? { maxToolCalls: granted.maxToolCalls } : {}),
  };
  const out: ForkInputJson = { ...child, budget, ...(granted.maxTurns !== undefined ? { maxTurns: granted.maxTurns } : {}) };
  if (!input.tool_access) return out;
  const narrowed = narrowTools(input.tool_access, usableTools(agent));
  // A call refused above never gets here; a resumed one whose tools changed gets none rather than more.
  const names = narrowed.ok ? narrowed.tools : [];
  const isFork = child.parentRef !== undefined;
  return {
    ...out,
    toolAccess: { mode: 'allow_list', tools: names },
    ...(!isFork && child.tools ? { tools: child.tools.filter((t) => names.includes(t.name)) } : {}),
  };
}

/** What the child was given, as the model is told it (tokens as the tree's root granted them). */
export function grantOf(child: ForkInputJson, grantedTokens: number | undefined, input: AgentToolInput): GrantedLimits & { tools?: string[] } {
  const access = child.toolAccess as ToolAccessPolicy | undefined;
  const tools = input.tool_access && access && access.mode !== 'inherit' ? access.tools : undefined;
  return {
    maxTokens: grantedTokens ?? child.budget?.maxTokens,
    ...(child.maxTurns !== undefined ? { maxTurns: child.maxTurns } : {}),
    ...(child.budget?.maxToolCalls !== undefined ? { maxToolCalls: child.budget.maxToolCalls } : {}),
    ...(tools ? { tools } : {}),
  };
}

/** The launch's JSON result with what the child was granted (an error or non-JSON result is left as it is). */
export function withGrant(block: ToolResultBlock, grant: GrantedLimits & { tools?: string[] }): ToolResultBlock {
  if (block.is_error || typeof block.content !== 'string') return block;
  let value: unknown;
  try {
    value = JSON.parse(block.content) as unknown;
  } catch {
    return block;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return block;
  const shown = { max_tokens: grant.maxTokens, ...(grant.maxTurns !== undefined ? { max_turns: grant.maxTurns } : {}), ...(grant.maxToolCalls !== undefined ? { max_tool_calls: grant.maxToolCalls } : {}), ...(grant.tools ? { tools: grant.tools } : {}) };
  return { ...block, content: JSON.stringify({ ...(value as Record<string, unknown>), granted: shown }, null, 2) };
}
