/**
 * Test kit for the agent-definition tests: a real temporary agents directory and a
 * shorthand for writing one markdown agent file into it.
 */
import { loadAgentDefinitions } from '../../../src/activities/agents';
import type { AgentDefinition, AgentLoadResult } from '../../../src/shared/agents/agents';
import { tempDir, type TempDir } from '../tools/kit';

export type { TempDir };

/** A fresh agents directory (remove it in afterEach). */
export function agentsDir(): TempDir {
  return tempDir('forkflow-agents-');
}

/** An agent file: the frontmatter lines between fences, then the body. */
export function agentFile(frontmatter: string, body = 'You are a careful test agent.'): string {
  return `---\n${frontmatter}\n---\n${body}\n`;
}

/** A minimal valid header plus extra lines. */
export function withBasics(extra: string, name = 'tester'): string {
  return agentFile(`name: ${name}\ndescription: Runs the tests\n${extra}`);
}

/**
 * Writes one file, loads the directory and returns its single agent (or undefined) with
 * the problems, so field tests read as "this line → this outcome".
 */
export async function loadOne(dir: TempDir, content: string): Promise<AgentLoadResult & { agent?: AgentDefinition }> {
  dir.file('agent.md', content);
  const result = await loadAgentDefinitions(dir.dir);
  expect(result.agents.length).toBeLessThanOrEqual(1);
  return { ...result, agent: result.agents[0] };
}
