/**
 * The workflow side of `memory: user` (src/shared/agents/agent-memory.ts): an agent whose definition
 * keeps its memory in its tenant's home starts only in a tree that names its tenant, and each of
 * its tool calls names that memory so the tool worker lets Read, FileWrite and FileEdit reach it
 * (src/activities/user-memory.ts resolves where it is, from the worker's own configuration).
 */
import type { ToolCallInput } from '../../shared/wire/activity-io';
import type { AgentDefinition } from '../../shared/agents/agents';
import type { ForkAgent } from './agent';

/** Why this agent type may not start here: it keeps `memory: user` and the tree names no tenant. */
export function userMemoryRefusal(agent: ForkAgent, launch: { kind: string; definition?: AgentDefinition }): string | undefined {
  const definition = launch.kind === 'spawn' ? launch.definition : undefined;
  if (definition?.memory !== 'user' || agent.input.tenant !== undefined) return undefined;
  return `Agent type "${definition.name}" keeps memory: user, which lives in the home of this tree's tenant, and this tree names none (its start input has no tenant): pick another agent type, or do this part yourself.`;
}

/** The user memory a tool call may reach, for an agent that keeps one. */
export function userMemoryOf(agent: ForkAgent): Pick<ToolCallInput, 'userMemory'> {
  const memory = agent.input.agentMemory;
  return memory?.scope === 'user' && memory.tenant !== undefined ? { userMemory: { tenant: memory.tenant, agent: memory.agent } } : {};
}
