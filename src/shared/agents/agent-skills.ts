/**
 * A named agent's `skills:` preload (seed 001, runAgent extension points): each listed skill,
 * a `context: fork` command among the same definitions, has its instructions put into the
 * agent's system prompt before its first turn. Pure and workflow-safe: the loader uses it to
 * report names that resolve to nothing, the workflow to build the child's prompt.
 */
import type { AgentDefinition } from './agents';

/**
 * The command a skill name means: the one with exactly that name, else (a plugin-style
 * `namespace:name`) the one named by the part after the last `:`.
 *
 * @example resolveSkill('tools:review', defs)?.name // 'review'
 */
export function resolveSkill(name: string, agents: readonly AgentDefinition[]): AgentDefinition | undefined {
  const commands = agents.filter((a) => a.context === 'fork');
  const exact = commands.find((a) => a.name === name);
  if (exact) return exact;
  const suffix = name.slice(name.lastIndexOf(':') + 1);
  return suffix !== name ? commands.find((a) => a.name === suffix) : undefined;
}

/** One preloaded skill as the agent reads it. */
function skillSection(skill: AgentDefinition): string {
  const body = skill.systemPrompt.trim() || '(no instructions)';
  return `<preloaded-skill name="${skill.name}">\n${skill.description.trim()}\n\n${body}\n</preloaded-skill>`;
}

/**
 * The agent's system prompt with its skills appended, each once, in the order listed; names
 * that resolve to nothing are left out (the loader reported them). Unchanged without skills.
 */
export function withPreloadedSkills(system: string, definition: Pick<AgentDefinition, 'skills'>, agents: readonly AgentDefinition[]): string {
  const seen = new Set<string>();
  const sections: string[] = [];
  for (const name of definition.skills ?? []) {
    const skill = resolveSkill(name, agents);
    if (!skill || seen.has(skill.name)) continue;
    seen.add(skill.name);
    sections.push(skillSection(skill));
  }
  return sections.length ? [system, ...sections].filter(Boolean).join('\n\n') : system;
}
