/**
 * Field-by-field validation: a bad optional field is reported and left out while the agent
 * still loads; tool fields that cannot be read fail closed.
 */
import { AGENT_COLORS, EFFORT_LEVELS, ISOLATION_MODES, MEMORY_SCOPES, PERMISSION_MODES } from '../../../src/shared/agents/agents';
import { agentToolsFor } from '../../../src/shared/tools/agent-access';
import { loadAgentDefinitions } from '../../../src/activities/agents';
import { agentFile, agentsDir, loadOne, withBasics, type TempDir } from './kit';

let dir: TempDir;
beforeEach(() => {
  dir = agentsDir();
});
afterEach(() => dir.remove());

const PARENT_TOOLS = ['Read', 'Grep', 'Glob', 'Bash', 'Write', 'Agent'];

describe('each optional field: a bad value is reported and dropped, the agent still loads', () => {
  // [frontmatter line, field as written, key on the definition, text the problem must quote]
  const cases: [string, string, string, string][] = [
    ['model: two words', 'model', 'model', '"two words"'],
    ['model: 42', 'model', 'model', '42'],
    ['provider: two words', 'provider', 'provider', '"two words"'],
    ['provider: -dash', 'provider', 'provider', '"-dash"'],
    ['effort: extreme', 'effort', 'effort', '"extreme"'],
    ['permissionMode: yolo', 'permissionMode', 'permissionMode', '"yolo"'],
    ['maxTurns: 0', 'maxTurns', 'maxTurns', '0'],
    ['maxTurns: 2.5', 'maxTurns', 'maxTurns', '2.5'],
    ['maxTurns: "8"', 'maxTurns', 'maxTurns', '"8"'],
    ['memory: global', 'memory', 'memory', '"global"'],
    ['background: yes', 'background', 'background', '"yes"'],
    ['isolation: container', 'isolation', 'isolation', '"container"'],
    ['color: magenta', 'color', 'color', '"magenta"'],
    ['delivery: overnight', 'delivery', 'delivery', '"overnight"'],
    ['initialPrompt: ""', 'initialPrompt', 'initialPrompt', '""'],
    ['context: inline', 'context', 'context', '"inline"'],
    ['contextManagement: squeeze', 'contextManagement', 'contextManagement', '"squeeze"'],
    ['contextManagement: {strategy: compact, threshold: 1.5}', 'contextManagement', 'contextManagement', '"threshold":1.5'],
  ];
  it.each(cases)('%s', async (line, field, key, quoted) => {
    // A valid neighbour shows that only the bad field was dropped.
    const neighbour = field === 'maxTurns' ? 'color: red' : 'maxTurns: 5';
    const { agent, problems } = await loadOne(dir, withBasics(`${line}\n${neighbour}`));
    expect(agent).toBeDefined();
    expect(agent).not.toHaveProperty(key);
    expect(agent).toMatchObject(field === 'maxTurns' ? { color: 'red' } : { maxTurns: 5 });
    expect(problems).toEqual([{ file: expect.any(String) as string, field, outcome: 'ignored', problem: expect.stringContaining(quoted) as string, fix: expect.stringContaining('delete the line') as string }]);
  });

  it('keeps a provider name (checked against the tree when it starts and at launch)', async () => {
    const { agent, problems } = await loadOne(dir, withBasics('provider: openai\nmodel: gpt-4.1-mini'));
    expect(problems).toEqual([]);
    expect(agent).toMatchObject({ provider: 'openai', model: 'gpt-4.1-mini' });
  });

  it('says what a valid value looks like', async () => {
    const { problems } = await loadOne(dir, withBasics('effort: extreme'));
    expect(problems[0]?.problem).toBe('effort is "extreme"; expected one of low, medium, high, xhigh, max');
    expect(problems[0]?.fix).toBe('Use one of low, medium, high, xhigh, max, or delete the line (then the default effort applies).');
  });

  it('keeps every documented value of each enumerated field it honours', async () => {
    const enums: [string, readonly string[]][] = [
      ['permissionMode', PERMISSION_MODES],
      ['isolation', ISOLATION_MODES],
      ['color', AGENT_COLORS],
    ];
    for (const [field, values] of enums) {
      for (const value of values) {
        const { agent, problems } = await loadOne(dir, withBasics(`${field}: ${value}`));
        expect({ field, problems }).toEqual({ field, problems: [] });
        expect(agent).toHaveProperty(field, value);
      }
    }
  });

  it('keeps every effort level: effort is honoured (output_config.effort)', async () => {
    for (const value of EFFORT_LEVELS) {
      const { agent, problems } = await loadOne(dir, withBasics(`effort: ${value}`));
      expect({ value, problems }).toEqual({ value, problems: [] });
      expect(agent).toHaveProperty('effort', value);
    }
  });

  it('keeps memory: user, project and local (user: in the home of the tree\'s tenant)', async () => {
    for (const value of MEMORY_SCOPES) {
      const { agent, problems } = await loadOne(dir, withBasics(`memory: ${value}`));
      expect({ value, problems }).toEqual({ value, problems: [] });
      expect(agent).toHaveProperty('memory', value);
    }
  });

  it('treats a blank value as an absent field', async () => {
    const { agent, problems } = await loadOne(dir, withBasics('model:\ntools:\nmaxTurns:'));
    expect(problems).toEqual([]);
    expect(agent).not.toHaveProperty('model');
    expect(agent).not.toHaveProperty('tools');
    expect(agent).not.toHaveProperty('maxTurns');
  });
});

describe('tool fields', () => {
  it('gives the agent no tools when tools cannot be read at all', async () => {
    const { agent, problems } = await loadOne(dir, withBasics('tools: 5'));
    expect(agent?.tools).toEqual([]);
    expect(agentToolsFor(agent!, PARENT_TOOLS)).toEqual([]);
    expect(problems).toEqual([expect.objectContaining({ field: 'tools', outcome: 'restricted', fix: expect.stringContaining('no tools') as string })]);
  });

  it('gives the agent no tools when disallowedTools or allowed-tools cannot be read', async () => {
    const deny = await loadOne(dir, withBasics('disallowedTools: {Bash: true}'));
    expect(deny.agent?.disallowedTools).toEqual(['*']);
    expect(agentToolsFor(deny.agent!, PARENT_TOOLS)).toEqual([]);
    expect(deny.problems).toEqual([expect.objectContaining({ field: 'disallowedTools', outcome: 'restricted' })]);

    const allow = await loadOne(dir, withBasics('context: fork\nallowed-tools: true'));
    expect(allow.agent?.allowedTools).toEqual([]);
    expect(allow.problems).toEqual([expect.objectContaining({ field: 'allowed-tools', outcome: 'restricted' })]);
  });

  it('does not allow a tool that is allowed only for some arguments', async () => {
    const { agent, problems } = await loadOne(dir, withBasics('tools: Read, Bash(git diff:*)'));
    expect(agent?.tools).toEqual(['Read']);
    expect(problems).toEqual([expect.objectContaining({ field: 'tools', outcome: 'ignored', problem: expect.stringContaining('so Bash is not allowed') as string })]);
  });

  it('denies a whole tool that is denied only for some arguments', async () => {
    const { agent, problems } = await loadOne(dir, withBasics('disallowedTools: [Write, "Bash(rm -rf *)"]'));
    expect(agent?.disallowedTools).toEqual(['Write', 'Bash']);
    expect(agentToolsFor(agent!, PARENT_TOOLS)).toEqual(['Read', 'Grep', 'Glob', 'Agent']);
    expect(problems).toEqual([expect.objectContaining({ field: 'disallowedTools', outcome: 'restricted', problem: expect.stringContaining('all of Bash is denied') as string })]);
  });

  it('drops entries that are not tool names and keeps the rest, wildcards included', async () => {
    const { agent, problems } = await loadOne(dir, withBasics('tools: [Read, "Web Fetch", 42, "*", "mcp__github__*"]'));
    expect(agent?.tools).toEqual(['Read', '*', 'mcp__github__*']);
    expect(problems.map((p) => [p.field, p.outcome, p.problem.slice(0, 12)])).toEqual([
      ['tools', 'ignored', '"Web Fetch" '],
      ['tools', 'ignored', '42 in tools '],
    ]);
  });

  it('reads skills as a list or comma string, drops bad entries and ignores an unreadable value', async () => {
    // Skills are context: fork commands of the same directory; names that resolve to none are reported (load.test.ts).
    dir.file('review.md', agentFile('name: review\ndescription: Reviews\ncontext: fork'));
    dir.file('lint.md', agentFile('name: lint\ndescription: Lints\ncontext: fork'));
    const named = (r: { agents: { name: string; skills?: string[] }[] }) => r.agents.find((a) => a.name === 'tester');
    dir.file('agent.md', withBasics('skills: review, plugin:lint'));
    expect(named(await loadAgentDefinitions(dir.dir))?.skills).toEqual(['review', 'plugin:lint']);
    dir.file('agent.md', withBasics('skills: [review, "two words"]'));
    const bad = await loadAgentDefinitions(dir.dir);
    expect(named(bad)?.skills).toEqual(['review']);
    expect(bad.problems).toEqual([expect.objectContaining({ field: 'skills', outcome: 'ignored' })]);
    dir.file('agent.md', withBasics('skills: 3'));
    const unreadable = await loadAgentDefinitions(dir.dir);
    expect(named(unreadable)).not.toHaveProperty('skills');
    expect(unreadable.problems).toEqual([expect.objectContaining({ field: 'skills', outcome: 'ignored' })]);
  });
});

describe('context: fork and other fields', () => {
  it('drops a model on a fork command, since a fork runs on its caller model', async () => {
    const { agent, problems } = await loadOne(dir, agentFile('name: f\ndescription: d\ncontext: fork\nmodel: claude-opus-5'));
    expect(agent).toMatchObject({ context: 'fork' });
    expect(agent).not.toHaveProperty('model');
    expect(problems).toEqual([expect.objectContaining({ field: 'model', outcome: 'ignored', problem: expect.stringContaining("caller's model") as string })]);
  });

  it('reads delivery', async () => {
    const { agent, problems } = await loadOne(dir, withBasics('delivery: batch'));
    expect(problems).toEqual([]);
    expect(agent?.delivery).toBe('batch');
  });

  it('reads contextManagement as a shorthand or a map', async () => {
    const short = await loadOne(dir, withBasics('contextManagement: provider'));
    expect(short.problems).toEqual([]);
    expect(short.agent?.contextManagement).toBe('provider');
    dir.remove();
    dir = agentsDir();
    const map = await loadOne(dir, withBasics('contextManagement:\n  strategy: clear-tool-results\n  by: forkflow\n  keepToolUses: 5'));
    expect(map.problems).toEqual([]);
    expect(map.agent?.contextManagement).toEqual({ strategy: 'clear-tool-results', by: 'forkflow', keepToolUses: 5 });
  });

  it('keeps model: inherit on a fork command', async () => {
    const { agent, problems } = await loadOne(dir, agentFile('name: f\ndescription: d\ncontext: fork\nmodel: inherit'));
    expect(problems).toEqual([]);
    expect(agent?.model).toBe('inherit');
  });

  it('reports unknown fields, suggesting the field that was probably meant', async () => {
    const { agent, problems } = await loadOne(dir, withBasics('maxturns: 3\nallowed_tools: Read\nfavourite: blue\nmcpservers: {}'));
    expect(agent).not.toHaveProperty('maxTurns');
    expect(problems.map((p) => [p.field, p.outcome, p.fix.slice(0, 30)])).toEqual([
      ['maxturns', 'ignored', 'Rename it to maxTurns (fields '],
      ['allowed_tools', 'ignored', 'Rename it to allowed-tools (fi'],
      ['favourite', 'ignored', 'Delete it or correct the spell'],
      ['mcpservers', 'ignored', 'Rename it to mcpServers (field'],
    ]);
  });

  it('is not confused by field names that exist on every object', async () => {
    const { agent, problems } = await loadOne(dir, withBasics('constructor: x\ntoString: y\n__proto__: {maxTurns: 3}'));
    expect(agent?.name).toBe('tester');
    expect(agent).not.toHaveProperty('maxTurns');
    expect(problems.map((p) => p.field)).toEqual(['constructor', 'toString', '__proto__']);
  });
});
