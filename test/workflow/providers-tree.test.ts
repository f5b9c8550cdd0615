/**
 * Any provider per agent (issue 34) on the dev server: an Anthropic root, a child on an
 * OpenAI-compatible provider and a grandchild on a third provider entry, each calling a
 * tool. The second offline model serves the Chat Completions side; the tree's ledger must
 * be exactly what the two offline logs say each agent was served. Hostile Agent calls (an
 * unknown provider, a model of another provider, an alias with no mapping there) are tool
 * errors and start nothing.
 */
import { InvalidForkInputError } from '../../src/client/errors';
import { startOfflineModel, type OfflineModel, type RequestLogEntry } from '../../src/offline';
import type { AgentDefinition } from '../../src/shared/agents/agents';
import { ANTHROPIC_MODEL_ALIASES, catalogueOf } from '../../src/shared/providers/agent-provider';
import { ZERO_USAGE, type Usage } from '../../src/shared/messages-api/anthropic';
import { providersConfigSchema } from '../../src/shared/providers/providers';
import { createProviderClients } from '../../src/worker/providers';
import { startHarness, type Harness } from '../kit/env';
import { agentStep, script, toolResultsIn, toolStep } from '../kit/tree';

let h: Harness;
let chat: OfflineModel;

const config = () =>
  providersConfigSchema.parse([
    { name: 'anthropic', kind: 'anthropic', models: ['claude-sonnet-4-6'], aliases: { sonnet: 'claude-sonnet-4-6' } },
    { name: 'openai', kind: 'openai-compatible', baseURL: `${chat.url}/v1`, apiKeyEnv: 'OFFLINE_OPENAI_KEY', models: ['gpt-4.1-mini', 'gpt-4.1'], aliases: { mini: 'gpt-4.1-mini' } },
    // A third entry on the same wire (Gemini's OpenAI-compatible endpoint is configured this way).
    { name: 'gemini', kind: 'openai-compatible', baseURL: `${chat.url}/v1`, apiKeyEnv: 'OFFLINE_GEMINI_KEY', models: ['gemini-2.5-flash'] },
  ]);

beforeAll(async () => {
  chat = await startOfflineModel();
  h = await startHarness({ name: 'providers-tree', providers: (own) => createProviderClients(config(), own, { OFFLINE_OPENAI_KEY: 'k1', OFFLINE_GEMINI_KEY: 'k2' }) });
});
afterAll(async () => {
  await h.close();
  await chat.close();
});

const served = (entries: RequestLogEntry[], path: string) => entries.filter((e) => e.path === path && e.outcome === 'completed' && e.usage);

/** What an agent was charged on the Messages wire: the log's usage as it is. */
function messagesUsage(entries: RequestLogEntry[]): Usage {
  return entries.reduce((u, e) => ({
    inputTokens: u.inputTokens + e.usage!.input_tokens,
    outputTokens: u.outputTokens + e.usage!.output_tokens,
    cacheReadInputTokens: u.cacheReadInputTokens + e.usage!.cache_read_input_tokens,
    cacheCreationInputTokens: u.cacheCreationInputTokens + e.usage!.cache_creation_input_tokens,
  }), { ...ZERO_USAGE });
}

/** On the Chat Completions wire: prompt tokens less cached ones are input, cached ones reads, no writes. */
function chatUsage(entries: RequestLogEntry[]): Usage {
  const u = messagesUsage(entries);
  return { inputTokens: u.inputTokens + u.cacheCreationInputTokens, outputTokens: u.outputTokens, cacheReadInputTokens: u.cacheReadInputTokens, cacheCreationInputTokens: 0 };
}

test('an Anthropic root, an OpenAI-compatible child and a third-provider grandchild: tools on each, ledger exact from both logs', async () => {
  const grandchild = script('mp.grandchild', toolStep('Glob', { pattern: '*' }), '@reply grandchild done');
  const child = script('mp.child', toolStep('Glob', { pattern: '*' }), agentStep({ prompt: grandchild, provider: 'gemini' }), '@reply child done');
  const hostile = [
    { name: 'Agent', input: { description: 'bad 1', prompt: 'x', provider: 'nope' } },
    { name: 'Agent', input: { description: 'bad 2', prompt: 'x', provider: 'openai', model: 'claude-sonnet-4-6' } },
    { name: 'Agent', input: { description: 'bad 3', prompt: 'x', provider: 'gemini', model: 'mini' } },
  ];
  const root = script('mp.root', `@tools ${JSON.stringify(hostile)}`, toolStep('Glob', { pattern: '*' }), agentStep({ prompt: child, provider: 'openai', model: 'mini' }), '@reply root done');
  const result = await h.forkflow
    .startAgent({ agentId: 'mp-root', prompt: root, model: 'claude-sonnet-4-6', subAgents: { forkGate: false, nested: true, providers: catalogueOf(config()) } })
    .then((a) => a.result());
  expect(result.status).toBe('completed');

  // Hostile calls: clear tool errors, nothing started.
  const rootResults = toolResultsIn(await h.forkflow.transcript('mp-root'));
  expect(rootResults.slice(0, 3).map((r) => r.isError)).toEqual([true, true, true]);
  expect(rootResults[0]?.text).toContain('There is no provider "nope"');
  expect(rootResults[1]?.text).toContain('It belongs to anthropic');
  expect(rootResults[2]?.text).toContain('"mini", which is not available on provider "gemini"');
  expect(rootResults.slice(3).every((r) => !r.isError)).toBe(true);

  const status = await h.forkflow.status('mp-root');
  const agents = status.perAgent ?? [];
  expect(agents).toHaveLength(3);
  const childAgent = agents.find((a) => a.parentId === 'mp-root');
  const grandAgent = agents.find((a) => a.parentId === childAgent?.agentId);
  expect(childAgent?.model).toBe('gpt-4.1-mini');
  expect(grandAgent?.model).toBe('gemini-2.5-flash');
  // Tool calls on each, every one answered without error.
  for (const id of [childAgent!.agentId, grandAgent!.agentId]) {
    const results = toolResultsIn(await h.forkflow.transcript(id));
    expect(results.length).toBeGreaterThanOrEqual(1);
    expect(results.every((r) => !r.isError)).toBe(true);
  }

  // Each wire saw only its own agents.
  const anthropicLog = served(h.model.log.entries(), '/v1/messages');
  const chatLog = served(chat.log.entries(), '/v1/chat/completions');
  expect(new Set(anthropicLog.map((e) => (e.body as { model: string }).model))).toEqual(new Set(['claude-sonnet-4-6']));
  expect(served(h.model.log.entries(), '/v1/chat/completions')).toHaveLength(0);
  const byModel = (m: string) => chatLog.filter((e) => (e.body as { model: string }).model === m);
  expect(byModel('gpt-4.1-mini').length).toBe(childAgent?.turns);
  expect(byModel('gemini-2.5-flash').length).toBe(grandAgent?.turns);

  // The ledger is exactly what the two logs served.
  expect(agents.find((a) => a.agentId === 'mp-root')?.usage).toEqual(messagesUsage(anthropicLog));
  expect(childAgent?.usage).toEqual(chatUsage(byModel('gpt-4.1-mini')));
  expect(grandAgent?.usage).toEqual(chatUsage(byModel('gemini-2.5-flash')));
  const total = [messagesUsage(anthropicLog), chatUsage(chatLog)].reduce((a, b) => ({
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
  }));
  expect(result.treeUsage).toEqual(total);

  // Each agent's status reports its usage per provider, with the provider's cache-read share.
  const share = (u: Usage) => Math.round((u.cacheReadInputTokens / (u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens)) * 10_000) / 10_000;
  const providersOf = async (id: string) => (await h.forkflow.status(id)).providers;
  expect(await providersOf('mp-root')).toEqual([{ provider: 'anthropic', calls: anthropicLog.length, usage: messagesUsage(anthropicLog), cacheReadShare: share(messagesUsage(anthropicLog)) }]);
  const childUsage = chatUsage(byModel('gpt-4.1-mini'));
  expect(childUsage.cacheReadInputTokens).toBeGreaterThan(0);
  expect(await providersOf(childAgent!.agentId)).toEqual([{ provider: 'openai', calls: childAgent!.turns, usage: childUsage, cacheReadShare: share(childUsage) }]);
  expect((await providersOf(grandAgent!.agentId))?.map((p) => p.provider)).toEqual(['gemini']);
});

test('forks of an OpenAI-compatible agent stay on its provider and model, send byte-identical prefixes and report their cached tokens', async () => {
  const fork = (tag: string) => ({ name: 'Agent', input: { description: `fork ${tag}`, prompt: `Fork ${tag} task.\n@reply fork ${tag} done` } });
  const child = script('mp2.child', `@tools ${JSON.stringify([fork('A'), fork('B')])}`, '@reply waiting', '@reply got one', '@reply done');
  const root = script('mp2.root', agentStep({ subagent_type: 'general-purpose', provider: 'openai', prompt: child }), '@reply waiting', '@reply done');
  const result = await h.forkflow
    .startAgent({ agentId: 'mp2-root', prompt: root, model: 'claude-sonnet-4-6', subAgents: { forkGate: true, nested: true, providers: catalogueOf(config()) } })
    .then((a) => a.result());
  expect(result.status).toBe('completed');
  const agents = (await h.forkflow.status('mp2-root')).perAgent ?? [];
  const childAgent = agents.find((a) => a.parentId === 'mp2-root');
  const forks = agents.filter((a) => a.parentId === childAgent?.agentId);
  expect(forks).toHaveLength(2);
  expect(forks.map((f) => f.model)).toEqual(['gpt-4.1-mini', 'gpt-4.1-mini']);

  // Each fork's first request: the placeholder results of its parent's Agent calls, then its directive.
  type ChatBody = { model: string; messages: { role: string; content: unknown }[] };
  const firstOf = (tag: string) =>
    served(chat.log.entries(), '/v1/chat/completions').find((e) => {
      const [before, last] = (e.body as ChatBody).messages.slice(-2);
      return before?.role === 'tool' && last?.role === 'user' && JSON.stringify(last.content).includes(`Fork ${tag} task.`);
    })!;
  const [a, b] = [firstOf('A'), firstOf('B')];
  const cut = (e: RequestLogEntry, tag: string) => e.rawBody.slice(0, e.rawBody.lastIndexOf(`Fork ${tag} task.`));
  expect(cut(a, 'A').length).toBeGreaterThan(1000);
  expect(cut(a, 'A')).toBe(cut(b, 'B'));
  // Both read the child's prefix from the cache, and the ledger reports it as cache reads.
  expect(a.usage!.cache_read_input_tokens).toBeGreaterThan(0);
  expect(b.usage!.cache_read_input_tokens).toBeGreaterThan(0);
  // One request each: a fork's ledger reads are its request's cached_tokens.
  expect(forks.map((f) => f.turns)).toEqual([1, 1]);
  const forkReads = forks.reduce((n, f) => n + f.usage.cacheReadInputTokens, 0);
  expect(forkReads).toBe(a.usage!.cache_read_input_tokens + b.usage!.cache_read_input_tokens);
});

test('an agent file\'s provider: the named agent runs there with its model resolved there; a provider the tree lacks starts nothing', async () => {
  const onOpenai: AgentDefinition = { name: 'gpt-helper', description: 'Helps on GPT.', systemPrompt: 'You help.', sourceFile: 'gpt-helper.md', provider: 'openai', model: 'mini', tools: ['Glob'] };
  const child = script('mp3.child', toolStep('Glob', { pattern: '*' }), '@reply helper done');
  const root = script('mp3.root', agentStep({ subagent_type: 'gpt-helper', prompt: child }), '@reply root done');
  const result = await h.forkflow
    .startAgent({ agentId: 'mp3-root', prompt: root, model: 'claude-sonnet-4-6', subAgents: { forkGate: false, agents: [onOpenai], providers: catalogueOf(config()) } })
    .then((a) => a.result());
  expect(result.status).toBe('completed');
  const helper = ((await h.forkflow.status('mp3-root')).perAgent ?? []).find((a) => a.parentId === 'mp3-root');
  expect(helper).toMatchObject({ model: 'gpt-4.1-mini', state: 'ended' });
  expect((await h.forkflow.status(helper!.agentId)).state).toBe('completed');
  const helperCalls = served(chat.log.entries(), '/v1/chat/completions').filter((e) => e.rawBody.includes('mp3.child'));
  expect(helperCalls.map((e) => (e.body as { model: string }).model)).toEqual(['gpt-4.1-mini', 'gpt-4.1-mini']);

  // A definition naming a provider the tree does not have: an input error, no workflow started.
  const stray: AgentDefinition = { ...onOpenai, name: 'stray', provider: 'nope' };
  await expect(h.forkflow.startAgent({ agentId: 'mp3-stray', prompt: root, subAgents: { agents: [stray], providers: catalogueOf(config()) } })).rejects.toThrow(InvalidForkInputError);
  await expect(h.forkflow.startAgent({ agentId: 'mp3-stray', prompt: root, subAgents: { agents: [stray], providers: catalogueOf(config()) } })).rejects.toThrow('agent "stray" names provider "nope", which is not one of subAgents.providers (anthropic, openai, gemini)');
  // Without a catalogue, only the tree's own provider is allowed.
  await expect(h.forkflow.startAgent({ agentId: 'mp3-stray', prompt: root, subAgents: { agents: [onOpenai] } })).rejects.toThrow('offers no other (no subAgents.providers)');
  await expect(h.client.workflow.getHandle('mp3-stray').describe()).rejects.toThrow();
});

test("an agent file's Claude Code alias (model: haiku) runs on the id the tree's catalogue maps it to; an alias it does not define is refused by name; a tree without a catalogue maps it (and a call's alias) through the built-in table on Anthropic", async () => {
  const catalogue = { ...catalogueOf(config()), anthropic: { models: ['claude-sonnet-4-6', 'claude-haiku-4-5'], aliases: { sonnet: 'claude-sonnet-4-6', haiku: 'claude-haiku-4-5' } } };
  const quick: AgentDefinition = { name: 'quick', description: 'Quick looks.', systemPrompt: 'You look quickly.', sourceFile: 'quick.md', model: 'haiku', tools: ['Glob'] };
  const deep: AgentDefinition = { ...quick, name: 'deep', sourceFile: 'deep.md', model: 'opus' };
  const child = script('alias.child', toolStep('Glob', { pattern: '*' }), '@reply quick done');
  const root = script('alias.root', agentStep({ subagent_type: 'quick', prompt: child }), agentStep({ subagent_type: 'deep', prompt: '@reply never' }), '@reply root done');
  const result = await h.forkflow
    .startAgent({ agentId: 'alias-root', prompt: root, model: 'claude-sonnet-4-6', subAgents: { forkGate: false, agents: [quick, deep], providers: catalogue } })
    .then((a) => a.result());
  expect(result.status).toBe('completed');
  const agents = (await h.forkflow.status('alias-root')).perAgent ?? [];
  expect(agents.filter((a) => a.parentId === 'alias-root').map((a) => a.model)).toEqual(['claude-haiku-4-5']);
  // The child's own requests (its system prompt is the definition's; its caller's requests also hold its prompt).
  const quickCalls = h.model.log.entries().filter((e) => e.path === '/v1/messages' && e.rawBody.includes('You look quickly.') && e.rawBody.includes('alias.child'));
  expect(quickCalls.length).toBeGreaterThan(0);
  expect(new Set(quickCalls.map((e) => (e.body as { model: string }).model))).toEqual(new Set(['claude-haiku-4-5']));
  const [, refused] = toolResultsIn(await h.forkflow.transcript('alias-root'));
  expect(refused!.isError).toBe(true);
  expect(refused!.text).toContain('Agent type "deep" asks for model "opus", which is not available on provider "anthropic"');

  // No catalogue, on Anthropic (S1-08): the built-in table maps the definition's alias and a call's, and the allowlist sees the id.
  const plain = await h.forkflow
    .startAgent({
      agentId: 'alias-plain',
      prompt: script(
        'alias.plain',
        agentStep({ subagent_type: 'quick', prompt: script('alias.plain-child', '@reply plain done') }),
        agentStep({ model: 'opus', subagent_type: 'general-purpose', prompt: script('alias.plain-call', '@reply call done') }),
        agentStep({ model: 'sonnet', subagent_type: 'general-purpose', prompt: '@reply never' }),
        '@reply root done',
      ),
      model: 'claude-sonnet-4-6',
      subAgents: { forkGate: false, agents: [quick], modelAllowlist: { anthropic: [ANTHROPIC_MODEL_ALIASES.haiku!, ANTHROPIC_MODEL_ALIASES.opus!] } },
    })
    .then((a) => a.result());
  expect(plain.status).toBe('completed');
  const modelsOf = (marker: string) => new Set(h.model.log.entries().filter((e) => e.path === '/v1/messages' && e.rawBody.includes(marker) && !e.rawBody.includes('alias.plain\\n')).map((e) => (e.body as { model: string }).model));
  expect(modelsOf('alias.plain-child')).toEqual(new Set([ANTHROPIC_MODEL_ALIASES.haiku]));
  expect(modelsOf('alias.plain-call')).toEqual(new Set([ANTHROPIC_MODEL_ALIASES.opus]));
  const plainResults = toolResultsIn(await h.forkflow.transcript('alias-plain'));
  expect(plainResults.map((r) => r.isError)).toEqual([false, false, true]);
  expect(plainResults[2]!.text).toContain(`Model "${ANTHROPIC_MODEL_ALIASES.sonnet}" is not allowed here.`);
});

test("seed 002's spawn defaults: spawnProvider sends a spawn without a provider there (its first model); spawnModel first-allowed picks the first model on the caller's own provider", async () => {
  const catalogue = { ...catalogueOf(config()), anthropic: { models: ['claude-haiku-4-5', 'claude-sonnet-4-6'], aliases: {} } };
  const elsewhere = await h.forkflow
    .startAgent({ agentId: 'sd-provider', prompt: script('sd.root', agentStep({ subagent_type: 'general-purpose', prompt: script('sd.elsewhere', '@reply on openai') }), '@reply root done'), model: 'claude-sonnet-4-6', subAgents: { forkGate: false, providers: catalogue, spawnProvider: 'openai' } })
    .then((a) => a.result());
  expect(elsewhere.status).toBe('completed');
  expect(((await h.forkflow.status('sd-provider')).perAgent ?? []).filter((a) => a.parentId === 'sd-provider').map((a) => a.model)).toEqual(['gpt-4.1-mini']);
  expect(served(chat.log.entries(), '/v1/chat/completions').filter((e) => e.rawBody.includes('sd.elsewhere')).length).toBe(1);

  const first = await h.forkflow
    .startAgent({
      agentId: 'sd-model',
      prompt: script('sd.root2', agentStep({ subagent_type: 'general-purpose', prompt: script('sd.first', '@reply on the first') }), agentStep({ subagent_type: 'general-purpose', model: 'inherit', prompt: script('sd.inherit', '@reply on mine') }), '@reply root done'),
      model: 'claude-sonnet-4-6',
      subAgents: { forkGate: false, providers: catalogue, spawnModel: 'first-allowed' },
    })
    .then((a) => a.result());
  expect(first.status).toBe('completed');
  const modelOf = (marker: string) => [...new Set(h.model.log.entries().filter((e) => e.path === '/v1/messages' && e.rawBody.includes(marker) && !e.rawBody.includes('sd.root2')).map((e) => (e.body as { model: string }).model))];
  expect(modelOf('sd.first')).toEqual(['claude-haiku-4-5']);
  // An explicit inherit still means the caller's model.
  expect(modelOf('sd.inherit')).toEqual(['claude-sonnet-4-6']);
});
