/**
 * The ListAgents tool (src/shared/tree/agent-list.ts): the caller's own sub-agents from its child
 * table, timed by the workflow's clock. Running children's turns, tool uses and tokens live in
 * their own workflows: one local activity asks them (a workflow cannot query another); a list
 * with no running child schedules nothing. A teammate's list also shows its team, from the
 * root's ledger (another local activity).
 */
import { isCancellation } from '@temporalio/workflow';
import type { ChildCounters, TeamMemberFacts } from '../../shared/wire/activity-io';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages-api/anthropic';
import { agentList, childrenToAsk, shownRecords, teamView, type TeamView } from '../../shared/tree/agent-list';
import { LIST_AGENTS, listAgentsToolInput } from '../../shared/tree/agent-tools';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import { progress } from '../activities';
import { workflowNow } from '../clock';
import type { ForkAgent } from './agent';
import { errorResult, jsonResult } from './tool-results';

/** Whether this agent was offered ListAgents (it is in its own tools; a fork sees its parent's). */
export function listAgentsOffered(agent: ForkAgent, name: string = LIST_AGENTS): boolean {
  return agent.summary.toolNames.includes(name);
}

/** The running children's counters; none when asking failed (the list shows what the parent knows: a list never fails the agent). */
async function askedCounters(agentIds: string[]): Promise<Record<string, ChildCounters> | undefined> {
  try {
    return await progress.childrenProgress({ agentIds });
  } catch (err) {
    if (isCancellation(err)) throw err;
    return undefined;
  }
}

/** The team's members as the root's ledger has them; undefined when asking failed (the list says so: it never fails the agent). */
async function askedTeam(rootId: string, team: string): Promise<TeamMemberFacts[] | undefined> {
  try {
    return await progress.teamRoster({ rootId, team });
  } catch (err) {
    if (isCancellation(err)) throw err;
    return undefined;
  }
}

/** A teammate's team, for its list. */
async function teamOf(agent: ForkAgent): Promise<TeamView | undefined> {
  const team = agent.input.team;
  if (!team) return undefined;
  return teamView({ team: team.name, self: agent.agentId, members: await askedTeam(agent.rootAgentId, team.name) });
}

/** Runs one ListAgents call. */
const asksCancelled = (input: unknown): boolean => input !== null && typeof input === 'object' && (input as { state?: unknown }).state === 'cancelled';

export async function listAgentsCall(agent: ForkAgent, use: ToolUseBlock): Promise<ToolResultBlock> {
  const parsed = listAgentsToolInput.safeParse(use.input ?? {});
  // Seed 002 calls a stopped agent `cancelled`; forkflow keeps seed 001's `killed`, and says so by name.
  if (!parsed.success && asksCancelled(use.input)) return errorResult(use.id, 'Invalid ListAgents call: forkflow calls a stopped (cancelled) agent "killed", as Claude Code does: ask for state "killed".');
  if (!parsed.success) return errorResult(use.id, `Invalid ListAgents call: ${describeIssues(parsed.error).join('; ')}`);
  const records = agent.children.all;
  const ask = childrenToAsk(shownRecords(records, parsed.data.state));
  const counters = ask.length > 0 ? await askedCounters(ask) : undefined;
  const list = agentList(records, {
    depth: agent.input.depth,
    now: workflowNow(),
    folded: agent.children.folded.agents,
    ...(parsed.data.state ? { state: parsed.data.state } : {}),
    ...(counters ? { counters } : {}),
  });
  const team = await teamOf(agent);
  return jsonResult(use.id, team ? { ...list, team } : list);
}
