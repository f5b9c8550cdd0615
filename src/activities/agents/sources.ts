/**
 * Agent definitions from several directories with one precedence (seed 001: definitions come
 * from user and project directories, configuration and built-ins): directories are read in
 * the order given and a later one's agent replaces an earlier one's of the same name, so
 * `[user, project]` lets a project override a user's agent. Plugins come after them
 * (plugins.ts): their agents carry the plugin's namespace, so they replace only another
 * plugin's of the same name. The only built-in agent, general-purpose, is not a file.
 */
import type { AgentDefinition, AgentLoadResult } from '../../shared/agents/agents';
import { readAgentDirectory, withCheckedSkills } from './load';
import { readPluginAgents } from './plugins';

/**
 * Reads each directory (in order; later wins by name) and checks skills against the merged
 * set. Overrides are not problems; `overridden` lists them for reports.
 *
 * @throws {AgentDirectoryError} when one of the directories cannot be listed.
 * @throws {PluginError} when a plugin's manifest cannot be read or names it badly.
 * @example
 * await loadAgentSources([`${home}/.forkflow/agents`, '.forkflow/agents'], { plugins: ['/srv/forkflow/plugins/review-kit'] });
 */
export async function loadAgentSources(dirs: readonly string[], opts: { plugins?: readonly string[] } = {}): Promise<AgentLoadResult & { overridden: string[] }> {
  const byName = new Map<string, AgentDefinition>();
  const problems: AgentLoadResult['problems'] = [];
  const overridden: string[] = [];
  const sources = [...dirs.map((dir) => () => readAgentDirectory(dir)), ...(opts.plugins ?? []).map((dir) => () => readPluginAgents(dir))];
  for (const read of sources) {
    const one = await read();
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
