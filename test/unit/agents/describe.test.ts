/** The Agent tool's list of named agents: exact, order-independent bytes for the prompt cache. */
import { describeAgentsForTool, type AgentDefinition } from '../../../src/shared/agents/agents';

const agent = (name: string, description: string, extra: Partial<AgentDefinition> = {}): AgentDefinition => ({
  name,
  description,
  systemPrompt: `You are ${name}.`,
  sourceFile: `/agents/${name}.md`,
  ...extra,
});

const AGENTS = [
  agent('test-runner', 'Runs the test suite\n  and reports   failures.', { disallowedTools: ['Write'] }),
  agent('code-reviewer', 'Reviews a change for correctness risks.', { tools: ['Read', 'Grep'], model: 'claude-opus-5' }),
  agent('audit-auth', 'A slash command, not a subagent type.', { context: 'fork', allowedTools: ['Read'] }),
  agent('docs', 'Writes documentation.'),
];
const ALLOWLIST = { openai: ['gpt-6', 'gpt-6-mini'], anthropic: ['claude-sonnet-5-5', 'claude-opus-5', 'claude-sonnet-5-5'], empty: [] };

const EXPECTED = [
  'Named agents (pass the name as subagent_type):',
  '- code-reviewer: Reviews a change for correctness risks. (tools: Read, Grep)',
  '- docs: Writes documentation. (tools: all)',
  '- test-runner: Runs the test suite and reports failures. (tools: all except Write)',
  '',
  'Models you may pass as model, by provider:',
  '- anthropic: claude-opus-5, claude-sonnet-5-5',
  '- openai: gpt-6, gpt-6-mini',
].join('\n');

describe('describeAgentsForTool', () => {
  it('lists named agents by name with one-line descriptions and the models per provider', () => {
    expect(describeAgentsForTool(AGENTS, { modelAllowlist: ALLOWLIST })).toBe(EXPECTED);
  });

  it('gives the same bytes whatever the order of agents, providers and models', () => {
    const shuffled = [AGENTS[3]!, AGENTS[0]!, AGENTS[2]!, AGENTS[1]!];
    const allowlist = { empty: [], openai: ['gpt-6-mini', 'gpt-6'], anthropic: ['claude-sonnet-5-5', 'claude-opus-5'] };
    expect(describeAgentsForTool(shuffled, { modelAllowlist: allowlist })).toBe(EXPECTED);
  });

  it('sorts by code unit, not by locale, so every machine gives the same bytes', () => {
    const text = describeAgentsForTool([], { modelAllowlist: { local: ['b-model', 'B-model', 'a-model'], Vendor: ['x'] } });
    expect(text.split('\n').slice(-2)).toEqual(['- Vendor: x', '- local: B-model, a-model, b-model']);
  });

  it('keeps the first of two agents with the same name', () => {
    const text = describeAgentsForTool([agent('dup', 'first'), agent('dup', 'second')]);
    expect(text).toBe('Named agents (pass the name as subagent_type):\n- dup: first (tools: all)');
  });

  it('says when there are no named agents, and leaves the model section out without an allowlist', () => {
    expect(describeAgentsForTool([])).toBe('No named agents are configured; leave subagent_type out.');
    expect(describeAgentsForTool([AGENTS[2]!], { modelAllowlist: { anthropic: [] } })).toBe('No named agents are configured; leave subagent_type out.');
  });
});
