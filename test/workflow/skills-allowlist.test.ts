/**
 * The Skill tool and per-provider model allowlists, end to end on the real server and the
 * offline model: a skill runs as a fork of its caller under the Agent tool's limits, its
 * tools narrowed to its allowed-tools; hostile or unknown skill names are tool errors; the
 * allowlist of the tree's provider holds for every way a child's model is chosen (the call,
 * a named agent's frontmatter, a skill's frontmatter, a fork inheriting its parent's model).
 */
import type { AgentDefinition } from '../../src/shared/agents/agents';
import { textOf } from '../../src/shared/messages-api/anthropic';
import { DEFAULTS, FORK_QUERY_SOURCE } from '../../src/shared/wire/constants';
import { startHarness, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';
import { waitFor } from '../kit/wait';
import { bodyOf, messageRequests } from '../kit/requests';
import { agentStep, notificationsIn, script, toolResultsIn, toolStep } from '../kit/tree';
import { builtinModelAllowlist } from '../../src/shared/tree/spawn-defaults';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'skills' });
});
afterAll(() => h.close());

const hang = '@sleep 60000 @reply never';
const def = (name: string, fields: Partial<AgentDefinition> = {}): AgentDefinition => ({ name, description: `The ${name} task.`, systemPrompt: '', sourceFile: `${name}.md`, ...fields });
const skills = [
  def('summarize', { context: 'fork', allowedTools: ['Read', 'Glob'], systemPrompt: 'Summarize the workspace.' }),
  def('stall', { context: 'fork', systemPrompt: `Stall.\n${hang}` }),
];

/** The first request whose conversation opens with this text (a spawned child's prompt, a root's script). */
const requestOf = (opening: string) => messageRequests(h.model).find((e) => textOf(bodyOf(e).messages[0] ?? { role: 'user', content: '' }).startsWith(opening));
/** The first request that carries this text anywhere (a fork's directive). */
const requestWith = (text: string) => messageRequests(h.model).find((e) => bodyOf(e).messages.some((m) => m.role === 'user' && textOf(m).includes(text)));

test('Skill runs a context: fork skill as a fork, with its allowed tools and the Agent tool’s limits; bad names are tool errors', async () => {
  const child = ['@tool Glob {"pattern":"*"}', '@tool Bash {"command":"ls"}', '@tool Skill {"skill":"summarize"}', '@reply summarized'].join('\n');
  const prompt = script(
    'Use skills.',
    toolStep('Skill', { skill: 'stall' }),
    toolStep('Skill', { skill: 'summarize', args: child }), // one agent may run one child here
    toolStep('TaskStop', { task_id: 'skills.stall-1' }),
    agentStep({ description: 'as agent type', subagent_type: 'summarize', prompt: '@reply x' }),
    toolStep('Skill', { skill: 'summarize', args: child }),
    toolStep('Skill', { skill: 'no-such-skill' }),
    toolStep('Skill', { skill: '../../etc/passwd', args: 'x' }),
    '@reply waiting',
    toolStep('SendMessage', { to: 'skills.summarize-4', message: '@tool Bash {"command":"pwd"}\n@reply again', summary: 'again' }),
    '@reply waiting again',
    '@reply got the summary',
  );
  const result = await h.forkflow.startAgent({ agentId: 'skills', prompt, subAgents: { agents: skills, maxChildren: 1 } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'got the summary' });

  const transcript = await h.forkflow.transcript('skills');
  const results = toolResultsIn(transcript);
  expect(results[0]!.json).toMatchObject({ status: 'async_launched', agentId: 'skills.stall-1', description: '/stall' });
  expect(results[1]).toMatchObject({ isError: true, text: expect.stringContaining('the most one agent may run at once') as string });
  expect(results[2]!.json).toMatchObject({ status: 'killed', agentId: 'skills.stall-1' });
  expect(results[3]).toMatchObject({ isError: true, text: expect.stringContaining('There is no agent type "summarize". Available: general-purpose.') as string });
  expect(results[4]!.json).toMatchObject({ status: 'async_launched', agentId: 'skills.summarize-4' });
  expect(results[5]).toMatchObject({ isError: true, text: 'There is no skill "no-such-skill". Skills: stall, summarize.' });
  expect(results[6]).toMatchObject({ isError: true, text: expect.stringMatching(/^Invalid Skill call: skill: .*Skills: stall, summarize\.$/) as string });
  expect(results[7]!.json).toMatchObject({ status: 'resumed', agentId: 'skills.summarize-4' });
  const notes = notificationsIn(transcript);
  expect(notes).toHaveLength(2);
  expect(notes[0]).toContain('<result>summarized</result>');
  expect(notes[1]).toContain('<result>again</result>');

  // The skill ran as a fork: its directive is the skill's body then the arguments, it shares
  // its caller's model, and its calls were held to its allowed-tools (Skill included), also
  // after its caller resumed it with SendMessage (the resume rebuilds it as the same skill).
  expect(await h.forkflow.status('skills.summarize-4')).toMatchObject({ querySource: FORK_QUERY_SOURCE, parentAgentId: 'skills', depth: 1 });
  const first = requestWith('Summarize the workspace.')!;
  expect(bodyOf(first).model).toBe(DEFAULTS.model);
  expect(textOf(bodyOf(first).messages[0]!)).toMatch(/^Use skills\./); // the caller's conversation, by reference
  const denied = (tool: string) => ({ isError: true, text: `${tool} is not allowed by this agent's tool access policy (allow_list: Read, Glob).` });
  const own = toolResultsIn(await h.forkflow.transcript('skills.summarize-4'));
  expect(own.slice(-4)).toMatchObject([{ isError: false }, denied('Bash'), denied('Skill'), denied('Bash')]);
  await recordHistory(h.client.workflow.getHandle('skills'), 'tree-skill-fork');
});

test('the allowlist of the tree’s provider holds for the call, frontmatter, skills and fork inheritance', async () => {
  const allowlist = { anthropic: [DEFAULTS.model, 'claude-haiku-4-5'], bedrock: ['claude-opus-4-8'] };
  const agents = [
    def('cheap', { model: 'claude-haiku-4-5' }),
    def('pricey', { model: 'claude-opus-4-8' }),
    def('big-skill', { context: 'fork', model: 'claude-opus-4-8', systemPrompt: '@reply x' }),
    def('other-model-skill', { context: 'fork', model: 'claude-haiku-4-5', systemPrompt: '@reply x' }),
  ];
  const prompt = script(
    'Choose models.',
    agentStep({ description: 'call model', subagent_type: 'general-purpose', model: 'claude-opus-4-8', prompt: '@reply x' }),
    agentStep({ description: 'frontmatter', subagent_type: 'pricey', prompt: '@reply x' }),
    toolStep('Skill', { skill: 'big-skill' }),
    toolStep('Skill', { skill: 'other-model-skill' }),
    agentStep({ description: 'allowed', subagent_type: 'cheap', prompt: 'Cheap.\n@reply cheap done' }),
    '@reply checked',
  );
  const result = await h.forkflow.startAgent({ agentId: 'models', prompt, subAgents: { agents, forkGate: false, modelAllowlist: allowlist } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'checked' });
  const results = toolResultsIn(await h.forkflow.transcript('models'));
  expect(results.map((r) => r.isError)).toEqual([true, true, true, true, false]);
  expect(results[0]!.text).toBe(
    `Model "claude-opus-4-8" is not allowed here. It is listed for bedrock, not for anthropic, where this agent tree runs. Allowed on anthropic: claude-haiku-4-5, ${DEFAULTS.model}. Pass one of those as model, or omit model.`,
  );
  expect(results[1]!.text).toMatch(/^Agent type "pricey" is configured with model "claude-opus-4-8", which is not allowed here\. It is listed for bedrock/);
  expect(results[2]!.text).toMatch(/^Skill "big-skill" is configured with model "claude-opus-4-8", which is not allowed here\./);
  expect(results[3]!.text).toContain('a skill runs as a fork of you and shares your model');
  expect(results[4]!.json).toMatchObject({ status: 'completed', content: 'cheap done' });
  // The allowed named agent ran on its frontmatter model; nothing refused reached the model.
  expect(bodyOf(requestOf('Cheap.')!).model).toBe('claude-haiku-4-5');
  expect(messageRequests(h.model).filter((e) => bodyOf(e).model === 'claude-opus-4-8')).toEqual([]);
  // The Agent tool lists this provider's models only.
  const tools = JSON.stringify(bodyOf(requestOf('Choose models.')!).tools);
  expect(tools).toContain(`anthropic: claude-haiku-4-5, ${DEFAULTS.model}`);
  expect(tools).not.toContain('bedrock');

  // A root on a model its provider does not list: what inherits that model is refused (a
  // fork, a skill, a named agent without a model), an allowed model still runs.
  const inherit = script(
    'Inherit.',
    agentStep({ description: 'fork', prompt: '@reply x' }),
    toolStep('Skill', { skill: 'other-model-skill' }),
    agentStep({ description: 'spawn', subagent_type: 'general-purpose', model: 'claude-haiku-4-5', prompt: 'Haiku.\n@reply haiku done' }),
    '@reply waiting',
    '@reply inherited',
  );
  const narrow = { anthropic: ['claude-haiku-4-5'] };
  const second = await h.forkflow
    .startAgent({ agentId: 'inherit', prompt: inherit, subAgents: { agents: [def('other-model-skill', { context: 'fork', systemPrompt: '@reply x' })], modelAllowlist: narrow } })
    .then((a) => a.result());
  expect(second).toMatchObject({ status: 'completed', text: 'inherited' });
  const refused = toolResultsIn(await h.forkflow.transcript('inherit'));
  expect(refused.map((r) => r.isError)).toEqual([true, true, false]);
  for (const r of refused.slice(0, 2)) expect(r.text).toMatch(new RegExp(`^Your own model "${DEFAULTS.model}", which a fork or an agent without a model of its own inherits, is not allowed here\\. Allowed on anthropic: claude-haiku-4-5\\.`));
  expect(bodyOf(requestOf('Haiku.')!).model).toBe('claude-haiku-4-5');
});

test("seed 002's built-in allowlist by name (modelAllowlist: \"builtin\") with spawnModel first-allowed and no catalogue: a spawn without a model runs on the list's first, another id is refused naming the list", async () => {
  const builtin = builtinModelAllowlist().anthropic!;
  const prompt = script(
    'Builtin list.',
    agentStep({ description: 'default model', subagent_type: 'general-purpose', prompt: 'First allowed.\n@reply first' }),
    agentStep({ description: 'unlisted', subagent_type: 'general-purpose', model: 'claude-sonnet-4-6', prompt: '@reply never' }),
    '@reply listed',
  );
  const result = await h.forkflow.startAgent({ agentId: 'builtin-list', prompt, model: builtin[2]!, subAgents: { forkGate: false, modelAllowlist: 'builtin', spawnModel: 'first-allowed' } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'listed' });
  expect(bodyOf(requestOf('First allowed.')!).model).toBe(builtin[0]);
  const results = toolResultsIn(await h.forkflow.transcript('builtin-list'));
  expect(results.map((r) => r.isError)).toEqual([false, true]);
  expect(results[1]!.text).toContain(`Allowed on anthropic: ${[...builtin].sort().join(', ')}.`);
  // The Agent tool lists the built-in models, as the seed's tool description does.
  expect(JSON.stringify(bodyOf(requestOf('Builtin list.')!).tools)).toContain(`anthropic: ${[...builtin].sort().join(', ')}`);
});

describe('commands typed into a running conversation (S1-124, S1-125)', () => {
  const audit = def('audit', { context: 'fork', allowedTools: ['Read', 'Glob'], systemPrompt: 'Audit the work.\n@reply @reply thanks for the audit' });
  const digest = def('digest', { context: 'fork', background: true, systemPrompt: 'Digest the work.\n@sleep 500 @reply @reply digest read' });
  const userTexts = (messages: Awaited<ReturnType<typeof h.forkflow.transcript>>) => messages.filter((m) => m.role === 'user').map((m) => textOf(m));

  test('an idle agent runs a typed /skill as a fork of itself and reads the command and its output as its next turn; an unknown /word stays a message', async () => {
    const agent = await h.forkflow.startAgent({ agentId: 'typed', prompt: 'Work.\n@reply worked', idleTimeout: '1m', subAgents: { agents: [audit], forkGate: false } });
    await waitFor(async () => ((await agent.status()).state === 'idle') || undefined, 'the agent to idle');
    expect(await h.forkflow.sendMessage('typed', { message: '/audit src/', from: 'operator' })).toBe('queued');
    await waitFor(async () => ((await agent.status()).lastText === 'thanks for the audit') || undefined, 'the agent to read the output');
    const texts = userTexts(await h.forkflow.transcript('typed'));
    expect(texts.at(-1)).toBe('<command-name>/audit</command-name>\n<command-args>src/</command-args>\n<command-output>\n@reply thanks for the audit\n</command-output>');
    // The skill ran as a fork of the agent (its conversation, then the skill's body and the arguments), as its child.
    const forkRequest = requestWith('Audit the work.')!;
    expect(textOf(bodyOf(forkRequest).messages[0]!)).toMatch(/^Work\./);
    expect(textOf(bodyOf(forkRequest).messages.at(-1)!)).toContain('Audit the work.\n@reply @reply thanks for the audit\n\nsrc/');
    expect(await h.forkflow.status('typed.audit-1')).toMatchObject({ parentAgentId: 'typed', querySource: FORK_QUERY_SOURCE, forkLabel: '/audit', state: 'completed' });

    // Not a skill of this agent: the text reaches it as it was typed.
    await h.forkflow.sendMessage('typed', { message: '/nope\n@reply plain text' });
    await waitFor(async () => ((await agent.status()).lastText === 'plain text') || undefined, 'the plain message');
    expect(userTexts(await h.forkflow.transcript('typed')).at(-1)).toBe('/nope\n@reply plain text');
    await agent.cancel();
    expect((await agent.result()).status).toBe('killed');
    await recordHistory(h.client.workflow.getHandle('typed'), 'typed-command');
  });

  test("a command typed mid-turn runs when the turn's tool round ends (a fork from the pending round) and joins its results; an agent's SendMessage text is never a command", async () => {
    const agent = await h.forkflow.startAgent({ agentId: 'typed-mid', prompt: script('Work on.', toolStep('Glob', { pattern: '*' }, '@sleep 1500 '), '@reply worked'), subAgents: { agents: [audit], forkGate: false } });
    await h.model.log.waitFor((e) => e.outcome === 'pending' && e.rawBody.includes('Work on.'));
    await h.forkflow.sendMessage('typed-mid', { message: '/audit' });
    expect(await agent.result()).toMatchObject({ status: 'completed', text: 'thanks for the audit' });
    const messages = await h.forkflow.transcript('typed-mid');
    // The round's tool result and the command's output are one user turn.
    const turn = messages.filter((m) => m.role === 'user').at(-1)!;
    expect(JSON.stringify(turn)).toContain('tool_result');
    expect(textOf(turn)).toContain('<command-name>/audit</command-name>');
    // Forked from the pending round: the Glob call answered by the fork placeholder.
    expect(JSON.stringify(bodyOf(messageRequests(h.model).filter((e) => e.rawBody.includes('Audit the work.') && textOf(bodyOf(e).messages[0]!).startsWith('Work on.')).at(0)!).messages)).toContain('Handed to a forked worker');

    // A model's SendMessage carries its tree: "/audit" from an agent is a message, not a command.
    const lead = await h.forkflow
      .startAgent({ agentId: 'typed-peer', prompt: script('Lead.', agentStep({ description: 'peer', subagent_type: 'general-purpose', name: 'peer', prompt: 'Peer.\n@sleep 1000 @reply peer done', run_in_background: true }), toolStep('SendMessage', { to: 'peer', message: '/audit', summary: 'audit' }), '@reply sent'), subAgents: { agents: [audit], forkGate: false, nested: true } })
      .then((a) => a.result());
    expect(lead.text).toBe('sent');
    expect(userTexts(await h.forkflow.transcript('typed-peer.peer-1')).some((t) => t.includes('/audit') && !t.includes('<command-name>'))).toBe(true);
  });

  test("a background skill's output comes back later as a prompt of its own, not a task notification; a finished agent resumed by a command runs it first", async () => {
    const agent = await h.forkflow.startAgent({ agentId: 'typed-bg', prompt: 'Work.\n@reply worked', idleTimeout: '1m', subAgents: { agents: [digest], forkGate: false } });
    await waitFor(async () => ((await agent.status()).state === 'idle') || undefined, 'the agent to idle');
    await h.forkflow.sendMessage('typed-bg', { message: '/digest' });
    await waitFor(async () => ((await agent.status()).lastText === 'digest read') || undefined, 'the digest to come back');
    const messages = await h.forkflow.transcript('typed-bg');
    const texts = userTexts(messages);
    const launched = texts.findIndex((t) => t.startsWith('<command-name>/digest</command-name>\n<command-output>\nStarted in the background as typed-bg.digest-1'));
    expect(launched).toBeGreaterThan(0);
    expect(texts.at(-1)).toBe('<command-name>/digest</command-name>\n<command-output>\n@reply digest read\n</command-output>');
    expect(notificationsIn(messages)).toEqual([]);
    await agent.cancel();

    // A finished agent: the message resumes it, and the command runs before its first turn.
    const done = await h.forkflow.startAgent({ agentId: 'typed-done', prompt: 'Work.\n@reply worked', subAgents: { agents: [audit], forkGate: false } }).then((a) => a.result());
    expect(done.text).toBe('worked');
    expect(await h.forkflow.sendMessage('typed-done', { message: '/audit' })).toBe('resumed');
    expect(await h.forkflow.result('typed-done')).toMatchObject({ status: 'completed', text: 'thanks for the audit' });
    expect(userTexts(await h.forkflow.transcript('typed-done')).at(-1)).toBe('<command-name>/audit</command-name>\n<command-output>\n@reply thanks for the audit\n</command-output>');
  });
});
