/**
 * Agents from Claude Code plugins (seed 001: definitions come from user and project
 * directories, configuration, plugins and built-ins; a plugin's agents carry its namespace).
 * A plugin is a directory the operator names (`forkflow agent --plugin-dir`, `loadAgentSources`'
 * `plugins`), never one found in a workspace a fork can write: its `.claude-plugin/plugin.json`
 * names it (else the directory's name does), and its `agents/*.md` load as any agents
 * directory's files do, each agent and each `context: fork` command named `<plugin>:<name>`.
 * An agent's `skills:` entry naming a command of its own plugin is namespaced the same way.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { agentNameSchema, type AgentDefinition, type AgentLoadResult, type AgentProblem } from '../../shared/agents/agents';
import { plainIssues } from '../../shared/base/plain-issues';
import { AgentDirectoryError } from './errors';
import { readAgentDirectory } from './load';

/** Where Claude Code keeps a plugin's manifest, relative to the plugin's root. */
export const PLUGIN_MANIFEST = path.join('.claude-plugin', 'plugin.json');
/** The most a manifest may be: it is a few lines of JSON. */
const MAX_MANIFEST_BYTES = 64 * 1024;

/** The manifest fields read here; the rest (version, author, commands, hooks, …) are other parts of a plugin. */
const manifestSchema = z.looseObject({
  name: agentNameSchema,
  agents: z.unknown().optional(),
});

/** Why a plugin as a whole cannot be used (its manifest is unreadable or its name is not plain). */
export class PluginError extends Error {
  override name = 'PluginError';
  constructor(readonly dir: string, message: string) {
    super(`Cannot use the plugin ${dir}: ${message}`);
  }
}

/** The plugin's name and the manifest's problems worth reporting (fields read elsewhere by Claude Code). */
async function manifestOf(dir: string): Promise<{ name: string; problems: AgentProblem[] }> {
  const file = path.join(dir, PLUGIN_MANIFEST);
  let text: string;
  try {
    const buffer = await readFile(file);
    if (buffer.length > MAX_MANIFEST_BYTES) throw new PluginError(dir, `${file} is ${buffer.length} bytes, more than ${MAX_MANIFEST_BYTES}`);
    text = buffer.toString('utf8');
  } catch (err) {
    if (err instanceof PluginError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new PluginError(dir, `${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    // No manifest: the directory's name is the plugin's, as Claude Code reads it.
    const name = agentNameSchema.safeParse(path.basename(dir));
    if (!name.success) throw new PluginError(dir, `it has no ${PLUGIN_MANIFEST} and its directory name "${path.basename(dir)}" is not a plain name (lower-case letters, digits, "-"); add a manifest with "name"`);
    return { name: name.data, problems: [] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new PluginError(dir, `${file} is not JSON`);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) throw new PluginError(dir, `${file}: ${plainIssues(parsed.error).join('; ')} (the name must be lower-case letters, digits and "-")`);
  const problems: AgentProblem[] = parsed.data.agents === undefined ? [] : [{
    file,
    field: 'agents',
    outcome: 'unsupported',
    problem: 'custom agent paths are not read: only the plugin\'s agents/ directory is',
    fix: 'Move the agent files into agents/ beside .claude-plugin/, or name their directory with --agents-dir.',
  }];
  return { name: parsed.data.name, problems };
}

/** A definition of plugin `plugin` under its namespaced name, its own plugin's skills namespaced too. */
function namespaced(plugin: string, agent: AgentDefinition, own: ReadonlySet<string>): AgentDefinition {
  const skills = agent.skills?.map((s) => (own.has(s) ? `${plugin}:${s}` : s));
  return { ...agent, name: `${plugin}:${agent.name}`, ...(skills ? { skills } : {}) };
}

/**
 * The agents and commands of one plugin, named `<plugin>:<name>`, with the problems of its
 * files. A plugin without an `agents/` directory has none (it may hold only other parts).
 *
 * @throws {PluginError} when the plugin's manifest is unreadable or names it badly.
 * @throws {AgentDirectoryError} when its agents/ directory exists but cannot be listed.
 * @example
 * const { plugin, agents } = await readPluginAgents('/srv/forkflow/plugins/review-kit'); // agents: review-kit:reviewer, …
 */
export async function readPluginAgents(dir: string): Promise<AgentLoadResult & { plugin: string }> {
  const manifest = await manifestOf(dir);
  const agentsDir = path.join(dir, 'agents');
  let loaded: AgentLoadResult;
  try {
    loaded = await readAgentDirectory(agentsDir);
  } catch (err) {
    if (err instanceof AgentDirectoryError && err.code === 'ENOENT') return { plugin: manifest.name, agents: [], problems: manifest.problems };
    throw err;
  }
  const own = new Set(loaded.agents.filter((a) => a.context === 'fork').map((a) => a.name));
  return { plugin: manifest.name, agents: loaded.agents.map((a) => namespaced(manifest.name, a, own)), problems: [...manifest.problems, ...loaded.problems] };
}
