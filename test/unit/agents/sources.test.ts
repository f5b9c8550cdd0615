/** Definitions from several directories (user, then project) and plugins: a later directory wins by name; skills resolve across them. */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { loadAgentSources, PluginError } from '../../../src/activities/agents';
import { agentMemorySchema, definitionMemory } from '../../../src/shared/agents/agent-memory';
import { agentDefinitionSchema } from '../../../src/shared/agents/agents';
import { agentFile, agentsDir, withBasics, type TempDir } from './kit';

let user: TempDir;
let project: TempDir;
beforeEach(() => {
  user = agentsDir();
  project = agentsDir();
});
afterEach(() => {
  user.remove();
  project.remove();
});

describe('loadAgentSources', () => {
  it("lets a later directory's agent replace an earlier one's of the same name, and says so", async () => {
    user.file('reviewer.md', withBasics('maxTurns: 3', 'reviewer'));
    user.file('helper.md', withBasics('', 'helper'));
    project.file('reviewer.md', withBasics('maxTurns: 9', 'reviewer'));
    const loaded = await loadAgentSources([user.dir, project.dir]);
    expect(loaded.agents.map((a) => [a.name, a.maxTurns, a.sourceFile])).toEqual([
      ['helper', undefined, path.join(user.dir, 'helper.md')],
      ['reviewer', 9, path.join(project.dir, 'reviewer.md')],
    ]);
    expect(loaded.overridden).toEqual([`reviewer: ${path.join(project.dir, 'reviewer.md')} replaces ${path.join(user.dir, 'reviewer.md')}`]);
    expect(loaded.problems).toEqual([]);
    // The other order gives the other winner.
    expect((await loadAgentSources([project.dir, user.dir])).agents.find((a) => a.name === 'reviewer')?.maxTurns).toBe(3);
  });

  it('resolves skills against every directory, and reports the ones none supplies', async () => {
    user.file('lint.md', agentFile('name: lint\ndescription: Lints\ncontext: fork', 'Run the linter.'));
    project.file('dev.md', withBasics('skills: [lint, missing]', 'dev'));
    const loaded = await loadAgentSources([user.dir, project.dir]);
    expect(loaded.agents.find((a) => a.name === 'dev')?.skills).toEqual(['lint']);
    expect(loaded.problems.map((p) => [p.field, p.outcome])).toEqual([['skills', 'ignored']]);
    expect(loaded.problems[0]!.problem).toContain('"missing"');
  });
});

describe('plugins (S1-26, S1-44): directories the operator names, their agents under the plugin\'s namespace', () => {
  const kit = (dir: TempDir, manifest?: unknown) => {
    if (manifest !== undefined) dir.file('.claude-plugin/plugin.json', JSON.stringify(manifest));
    dir.file('agents/reviewer.md', withBasics('skills: [lint, other-skill]\nmemory: project', 'reviewer'));
    dir.file('agents/lint.md', agentFile('name: lint\ndescription: Lints\ncontext: fork', 'Run the linter.'));
    return dir.dir;
  };

  it('names each agent and command <plugin>:<name>, namespaces skills of its own plugin, and keeps plain agents apart', async () => {
    project.file('reviewer.md', withBasics('', 'reviewer'));
    project.file('other-skill.md', agentFile('name: other-skill\ndescription: Other\ncontext: fork', 'Other.'));
    const loaded = await loadAgentSources([project.dir], { plugins: [kit(user, { name: 'review-kit', version: '1.0.0' })] });
    expect(loaded.agents.map((a) => a.name).sort()).toEqual(['other-skill', 'review-kit:lint', 'review-kit:reviewer', 'reviewer']);
    const pluginAgent = loaded.agents.find((a) => a.name === 'review-kit:reviewer')!;
    // Its own plugin's skill by its namespaced name; another directory's as written.
    expect(pluginAgent.skills).toEqual(['review-kit:lint', 'other-skill']);
    expect(pluginAgent.sourceFile).toBe(path.join(user.dir, 'agents', 'reviewer.md'));
    expect(loaded.problems).toEqual([]);
    expect(loaded.overridden).toEqual([]);
    // It travels in a start input, and its memory has a directory name with no ":".
    expect(agentDefinitionSchema.safeParse(pluginAgent).success).toBe(true);
    expect(definitionMemory(pluginAgent)).toEqual({ scope: 'project', agent: 'review-kit__reviewer' });
    expect(agentMemorySchema.safeParse(definitionMemory(pluginAgent)).success).toBe(true);
  });

  it("a file's own name cannot claim a namespace; a definition name has at most one", async () => {
    project.file('sneaky.md', withBasics('', 'review-kit:reviewer'));
    const loaded = await loadAgentSources([project.dir]);
    expect(loaded.agents).toEqual([]);
    expect(loaded.problems.map((p) => [p.field, p.outcome])).toEqual([['name', 'skipped']]);
    expect(agentDefinitionSchema.safeParse({ name: 'a:b:c', description: 'x', systemPrompt: '', sourceFile: 'x' }).success).toBe(false);
  });

  it('without a manifest the directory names the plugin; a bad manifest or name refuses the plugin, custom agent paths are reported', async () => {
    /** A plugin directory of this name inside `parent` (TempDir names are random, so never a plugin's name). */
    const inside = (parent: TempDir, name: string): TempDir => {
      const dir = path.join(parent.dir, name);
      mkdirSync(dir);
      return { dir, file: (rel, content) => parent.file(path.join(name, rel), content), remove: () => undefined };
    };
    expect((await loadAgentSources([], { plugins: [kit(inside(user, 'tools-kit'))] })).agents.map((a) => a.name).sort()).toEqual(['tools-kit:lint', 'tools-kit:reviewer']);
    await expect(loadAgentSources([], { plugins: [kit(inside(user, 'Tools_Kit'))] })).rejects.toThrow(PluginError);
    await expect(loadAgentSources([], { plugins: [kit(project, { name: 'Bad Name' })] })).rejects.toThrow(/plugin\.json: .*name/);
    const custom = await loadAgentSources([], { plugins: [kit(inside(user, 'custom'), { name: 'custom', agents: './elsewhere/' })] });
    expect(custom.problems.map((p) => [p.field, p.outcome])).toEqual([['agents', 'unsupported'], ['skills', 'ignored']]);
    // A plugin with no agents/ directory has no agents, and that is no problem.
    const empty = inside(project, 'hooks-only');
    empty.file('.claude-plugin/plugin.json', JSON.stringify({ name: 'hooks-only' }));
    expect(await loadAgentSources([], { plugins: [empty.dir] })).toMatchObject({ agents: [], problems: [] });
  });
});
