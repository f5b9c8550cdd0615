/**
 * The ListAgents tool (src/shared/agent-list.ts): the caller's own sub-agents from its child
 * table, timed by the workflow's clock. Running children's turns, tool uses and tokens live in
 * their own workflows: one local activity asks them (a workflow cannot query another). Before
 * LIST_AGENTS_PROGRESS_PATCH the list was answered without it, and a recorded run that listed
 * running children replays so; a list with no running child schedules nothing.
 */
import { isCancellation, patched } from '@temporalio/workflow';
import type { ChildCounters } from '../../shared/activity-io';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/anthropic';
import { agentList, childrenToAsk, LIST_AGENTS, listAgentsToolInput, shownRecords } from '../../shared/agent-list';
import { describeIssues } from '../../shared/fork-input';
import { progress } from '../activities';
import { workflowNow } from '../clock';
import type { ForkAgent } from './agent';
import { errorResult, jsonResult } from './tool-results';

/** Before this patch ListAgents showed no turns, tool uses or tokens for a running child. */
export const LIST_AGENTS_PROGRESS_PATCH = 'forkflow-list-agents-progress-1';

/** Whether this agent was offered ListAgents (it is in its own tools; a fork sees its parent's). */
export function listAgentsOffered(agent: ForkAgent): boolean {
  return agent.summary.toolNames.includes(LIST_AGENTS);
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

/** Runs one ListAgents call. */
export async function listAgentsCall(agent: ForkAgent, use: ToolUseBlock): Promise<ToolResultBlock> {
  const parsed = listAgentsToolInput.safeParse(use.input ?? {});
  if (!parsed.success) return errorResult(use.id, `Invalid ListAgents call: ${describeIssues(parsed.error).join('; ')}`);
  const records = agent.children.all;
  const ask = childrenToAsk(shownRecords(records, parsed.data.state));
  const counters = ask.length > 0 && patched(LIST_AGENTS_PROGRESS_PATCH) ? await askedCounters(ask) : undefined;
  const list = agentList(records, {
    depth: agent.input.depth,
    now: workflowNow(),
    folded: agent.children.folded.agents,
    ...(parsed.data.state ? { state: parsed.data.state } : {}),
    ...(counters ? { counters } : {}),
  });
  return jsonResult(use.id, list);
}
