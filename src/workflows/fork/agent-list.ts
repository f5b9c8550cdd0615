/**
 * The ListAgents tool (src/shared/agent-list.ts): the caller's own sub-agents from its child
 * table, timed by the workflow's clock. No activity and no command: answering it schedules
 * nothing, so it costs one tool result and adds nothing to the history.
 */
import type { ToolResultBlock, ToolUseBlock } from '../../shared/anthropic';
import { agentList, LIST_AGENTS, listAgentsToolInput } from '../../shared/agent-list';
import { describeIssues } from '../../shared/fork-input';
import { workflowNow } from '../clock';
import type { ForkAgent } from './agent';
import { errorResult, jsonResult } from './tool-results';

/** Whether this agent was offered ListAgents (it is in its own tools; a fork sees its parent's). */
export function listAgentsOffered(agent: ForkAgent): boolean {
  return agent.summary.toolNames.includes(LIST_AGENTS);
}

/** Runs one ListAgents call. */
export function listAgentsCall(agent: ForkAgent, use: ToolUseBlock): ToolResultBlock {
  const parsed = listAgentsToolInput.safeParse(use.input ?? {});
  if (!parsed.success) return errorResult(use.id, `Invalid ListAgents call: ${describeIssues(parsed.error).join('; ')}`);
  const list = agentList(agent.children.all, {
    depth: agent.input.depth,
    now: workflowNow(),
    folded: agent.children.folded.agents,
    ...(parsed.data.state ? { state: parsed.data.state } : {}),
  });
  return jsonResult(use.id, list);
}
