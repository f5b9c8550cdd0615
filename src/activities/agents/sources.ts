/**
 * Agent definitions from several directories with one precedence (seed 001: definitions come
 * from user and project directories, configuration and built-ins): directories are read in
 * the order given and a later one's agent replaces an earlier one's of the same name, so
 * `[user, project]` lets a project override a user's agent. The only built-in agent,
 * general-purpose, is not a file.
 */
import type { AgentDefinition, AgentLoadResult } from '../../shared/agents';
import { readAgentDirectory, withCheckedSkills } from './load';

/**
 * Reads each directory (in order; later wins by name) and checks skills against the merged
 * set. Overrides are not problems; `overridden` lists them for reports.
 *
 * @throws {AgentDirectoryError} when one of the directories cannot be listed.
 * @example
 * await loadAgentSources([`${home}/.forkflow/agents`, '.forkflow/agents']);
 */
export async function loadAgentSources(dirs: readonly string[]): Promise<AgentLoadResult & { overridden: string[] }> {
  const byName = new Map<string, AgentDefinition>();
  const problems: AgentLoadResult['problems'] = [];
  const overridden: string[] = [];
  for (const dir of dirs) {
    const one = await readAgentDirectory(dir);
    problems.push(...one.problems);
    for (const agent of one.agents) {
      const earlier = byName.get(agent.name);
      if (earlier) overridden.push(`${agent.name}: ${agent.sourceFile} replaces ${earlier.sourceFile}`);
      // Delete first: the map keeps the order in which names were last defined.
      byName.delete(agent.name);
      byName.set(agent.name, agent);
    }
  }
  return { ...withCheckedSkills({ agents: [...byName.values()], problems }), overridden };
}
