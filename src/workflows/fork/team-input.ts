/**
 * A teammate's fork input, built from its lead's Agent call (team-spawn.ts starts it; agent-launch.ts
 * builds it for admission). Apart from team-spawn.ts, which uses agent-launch.ts, so the two do not import each other.
 */
import { isSubAgentTool, listAgentsTool, sendMessageTool, type AgentToolInput } from '../../shared/tree/agent-tools';
import type { AgentDefinition } from '../../shared/agents/agents';
import type { ForkInputJson } from '../../shared/wire/fork-input';
import { teammateComms } from '../../shared/tree/team';
import type { SubAgentsConfig } from '../../shared/tree/tree-input';
import type { ForkAgent } from './agent';
import { spawnChildInput } from './child-input';

/** A teammate's input: a background spawn with SendMessage (and ListAgents for its team) but no Agent tools, its team, and its comms. */
export function teammateChildInput(agent: ForkAgent, input: AgentToolInput, config: SubAgentsConfig, definition: AgentDefinition | undefined): ForkInputJson {
  const { subAgents: _noAgents, ...base } = spawnChildInput(agent, input, config, definition, true);
  const planApproval = input.mode === 'plan';
  const comms = teammateComms({ team: input.team_name!, name: input.name!, lead: agent.input.name ? `"${agent.input.name}" (${agent.agentId})` : agent.agentId, planApproval });
  return {
    ...base,
    // With ListAgents on (subAgents.listAgents) a teammate lists its team: the names it may message.
    tools: [...(base.tools ?? []).filter((t) => !isSubAgentTool(t.name)), sendMessageTool(true), ...(config.listAgents ? [listAgentsTool({ team: true })] : [])],
    team: { name: input.team_name!, lead: agent.agentId, ...(planApproval ? { planApproval: true } : {}) },
    idleTimeout: config.teammateIdle,
    // A teammate lives as long as its team: it continues as new on its lead's thresholds.
    ...(agent.input.continueAsNew ? { continueAsNew: agent.input.continueAsNew } : {}),
    prompt: `${comms}\n\n${base.prompt ?? input.prompt}`,
  };
}
