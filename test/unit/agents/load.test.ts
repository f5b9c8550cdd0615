/** The agent loader on real directories: valid files, skipped files, duplicates, directory errors. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  AgentDirectoryError,
  MAX_AGENT_FILE_BYTES,
  isAgentDirectoryError,
  loadAgentDefinitions,
} from '../../../src/activities/agents';
import { agentDefinitionSchema } from '../../../src/shared/agents/agents';
import { agentFile, agentsDir, loadOne, withBasics, type TempDir } from './kit';

let dir: TempDir;
beforeEach(() => {
  dir = agentsDir();
});
afterEach(() => dir.remove());

const FULL = agentFile(
  [
    'name: code-reviewer',
    'description: Review a change and report correctness risks',
    'tools:',
    '  - Read',
    '  - Grep',
    '  - mcp__github__*',
    'disallowedTools: [Write]',
    'model: claude-opus-5',
    'effort: xhigh',
    'permissionMode: plan',
    'maxTurns: 8',
    'memory: project',
    'background: true',
    'isolation: worktree',
    'color: purple',
    'initialPrompt: Start with git diff.',
    'skills: [review, testing]',
  ].join('\n'),
  '\nYou review code.\n\nBe brief.\n',
);

describe('loadAgentDefinitions: valid files', () => {
  it('loads a named agent with every field', async () => {
    dir.file('review.md', agentFile('name: review\ndescription: The review checklist\ncontext: fork', 'Check it.'));
    dir.file('testing.md', agentFile('name: testing\ndescription: The test checklist\ncontext: fork', 'Test it.'));
    dir.file('agent.md', FULL);
    const { agents: all, problems } = await loadAgentDefinitions(dir.dir);
    const agents = all.filter((a) => a.context !== 'fork');
    expect(problems).toEqual([]);
    expect(agents).toEqual([
      {
        name: 'code-reviewer',
        description: 'Review a change and report correctness risks',
        systemPrompt: 'You review code.\n\nBe brief.',
        sourceFile: path.join(dir.dir, 'agent.md'),
        tools: ['Read', 'Grep', 'mcp__github__*'],
        disallowedTools: ['Write'],
        model: 'claude-opus-5',
        effort: 'xhigh',
        permissionMode: 'plan',
        maxTurns: 8,
        memory: 'project',
        background: true,
        isolation: 'worktree',
        color: 'purple',
        initialPrompt: 'Start with git diff.',
        skills: ['review', 'testing'],
      },
    ]);
  });

  it('loads a context: fork skill with its allowed-tools', async () => {
    const { agent, problems } = await loadOne(
      dir,
      agentFile('name: audit-auth\ndescription: Audit the auth flow\ncontext: fork\nallowed-tools:\n  - Read\n  - Glob', 'Report only risks.'),
    );
    expect(problems).toEqual([]);
    expect(agent).toMatchObject({ name: 'audit-auth', context: 'fork', allowedTools: ['Read', 'Glob'], systemPrompt: 'Report only risks.' });
    expect(agent?.tools).toBeUndefined();
  });

  it('reads tools as a YAML list or a comma string alike, dropping blanks and repeats', async () => {
    const asList = await loadOne(dir, withBasics('tools:\n  - Read\n  - Grep\n  - Read'));
    const asString = await loadOne(dir, withBasics('tools: Read, Grep,Read ,'));
    expect(asList.agent?.tools).toEqual(['Read', 'Grep']);
    expect(asString.agent?.tools).toEqual(['Read', 'Grep']);
    expect([asList.problems, asString.problems]).toEqual([[], []]);
  });

  it('treats an empty tools list as "no tools", not "inherit"', async () => {
    expect((await loadOne(dir, withBasics('tools: []'))).agent?.tools).toEqual([]);
    expect((await loadOne(dir, withBasics('tools: ""'))).agent?.tools).toEqual([]);
  });

  it('accepts CRLF line endings, a byte-order mark and an empty body', async () => {
    const { agent, problems } = await loadOne(dir, '\uFEFF---\r\nname: win\r\ndescription: Made on Windows\r\nmaxTurns: 3\r\n---\r\n');
    expect(problems).toEqual([]);
    expect(agent).toMatchObject({ name: 'win', description: 'Made on Windows', maxTurns: 3, systemPrompt: '' });
  });

  it('reads an unquoted ": " in a one-line value as its author meant', async () => {
    const { agent, problems } = await loadOne(dir, agentFile("name: helper\ndescription: Use when: the user's tests fail\nmaxTurns: 4"));
    expect(problems).toEqual([]);
    expect(agent).toMatchObject({ description: "Use when: the user's tests fail", maxTurns: 4 });
  });

  it('returns agents in code-unit order of file name, as JSON-safe data that the shared schema accepts', async () => {
    dir.file('b.md', withBasics('', 'bee'));
    dir.file('a.md', withBasics('', 'ay'));
    dir.file('Z.md', withBasics('', 'zed'));
    const result = await loadAgentDefinitions(dir.dir);
    expect(result.agents.map((a) => a.name)).toEqual(['zed', 'ay', 'bee']);
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
    for (const agent of result.agents) expect(agentDefinitionSchema.parse(agent)).toEqual(agent);
  });
});

describe('loadAgentDefinitions: skipped files', () => {
  const cases: [string, string, RegExp][] = [
    ['no frontmatter', '# Just a heading\nname: x\n', /does not start with a frontmatter block/],
    ['an unclosed block', '---\nname: x\ndescription: y\n', /never closed/],
    ['empty frontmatter', '---\n---\nbody\n', /frontmatter is empty/],
    ['a list instead of fields', '---\n- name\n- description\n---\n', /not a list of field: value lines/],
    ['invalid YAML', '---\nname: x\ndescription: [unclosed\n---\n', /not valid YAML \(line 3: /],
    ['a repeated key', '---\nname: x\nname: y\ndescription: d\n---\n', /not valid YAML \(line 3: Map keys must be unique/],
  ];
  it.each(cases)('skips a file with %s and still loads the others', async (_label, content, problem) => {
    dir.file('bad.md', content);
    dir.file('good.md', withBasics(''));
    const { agents, problems } = await loadAgentDefinitions(dir.dir);
    expect(agents.map((a) => a.name)).toEqual(['tester']);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: path.join(dir.dir, 'bad.md'), outcome: 'skipped', problem: expect.stringMatching(problem) as string });
    expect(problems[0]?.fix).toMatch(/\S/);
  });

  it('skips a file without a name, saying which field and what to add', async () => {
    const { agents, problems } = await loadOne(dir, agentFile('description: Nameless'));
    expect(agents).toEqual([]);
    expect(problems).toEqual([expect.objectContaining({ field: 'name', outcome: 'skipped', problem: 'name is missing' })]);
  });

  it('skips a badly formed name and suggests a usable one', async () => {
    const { agents, problems } = await loadOne(dir, agentFile('name: Code Reviewer!\ndescription: Reviews'));
    expect(agents).toEqual([]);
    expect(problems).toEqual([
      expect.objectContaining({ field: 'name', outcome: 'skipped', problem: expect.stringContaining('"Code Reviewer!"') as string, fix: expect.stringContaining('"code-reviewer"') as string }),
    ]);
  });

  it('skips a file whose description is missing or blank, and reports both required fields when both are bad', async () => {
    const blank = await loadOne(dir, agentFile("name: quiet\ndescription: '   '"));
    expect(blank.agents).toEqual([]);
    expect(blank.problems).toEqual([expect.objectContaining({ field: 'description', outcome: 'skipped' })]);
    const both = await loadOne(dir, agentFile('color: red'));
    expect(both.problems.map((p) => p.field)).toEqual(['name', 'description']);
  });

  it('keeps the first of two files with the same name and reports the other', async () => {
    dir.file('b-second.md', withBasics('maxTurns: 2', 'dup'));
    dir.file('a-first.md', withBasics('maxTurns: 1', 'dup'));
    const { agents, problems } = await loadAgentDefinitions(dir.dir);
    expect(agents).toEqual([expect.objectContaining({ name: 'dup', maxTurns: 1 })]);
    expect(problems).toEqual([
      expect.objectContaining({
        file: path.join(dir.dir, 'b-second.md'),
        field: 'name',
        outcome: 'skipped',
        problem: `the name "dup" is already used by ${path.join(dir.dir, 'a-first.md')}`,
      }),
    ]);
  });

  it('reads only *.md files directly in the directory, not hidden ones', async () => {
    dir.file('notes.txt', withBasics('', 'txt'));
    dir.file('.draft.md', withBasics('', 'hidden'));
    dir.file('nested/deep.md', withBasics('', 'deep'));
    dir.file('top.md', withBasics('', 'top'));
    const { agents, problems } = await loadAgentDefinitions(dir.dir);
    expect(agents.map((a) => a.name)).toEqual(['top']);
    expect(problems).toEqual([]);
  });

  it('reports a directory named like an agent file and an oversized file', async () => {
    mkdirSync(path.join(dir.dir, 'folder.md'));
    dir.file('huge.md', withBasics('', 'huge') + 'x'.repeat(MAX_AGENT_FILE_BYTES));
    const { agents, problems } = await loadAgentDefinitions(dir.dir);
    expect(agents).toEqual([]);
    expect(problems).toEqual([
      expect.objectContaining({ file: path.join(dir.dir, 'folder.md'), outcome: 'skipped', problem: 'it is not a regular file' }),
      expect.objectContaining({ file: path.join(dir.dir, 'huge.md'), outcome: 'skipped', problem: expect.stringContaining('byte limit') as string }),
    ]);
  });
});

describe('loadAgentDefinitions: the directory itself', () => {
  it('throws AgentDirectoryError when the directory does not exist', async () => {
    const missing = path.join(dir.dir, 'nope');
    const err: unknown = await loadAgentDefinitions(missing).catch((e: unknown) => e);
    expect(isAgentDirectoryError(err)).toBe(true);
    expect(err).toMatchObject({ name: 'AgentDirectoryError', code: 'ENOENT', dir: missing });
    expect((err as Error).message).toContain(missing);
  });

  it('throws AgentDirectoryError when the path is a file', async () => {
    const file = path.join(dir.dir, 'plain');
    writeFileSync(file, 'x');
    await expect(loadAgentDefinitions(file)).rejects.toBeInstanceOf(AgentDirectoryError);
    await expect(loadAgentDefinitions(file)).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('returns an empty result for an empty directory', async () => {
    await expect(loadAgentDefinitions(dir.dir)).resolves.toEqual({ agents: [], problems: [] });
  });
});
