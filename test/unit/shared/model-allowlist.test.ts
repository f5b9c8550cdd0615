/** Per-provider model allowlists: the list of the tree's provider decides, never a flattened union. */
import { skillToolInput, subAgentToolDefinitions } from '../../../src/shared/tree/agent-tools';
import { modelAllowlistSchema, modelRefusal } from '../../../src/shared/providers/model-allowlist';
import { subAgentsSchema } from '../../../src/shared/tree/tree-input';
import { builtinModelAllowlist, FIRST_ALLOWED, spawnDefaultModel } from '../../../src/shared/tree/spawn-defaults';
import { ANTHROPIC_MODEL_ALIASES } from '../../../src/shared/providers/agent-provider';

const allowlist = { anthropic: ['claude-haiku-4-5', 'claude-sonnet-5-5'], bedrock: ['claude-opus-4-8'] };

describe('modelRefusal', () => {
  it('allows what the tree’s provider lists, and anything without an allowlist', () => {
    expect(modelRefusal({ allowlist, provider: 'anthropic', model: 'claude-haiku-4-5', source: { kind: 'call' } })).toBeUndefined();
    expect(modelRefusal({ allowlist: undefined, provider: 'anthropic', model: 'anything', source: { kind: 'call' } })).toBeUndefined();
  });

  it('refuses a model listed only for another provider, naming both', () => {
    const why = modelRefusal({ allowlist, provider: 'anthropic', model: 'claude-opus-4-8', source: { kind: 'call' } });
    expect(why).toBe(
      'Model "claude-opus-4-8" is not allowed here. It is listed for bedrock, not for anthropic, where this agent tree runs. Allowed on anthropic: claude-haiku-4-5, claude-sonnet-5-5. Pass one of those as model, or omit model.',
    );
    // The same model is fine where it is listed.
    expect(modelRefusal({ allowlist, provider: 'bedrock', model: 'claude-opus-4-8', source: { kind: 'call' } })).toBeUndefined();
  });

  it('says where the model came from: frontmatter, skill, inheritance', () => {
    expect(modelRefusal({ allowlist, provider: 'anthropic', model: 'x', source: { kind: 'definition', agent: 'reviewer' } })).toMatch(/^Agent type "reviewer" is configured with model "x", which is not allowed here\./);
    expect(modelRefusal({ allowlist, provider: 'anthropic', model: 'x', source: { kind: 'skill', skill: 'audit' } })).toMatch(/^Skill "audit" is configured with model "x"/);
    expect(modelRefusal({ allowlist, provider: 'vertex', model: 'claude-haiku-4-5', source: { kind: 'inherited' } })).toContain('No model is allowed on vertex.');
  });
});

describe('allowlist and provider validation', () => {
  it('accepts provider-keyed lists and refuses malformed providers or model ids', () => {
    expect(modelAllowlistSchema.safeParse(allowlist).success).toBe(true);
    expect(modelAllowlistSchema.safeParse({ 'has space': ['m'] }).success).toBe(false);
    expect(modelAllowlistSchema.safeParse({ anthropic: ['two words'] }).success).toBe(false);
    expect(modelAllowlistSchema.safeParse({ anthropic: 'claude-haiku-4-5' }).success).toBe(false);
    expect(subAgentsSchema.parse({}).provider).toBe('anthropic');
    expect(subAgentsSchema.safeParse({ provider: '../x' }).success).toBe(false);
  });
});

describe("seed 002's spawn defaults (S2-27, S2-28, S2-37)", () => {
  const catalogue = { anthropic: { models: ['claude-sonnet-5-5', 'claude-haiku-4-5'], aliases: {} }, openai: { models: ['gpt-4.1-mini'], aliases: {} } };

  it('"builtin" is the Anthropic ids of the alias table; any other string is refused', () => {
    expect(subAgentsSchema.parse({ modelAllowlist: 'builtin' }).modelAllowlist).toEqual(builtinModelAllowlist());
    expect(builtinModelAllowlist().anthropic).toEqual(expect.arrayContaining(Object.values(ANTHROPIC_MODEL_ALIASES)));
    expect(subAgentsSchema.safeParse({ modelAllowlist: 'default' }).success).toBe(false);
  });

  it('spawnModel first-allowed is the first model of the spawn\'s provider: its catalogue entry, else the allowlist', () => {
    expect(spawnDefaultModel({ provider: 'anthropic', providers: catalogue, spawnModel: FIRST_ALLOWED }, 'anthropic')).toBe('claude-sonnet-5-5');
    expect(spawnDefaultModel({ provider: 'anthropic', providers: catalogue, spawnModel: FIRST_ALLOWED }, 'openai')).toBe('gpt-4.1-mini');
    expect(spawnDefaultModel({ provider: 'anthropic', modelAllowlist: allowlist, spawnModel: FIRST_ALLOWED }, 'anthropic')).toBe('claude-haiku-4-5');
    expect(spawnDefaultModel({ provider: 'anthropic', spawnModel: 'claude-opus-5-5' }, 'anthropic')).toBe('claude-opus-5-5');
    expect(spawnDefaultModel({ provider: 'anthropic' }, 'anthropic')).toBeUndefined();
  });

  it('refuses by name what a tree cannot honour: a spawnProvider it does not offer, first-allowed without a list', () => {
    const issues = (sub: unknown) => { const r = subAgentsSchema.safeParse(sub); return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`); };
    expect(issues({ spawnProvider: 'openai' })).toEqual(['spawnProvider: spawnProvider "openai" needs subAgents.providers: this tree runs on "anthropic" and offers no other']);
    expect(issues({ spawnProvider: 'gemini', providers: catalogue })).toEqual(['spawnProvider: spawnProvider "gemini" is not one of subAgents.providers (anthropic, openai)']);
    expect(issues({ spawnModel: 'first-allowed' })).toEqual(['spawnModel: spawnModel "first-allowed" needs a list of models for provider "anthropic": subAgents.providers.anthropic.models or subAgents.modelAllowlist.anthropic']);
    expect(issues({ spawnProvider: 'openai', spawnModel: 'first-allowed', providers: catalogue })).toEqual([]);
    expect(issues({ spawnModel: 'first-allowed', modelAllowlist: 'builtin' })).toEqual([]);
    expect(issues({ maxConcurrentOps: 0 })).toHaveLength(1);
  });
});

describe('tool definitions', () => {
  const skill = { name: 'audit', description: 'Audit  the\nauth flow', systemPrompt: 'Report risks.', sourceFile: 'audit.md', context: 'fork' as const };
  const agent = { name: 'counter', description: 'Counts.', systemPrompt: '', sourceFile: 'counter.md' };

  it('shows only the tree provider’s models', () => {
    const [agentTool] = subAgentToolDefinitions({ forkGate: true, agents: [], modelAllowlist: allowlist, provider: 'anthropic' });
    expect(agentTool!.description).toContain('- anthropic: claude-haiku-4-5, claude-sonnet-5-5');
    expect(agentTool!.description).not.toContain('bedrock');
  });

  it('offers Skill only when a context: fork skill exists, listing it', () => {
    expect(subAgentToolDefinitions({ forkGate: true, agents: [agent] }).map((t) => t.name)).toEqual(['Agent', 'SendMessage', 'TaskOutput', 'TaskStop']);
    const tools = subAgentToolDefinitions({ forkGate: true, agents: [agent, skill] });
    expect(tools.map((t) => t.name)).toEqual(['Agent', 'Skill', 'SendMessage', 'TaskOutput', 'TaskStop']);
    expect(tools[1]!.description).toContain('- audit: Audit the auth flow');
    expect(tools[0]!.description).not.toContain('audit');
  });

  it('parses Skill input strictly (names and arguments are hostile input)', () => {
    expect(skillToolInput.safeParse({ skill: 'audit', args: 'src/' }).success).toBe(true);
    for (const bad of [{}, { skill: '' }, { skill: '../../etc/passwd' }, { skill: 'a b' }, { skill: 'audit', extra: 1 }, { skill: 'audit', args: 'x'.repeat(20_001) }, { skill: 7 }]) {
      expect(skillToolInput.safeParse(bad).success).toBe(false);
    }
  });
});
