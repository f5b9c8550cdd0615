/**
 * The workflow side of seed 002's spawn settings that are not a model choice (that is
 * spawn-model.ts): `inheritSystemPrompt` gives a general-purpose spawn its caller's system
 * prompt, and `maxConcurrentOps` caps what one agent has in flight across operation types
 * (running sub-agents and background shell tasks). Both are absent from every recorded run,
 * so they change no path a recorded run took.
 */
import type { SystemParam } from '../../shared/messages-api/anthropic';
import type { AgentToolInput } from '../../shared/tree/agent-tools';
import type { ForkInputJson } from '../../shared/wire/fork-input';
import { EMPTY_DIGEST } from '../../shared/base/hash';
import type { SubAgentsConfig } from '../../shared/tree/tree-input';
import { conversation } from '../activities';
import type { ForkAgent } from './agent';

/** The caller's system prompt as it sends it: held by this run, else read from the run that holds it. */
async function callerSystem(agent: ForkAgent): Promise<SystemParam> {
  if (agent.context) return agent.context.system;
  const summary = agent.summary;
  const read = await conversation.readHeldConversation({ prefix: { run: summary.from, count: 0, digest: EMPTY_DIGEST }, context: { from: summary.from, contextKey: summary.contextKey } });
  return read.context.system;
}

/**
 * A general-purpose spawn's input with its caller's system prompt, when the tree asks for it
 * (`inheritSystemPrompt`, seed 002) and the call gives none of its own; anything else as it is.
 * A named agent has its definition's prompt, a fork its caller's whole context, a teammate its team's.
 */
export async function withInheritedSystem(agent: ForkAgent, config: SubAgentsConfig, input: AgentToolInput, launch: { kind: string; definition?: unknown }, child: ForkInputJson): Promise<ForkInputJson> {
  if (config.inheritSystemPrompt !== true || launch.kind !== 'spawn' || launch.definition || input.system_prompt !== undefined || input.team_name !== undefined) return child;
  return { ...child, system: await callerSystem(agent) };
}

/** In-flight operations of an agent, across types. */
function opsInFlight(agent: ForkAgent): number {
  return agent.runningChildren.length + agent.shells.running.length;
}

/** Why one more operation (a sub-agent or a background shell task) may not start under `maxConcurrentOps`, or undefined. */
export function opsRefusal(agent: ForkAgent, config: Pick<SubAgentsConfig, 'maxConcurrentOps'> | undefined, what: string): string | undefined {
  const cap = config?.maxConcurrentOps;
  if (cap === undefined || opsInFlight(agent) < cap) return undefined;
  return `You already have ${agent.runningChildren.length} sub-agent(s) and ${agent.shells.running.length} background task(s) running, ${cap} operations in all, the most this agent tree allows at once (subAgents.maxConcurrentOps): wait for one to finish (TaskOutput) or stop one (TaskStop), then start ${what}.`;
}
