/**
 * The Skill tool: the model runs a `context: fork` command (a skill) by name, as a fork of
 * itself. The name and arguments are the model's choice, so they are parsed with zod and
 * looked up among the configured skills only; an unknown name is an `is_error` result that
 * lists the skills there are. Everything else (refusals, limits, routing, budgets) is the
 * Agent tool's, through agent-launch.ts.
 */
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages-api/anthropic';
import { forkSkills, skillToolInput } from '../../shared/tree/agent-tools';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import type { SubAgentsConfig } from '../../shared/tree/tree-input';
import { permittedAgents } from '../../shared/tools/agent-access';
import type { ForkAgent } from './agent';
import { launchChild, refusal, type Launch } from './agent-launch';
import { backgroundOff } from './background-switch';
import { skillAgentInput } from './child-input';
import { errorResult } from './tool-results';

export async function skillCall(agent: ForkAgent, use: ToolUseBlock, config: SubAgentsConfig): Promise<ToolResultBlock> {
  const skills = forkSkills(config.agents);
  // Denied skills are not named to the model (a call for one is refused by name in refusal()).
  const names = forkSkills(permittedAgents(config)).map((s) => s.name).join(', ') || 'none';
  const parsed = skillToolInput.safeParse(use.input);
  if (!parsed.success) return errorResult(use.id, `Invalid Skill call: ${describeIssues(parsed.error).join('; ')}. Skills: ${names}.`);
  const skill = skills.find((s) => s.name === parsed.data.skill);
  // The name passed the schema (plain characters, bounded), so echoing it back is safe.
  if (!skill) return errorResult(use.id, `There is no skill ${JSON.stringify(parsed.data.skill)}. Skills: ${names}.`);
  const input = skillAgentInput(skill, parsed.data.args);
  // Numbered like an Agent fork (`<id>.<skill>-N` reads well in a tree and is unique per parent).
  // A plugin's skill (`kit:review`) is numbered `kit-review-N`: ids keep to their plain separators.
  const id = agent.children.nextId(agent.agentId, skill.name.replace(':', '-'));
  const launch: Launch = { kind: 'skill', skill };
  const why = await refusal(agent, config, input, launch);
  if (why) return errorResult(use.id, why);
  return launchChild(agent, config, { id, use, input, launch, background: !backgroundOff(agent) && (config.forkGate || skill.background === true) });
}
