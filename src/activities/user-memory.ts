/**
 * Where a `memory: user` agent's memory is on this worker (src/shared/agents/agent-memory.ts): in its
 * tenant's home, `<FORKFLOW_USER_MEMORY_ROOT>/<tenant>`, a directory the operator made for that
 * tenant (forkflow never makes a home: a tenant the operator did not provide has no user memory).
 * Every path is taken canonically and must stay inside the root; the memory directory itself is
 * made by the agent's start (agent-memory.ts, inside the home, level by level) and only looked
 * up by its tool calls.
 */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { agentMemoryPath, tenantSchema } from '../shared/agents/agent-memory';
import { AgentMemoryError } from './agent-memory';
import { within } from './tools/sandbox';

/**
 * The canonical home of `tenant` under `root` (the worker's FORKFLOW_USER_MEMORY_ROOT). A root
 * inside a workspace (`workspaceRoots`: those this worker serves) is refused: any fork working
 * there could write every tenant's memory with its ordinary tools.
 */
export async function tenantHome(root: string | undefined, tenant: string, workspaceRoots: readonly string[] = []): Promise<string> {
  if (root === undefined) throw new AgentMemoryError('This worker keeps no user memory: its operator sets FORKFLOW_USER_MEMORY_ROOT (a directory holding one home per tenant) to allow memory: user.');
  // The tenant becomes a path: checked here too, whoever scheduled the call.
  const name = tenantSchema.safeParse(tenant);
  if (!name.success) throw new AgentMemoryError(`"${tenant.slice(0, 64)}" is not a tenant name.`);
  const canonicalRoot = await realpath(root).catch(() => undefined);
  if (!canonicalRoot) throw new AgentMemoryError(`The worker's user-memory root ${root} does not exist.`);
  const inside = workspaceRoots.find((w) => within(canonicalRoot, w));
  if (inside !== undefined) throw new AgentMemoryError(`The worker's user-memory root ${canonicalRoot} lies in the workspace root ${inside}, where forks write: its operator moves it out of every workspace.`);
  const home = await realpath(path.join(canonicalRoot, name.data)).catch(() => undefined);
  if (!home || !(await stat(home)).isDirectory()) throw new AgentMemoryError(`There is no home for tenant "${name.data}" in ${canonicalRoot}: the operator makes one (a directory named after the tenant) to give it a user memory.`);
  if (!within(home, canonicalRoot) || home === canonicalRoot) throw new AgentMemoryError(`The home of tenant "${name.data}" resolves to ${home}, outside the user-memory root ${canonicalRoot}.`);
  return home;
}

/** The canonical directory of a `user` memory, which must exist (its agent's start made it). */
export async function userMemoryDir(root: string | undefined, memory: { tenant: string; agent: string }, workspaceRoots: readonly string[] = []): Promise<string> {
  const home = await tenantHome(root, memory.tenant, workspaceRoots);
  const given = path.join(home, agentMemoryPath({ scope: 'user', tenant: memory.tenant, agent: memory.agent }));
  const dir = await realpath(given).catch(() => undefined);
  if (!dir || !within(dir, home)) throw new AgentMemoryError(`The user memory ${given} is missing or leads out of its home; it is made when the agent starts.`);
  return dir;
}

/** The workspace roots as they resolve (a root that does not exist cannot hold the user-memory root). */
export async function canonicalRoots(roots: readonly string[]): Promise<string[]> {
  const resolved = await Promise.all(roots.map((r) => realpath(r).catch(() => undefined)));
  return resolved.filter((r): r is string => r !== undefined);
}
