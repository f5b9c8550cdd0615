/**
 * Loads named agent definitions from a directory of markdown files. Only `*.md` files
 * directly in the directory are read (no sub-directories; names starting with "." are
 * skipped as editor/lock files). Bad files become problems, never exceptions.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { compareCodeUnits, type AgentDefinition, type AgentLoadResult, type AgentProblem } from '../../shared/agents/agents';
import { resolveSkill } from '../../shared/agents/agent-skills';
import { AgentDirectoryError } from './errors';
import { buildDefinition } from './fields';
import { splitFrontmatter } from './frontmatter';

/** Larger files are refused: a system prompt travels in every workflow input that uses it. */
export const MAX_AGENT_FILE_BYTES = 256 * 1024;

/**
 * Reads every `*.md` file in `dir` (in code-unit order of file name), validates it and
 * returns the agents with a list of problems. A file without frontmatter or without a
 * valid `name`/`description` is skipped; an invalid optional field is dropped; when two
 * files use the same name, the first file wins.
 *
 * @throws {AgentDirectoryError} only when `dir` itself cannot be listed.
 * @example
 * const { agents, problems } = await loadAgentDefinitions('.forkflow/agents');
 */
export async function loadAgentDefinitions(dir: string): Promise<AgentLoadResult> {
  return withCheckedSkills(await readAgentDirectory(dir));
}

/** One directory's agents and problems, skills not yet checked (sources.ts merges several first). */
export async function readAgentDirectory(dir: string): Promise<AgentLoadResult> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    throw new AgentDirectoryError(dir, err);
  }
  const files = entries.filter((f) => f.endsWith('.md') && !f.startsWith('.')).sort(compareCodeUnits);

  const agents: AgentDefinition[] = [];
  const problems: AgentProblem[] = [];
  const firstFileOf = new Map<string, string>();
  for (const fileName of files) {
    const file = path.join(dir, fileName);
    const { definition, problems: found } = await loadFile(file);
    problems.push(...found);
    if (!definition) continue;
    const first = firstFileOf.get(definition.name);
    if (first !== undefined) {
      problems.push({
        file,
        field: 'name',
        outcome: 'skipped',
        problem: `the name "${definition.name}" is already used by ${first}`,
        fix: 'Rename one of the two agents; until then the file that sorts first is used.',
      });
      continue;
    }
    firstFileOf.set(definition.name, file);
    agents.push(definition);
  }
  return { agents, problems };
}

/** Every named agent keeps only the skills the loaded commands can supply; the rest are reported. */
export function withCheckedSkills(result: AgentLoadResult): AgentLoadResult {
  const problems = [...result.problems];
  return { agents: result.agents.map((a) => withResolvableSkills(a, result.agents, problems)), problems };
}

/**
 * A named agent keeps only the skills it can preload (a `context: fork` command loaded from
 * the same directory); every other name is reported, not silently dropped.
 */
function withResolvableSkills(agent: AgentDefinition, agents: AgentDefinition[], problems: AgentProblem[]): AgentDefinition {
  if (!agent.skills) return agent;
  const missing = agent.skills.filter((s) => !resolveSkill(s, agents));
  for (const skill of missing) {
    problems.push({
      file: agent.sourceFile,
      field: 'skills',
      outcome: 'ignored',
      problem: `skill "${skill}" is not a context: fork command in this directory, so it cannot be preloaded`,
      fix: `Add a ${skill}.md command with context: fork to the directory, or delete the entry.`,
    });
  }
  if (missing.length === 0) return agent;
  const { skills: _all, ...rest } = agent;
  const kept = agent.skills.filter((s) => !missing.includes(s));
  return kept.length ? { ...rest, skills: kept } : rest;
}

async function loadFile(file: string): Promise<{ definition?: AgentDefinition; problems: AgentProblem[] }> {
  const skipped = (problem: string, fix: string): { problems: AgentProblem[] } => ({
    problems: [{ file, outcome: 'skipped', problem, fix }],
  });
  let text: string;
  try {
    const info = await stat(file);
    if (!info.isFile()) return skipped('it is not a regular file', 'Remove it or rename it so it does not end in .md.');
    if (info.size > MAX_AGENT_FILE_BYTES) {
      return skipped(`it is ${info.size} bytes, more than the ${MAX_AGENT_FILE_BYTES}-byte limit`, 'Shorten the system prompt.');
    }
    text = await readFile(file, 'utf8');
  } catch (err) {
    // A file can vanish or be unreadable between listing and reading; that is one bad file.
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return skipped(`it could not be read (${code})`, 'Check that the file exists and is readable.');
  }
  const split = splitFrontmatter(text);
  if (!split.ok) return skipped(split.problem, split.fix);
  return buildDefinition(file, split.data, split.body);
}
