/** Skills preloaded into a named agent's prompt (src/shared/agents/agent-skills.ts) and TaskStop's legacy `shell_id`. */
import { resolveSkill, withPreloadedSkills } from '../../../src/shared/agents/agent-skills';
import { taskStopCallInput } from '../../../src/shared/tree/agent-tools';
import type { AgentDefinition } from '../../../src/shared/agents/agents';

const command = (name: string, body: string): AgentDefinition => ({ name, description: `The ${name} command.`, context: 'fork', systemPrompt: body, sourceFile: `${name}.md` });
const named: AgentDefinition = { name: 'review', description: 'A named agent, not a skill.', systemPrompt: 'x', sourceFile: 'review.md' };
const defs = [command('lint', 'Run the linter.'), command('notes', ''), named];

describe('resolveSkill', () => {
  it('finds a context: fork command by name or by the part after a plugin namespace, never a named agent', () => {
    expect(resolveSkill('lint', defs)?.name).toBe('lint');
    expect(resolveSkill('team:tools:lint', defs)?.name).toBe('lint');
    expect(resolveSkill('review', defs)).toBeUndefined();
    expect(resolveSkill('lint:', defs)).toBeUndefined();
  });
});

describe('withPreloadedSkills', () => {
  it('appends each skill once, in order, and leaves a prompt without skills unchanged', () => {
    const prompt = withPreloadedSkills('Base.', { skills: ['notes', 'x:lint', 'lint', 'missing'] }, defs);
    expect(prompt).toBe(
      'Base.\n\n<preloaded-skill name="notes">\nThe notes command.\n\n(no instructions)\n</preloaded-skill>\n\n<preloaded-skill name="lint">\nThe lint command.\n\nRun the linter.\n</preloaded-skill>',
    );
    expect(withPreloadedSkills('Base.', {}, defs)).toBe('Base.');
    expect(withPreloadedSkills('Base.', { skills: ['missing'] }, defs)).toBe('Base.');
    expect(withPreloadedSkills('', { skills: ['lint'] }, defs).startsWith('<preloaded-skill name="lint">')).toBe(true);
  });
});

describe('taskStopCallInput', () => {
  it('takes task_id or the legacy shell_id, not both and not neither', () => {
    expect(taskStopCallInput.parse({ task_id: 'a' })).toEqual({ task_id: 'a' });
    expect(taskStopCallInput.parse({ shell_id: 'b' })).toEqual({ task_id: 'b' });
    expect(taskStopCallInput.safeParse({ task_id: 'a', shell_id: 'b' }).success).toBe(false);
    expect(taskStopCallInput.safeParse({}).success).toBe(false);
    expect(taskStopCallInput.safeParse({ shell_id: 'b', extra: 1 }).success).toBe(false);
  });
});
