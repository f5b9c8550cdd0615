/**
 * Starting a teammate (seed 001: `name` + `team_name` → spawnTeammate → `teammate_spawned`).
 * A teammate is a spawned child of its lead (the caller) that always runs in the background,
 * joins the lead's flat roster — kept in the tree ledger at the root, which refuses a second
 * member of the same name in a team, a team with two leads and a lead with two teams, all at
 * admission — and talks to its team by SendMessage. It cannot start agents itself; while idle
 * it waits for messages (subAgents.teammateIdle) until its lead's `shutdown_request`.
 */
import { workflowInfo } from '@temporalio/workflow';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages-api/anthropic';
import type { AgentToolInput } from '../../shared/tree/agent-tools';
import { leadComms } from '../../shared/tree/team';
import type { SubAgentsConfig } from '../../shared/tree/tree-input';
import type { ForkAgent } from './agent';
import { admitted, refusal, startAdmitted } from './agent-launch';
import { backgroundOff, backgroundRefusal } from './background-switch';
import { childIdFor } from './child-input';
import { teammateChildInput } from './team-input';
import { startChildAgent } from './children';
import { errorResult, jsonResult } from './tool-results';

/** What a teammate is told when it tries to start an agent. */
export function teammateSpawnRefusal(agent: ForkAgent): string | undefined {
  const team = agent.input.team;
  if (!team) return undefined;
  return `You are "${agent.input.name ?? agent.agentId}", a teammate in team "${team.name}": a teammate cannot start teammates (a team's roster is flat) or agents of its own. Ask your lead for more hands (SendMessage to "lead").`;
}

/** Why this Agent call cannot start a teammate, before anything is asked of the root. */
function teamCallProblem(agent: ForkAgent, config: SubAgentsConfig, input: AgentToolInput): string | undefined {
  if (!config.teams) return 'Teams are not enabled for this agent tree (subAgents.teams): omit team_name and mode.';
  if (input.team_name === undefined) return 'mode is for teammates only (a sub-agent\'s permissions come from its definition): give name and team_name to start a teammate, or omit mode.';
  if (!input.name) return 'A teammate needs a name (unique in its team): give name with team_name.';
  if (input.isolation === 'remote') return 'A teammate runs here, not on the remote workers: omit isolation "remote".';
  const definition = config.agents.find((a) => a.name === input.subagent_type && a.context !== 'fork');
  if (definition?.isolation === 'remote') return `Agent type "${definition.name}" runs on the remote workers (its definition says isolation: remote), and a teammate runs here: start it without team_name, or pick another agent type.`;
  if (!agent.inTreeLedger) return 'This agent tree keeps no ledger (it was started before teams existed): teammates cannot join it.';
  return undefined;
}

/** An Agent call with `team_name` (or `mode`): starts a teammate and answers `teammate_spawned`. */
export async function teammateCall(agent: ForkAgent, use: ToolUseBlock, input: AgentToolInput, config: SubAgentsConfig): Promise<ToolResultBlock> {
  if (backgroundOff(agent)) return errorResult(use.id, backgroundRefusal('A teammate (it always works in the background)'));
  const problem = teamCallProblem(agent, config, input);
  if (problem) return errorResult(use.id, problem);
  const definition = config.agents.find((a) => a.name === input.subagent_type && a.context !== 'fork');
  const id = childIdFor(agent, input, 'spawn');
  const why = await refusal(agent, config, input, { kind: 'spawn', definition });
  if (why) return errorResult(use.id, why);
  const admission = await admitted(agent, id, teammateChildInput(agent, input, config, definition), 'spawn');
  if ('refused' in admission) return errorResult(use.id, admission.refused);
  await startAdmitted(agent, id, () =>
    startChildAgent(agent, { id, input: admission.input, agentInput: input, kind: 'spawn', toolUseId: use.id, mode: 'background', taskQueue: workflowInfo().taskQueue }),
  );
  return jsonResult(use.id, { status: 'teammate_spawned', teammate_id: id, name: input.name, team_name: input.team_name, note: leadComms(input.name!, input.team_name!) });
}
