/**
 * The model's view of its sub-agents (issue 32 item 3): ListAgents answers from the caller's
 * child table with what the model served each child; an Agent call's own budget and tool
 * access reach its child exactly, larger asks are lowered to what the caller has, tools the
 * caller lacks are refused; a general-purpose child may be given its own system prompt; and
 * none of it is offered to trees that did not ask for it. A service asks the model for a summary
 * of each agent at work (seed 001's agentSummary).
 */
import { summarizeTree } from '../../src/client';
import { AGENT_SUMMARY_LABEL, AGENT_SUMMARY_TAG } from '../../src/shared/agents/agent-summary';
import { textOf } from '../../src/shared/messages-api/anthropic';
import type { RequestLogEntry } from '../../src/offline';
import { startHarness, type Harness } from '../kit/env';
import { startInputOf } from '../kit/histories';
import { bodyOf, messageRequests } from '../kit/requests';
import { agentStep, script, toolResultsIn, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'childview' });
});
afterAll(() => h.close());

/** The requests of the agent whose first message starts with `opening`. */
function requestsOf(opening: string): RequestLogEntry[] {
  return messageRequests(h.model).filter((e) => {
    const first = bodyOf(e).messages[0];
    return first !== undefined && textOf(first).startsWith(opening);
  });
}

/** Tokens the offline model served those requests (input of every kind, and output). */
function servedTokens(entries: RequestLogEntry[]): number {
  return entries.reduce((sum, e) => sum + (e.usage ? e.usage.input_tokens + (e.usage.cache_read_input_tokens ?? 0) + (e.usage.cache_creation_input_tokens ?? 0) + e.usage.output_tokens : 0), 0);
}

test('ListAgents shows each sub-agent with its state, turns and the tokens the model served it', async () => {
  const prompt = script(
    'Coordinate.',
    agentStep({ description: 'alpha work', name: 'alpha', subagent_type: 'general-purpose', prompt: script('Alpha.', toolStep('Glob', { pattern: '*.md' }), '@reply alpha done') }),
    agentStep({ description: 'beta work', name: 'beta', subagent_type: 'general-purpose', prompt: 'Beta.\n@reply beta done' }),
    agentStep({ description: 'gamma work', name: 'gamma', subagent_type: 'general-purpose', run_in_background: true, prompt: 'Gamma.\n@sleep 60000 @reply too late' }),
    toolStep('ListAgents', {}),
    toolStep('TaskStop', { task_id: 'gamma' }),
    toolStep('ListAgents', { state: 'killed' }),
    toolStep('ListAgents', { state: 'asleep' }),
    '@reply listed',
  );
  const result = await h.forkflow.startAgent({ agentId: 'cv-list', prompt, subAgents: { forkGate: false, listAgents: true } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'listed' });

  const results = toolResultsIn(await h.forkflow.transcript('cv-list'));
  const first = results[3]!.json as { agents: Record<string, unknown>[] } & Record<string, unknown>;
  expect(first).toMatchObject({ running_count: 1, completed_count: 2, failed_count: 0, killed_count: 0, total_count: 3 });
  const [alpha, beta, gamma] = first.agents;
  expect(alpha).toMatchObject({ id: 'cv-list.alpha-1', name: 'alpha', description: 'alpha work', kind: 'spawn', state: 'completed', depth: 1, turns: 2, tool_uses: 1 });
  expect(beta).toMatchObject({ id: 'cv-list.beta-2', state: 'completed', turns: 1, tool_uses: 0 });
  // Tokens as the offline model served them to each child, request by request.
  expect(alpha!.tokens_used).toBe(servedTokens(requestsOf('Alpha.')));
  expect(beta!.tokens_used).toBe(servedTokens(requestsOf('Beta.')));
  expect(requestsOf('Alpha.')).toHaveLength(2);
  expect(alpha!.last_activity).toMatch(/^completed at \d{4}-/);
  expect(typeof alpha!.duration_ms).toBe('number');
  // A running child: how long by the workflow's clock, and its own counters as it answered
  // (asked by one local activity): its only call is still in the offline model's sleep.
  expect(gamma).toMatchObject({ id: 'cv-list.gamma-3', state: 'running', mode: 'background', tool_uses: 0, tokens_used: 0 });
  expect(gamma!.turns).toEqual(expect.any(Number));
  expect(gamma!.running_ms).toEqual(expect.any(Number));
  expect(gamma!.last_activity).toMatch(/^running(: |\s+since )/);

  expect(results[5]!.json).toMatchObject({ killed_count: 1, running_count: 0, total_count: 3, agents: [{ id: 'cv-list.gamma-3', state: 'killed' }] });
  expect((results[5]!.json as { agents: unknown[] }).agents).toHaveLength(1);
  // A bad argument is an is_error result; the agent went on.
  expect(results[6]).toMatchObject({ isError: true });
  expect(results[6]!.text).toContain('Invalid ListAgents call');

  // Offered last in the tools of the agent that asked for it.
  const opening = requestsOf('Coordinate.')[0]!;
  expect(bodyOf(opening).tools!.map((t) => t.name).slice(-2)).toEqual(['TaskStop', 'ListAgents']);
});

test('without listAgents and spawnControls the tools are unchanged, a ListAgents call is an unknown tool and budget an unknown key', async () => {
  const prompt = script(
    'Plain.',
    toolStep('ListAgents', {}),
    agentStep({ description: 'x', subagent_type: 'general-purpose', budget: { max_turns: 1 }, prompt: 'X.\n@reply x' }),
    '@reply plain',
  );
  const result = await h.forkflow.startAgent({ agentId: 'cv-off', prompt, subAgents: { forkGate: false } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'plain' });
  expect(result.children ?? []).toEqual([]);
  const results = toolResultsIn(await h.forkflow.transcript('cv-off'));
  expect(results[0]).toMatchObject({ isError: true });
  expect(results[0]!.text).toContain('Tool "ListAgents" is not available to this agent');
  expect(results[1]).toMatchObject({ isError: true });
  expect(results[1]!.text).toMatch(/Invalid Agent call: .*budget/);
  const tools = bodyOf(requestsOf('Plain.')[0]!).tools!;
  expect(tools.map((t) => t.name)).not.toContain('ListAgents');
  const agentTool = tools.find((t) => t.name === 'Agent')!;
  expect(Object.keys(agentTool.input_schema.properties as object)).not.toContain('budget');
});

test('an Agent call narrows its child: tools array, tool-call and turn budgets, tokens lowered to what the caller has', async () => {
  // Two tool calls in one turn: the second is over its budget of one.
  const narrow = script('Narrow.', `@tools ${JSON.stringify([{ name: 'Glob', input: { pattern: '*.md' } }, { name: 'Glob', input: { pattern: '*.ts' } }])}`, '@reply never reached');
  const turns = script('Turns.', toolStep('Glob', { pattern: '*' }), toolStep('Glob', { pattern: '*' }), '@reply never said');
  const prompt = script(
    'Control.',
    agentStep({ description: 'narrow', subagent_type: 'general-purpose', tool_access: { allow: ['Glob', 'Read', 'Bash'], deny: ['Bash'] }, budget: { max_tool_calls: 1, max_tokens: 1_000_000_000 }, prompt: narrow }),
    agentStep({ description: 'turns', subagent_type: 'general-purpose', tool_access: '{"deny":["Bash","Agent"]}' as never, budget: { max_turns: 2 }, prompt: turns }),
    agentStep({ description: 'stranger', subagent_type: 'general-purpose', tool_access: { allow: ['Glob', 'LaunchMissiles'] }, prompt: '@reply no' }),
    agentStep({ description: 'nothing', subagent_type: 'general-purpose', tool_access: { deny: ['*'] }, prompt: '@reply no' }),
    agentStep({ description: 'hostile', subagent_type: 'general-purpose', budget: { max_tokens: -5, max_turns: 1e300 }, budget_policy: 'fixed:0', prompt: '@reply no' }),
    agentStep({ description: 'policy', subagent_type: 'general-purpose', budget_policy: 'fixed:1234', prompt: 'Policy.\n@reply policy done' }),
    '@reply controlled',
  );
  const result = await h.forkflow
    .startAgent({ agentId: 'cv-ctl', prompt, maxTurns: 12, budget: { maxTokens: 150_000, maxToolCalls: 20 }, subAgents: { forkGate: false, spawnControls: true } })
    .then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'controlled' });
  const results = toolResultsIn(await h.forkflow.transcript('cv-ctl'));

  // The narrowed child: exactly the allowed tools in its requests, its second tool call refused by its budget.
  const narrowed = results[0]!;
  expect(narrowed.isError).toBe(false);
  expect(bodyOf(requestsOf('Narrow.')[0]!).tools!.map((t) => t.name)).toEqual(['Read', 'Glob']);
  const granted = narrowed.json!.granted as Record<string, unknown>;
  expect(granted).toMatchObject({ max_tool_calls: 1, tools: ['Read', 'Glob'] });
  // A billion tokens asked: lowered to what the caller had left after its first turn (less than its 150 000).
  expect(granted.max_tokens).toBeLessThan(150_000);
  expect(granted.max_tokens).toBeGreaterThan(100_000);
  const narrowInput = await startInputOf<{ budget: { maxTokens: number; maxToolCalls: number }; toolAccess: unknown }>(h.client.workflow.getHandle('cv-ctl.spawn-1'));
  expect(narrowInput.budget).toEqual({ maxTokens: granted.max_tokens, maxToolCalls: 1 });
  expect(narrowInput.toolAccess).toEqual({ mode: 'allow_list', tools: ['Read', 'Glob'] });
  const narrowResults = toolResultsIn(await h.forkflow.transcript('cv-ctl.spawn-1'));
  expect(narrowResults.map((r) => r.isError)).toEqual([false, true]);
  expect(narrowResults[1]!.text).toContain('budget of 1 tool calls is spent');
  // Its budget spent, it made no further model call.
  expect(requestsOf('Narrow.')).toHaveLength(1);

  // tool_access as a JSON string; two turns, then its turn limit ends it.
  expect(results[1]!.isError).toBe(false);
  const turnsTools = bodyOf(requestsOf('Turns.')[0]!).tools!.map((t) => t.name);
  expect(turnsTools).not.toContain('Bash');
  expect(turnsTools).toContain('Glob');
  expect(requestsOf('Turns.')).toHaveLength(2);
  expect(await h.forkflow.status('cv-ctl.spawn-2')).toMatchObject({ turns: 2, maxTurnsReached: true });

  // Refusals the model can act on.
  expect(results[2]).toMatchObject({ isError: true });
  expect(results[2]!.text).toContain('"LaunchMissiles", which you do not have');
  expect(results[3]).toMatchObject({ isError: true });
  expect(results[3]!.text).toContain('leaves the sub-agent no tools');
  expect(results[4]).toMatchObject({ isError: true });
  expect(results[4]!.text).toContain('Invalid Agent call');
  for (const field of ['budget.max_tokens', 'budget.max_turns', 'budget_policy']) expect(results[4]!.text).toContain(field);
  // A call's own policy: fixed:1234 tokens.
  expect(results[5]!.json!.granted).toMatchObject({ max_tokens: 1234 });
  // Refused calls are numbered only once they pass their own checks: the policy child is the third.
  expect((await startInputOf<{ budget: { maxTokens: number } }>(h.client.workflow.getHandle('cv-ctl.spawn-3'))).budget.maxTokens).toBe(1234);
  expect(result.children?.map((c) => c.agentId)).toEqual(['cv-ctl.spawn-1', 'cv-ctl.spawn-2', 'cv-ctl.spawn-3']);
});

test('an Agent call gives a general-purpose child its own system prompt; a fork, a named agent and a teammate are refused it', async () => {
  const reviewer = { name: 'reviewer', description: 'Reviews.', systemPrompt: 'You review.', sourceFile: 'reviewer.md', tools: ['Glob'] };
  const prompt = script(
    'Prompted.',
    agentStep({ description: 'own prompt', subagent_type: 'general-purpose', system_prompt: 'You are Zed, who answers in one word.', prompt: 'Zed.\n@reply yes' }),
    agentStep({ description: 'named', subagent_type: 'reviewer', system_prompt: 'You are someone else.', prompt: '@reply no' }),
    agentStep({ description: 'blank', subagent_type: 'general-purpose', system_prompt: ' \n\t ', prompt: '@reply no' }),
    '@reply prompted',
  );
  const result = await h.forkflow.startAgent({ agentId: 'cv-sys', prompt, subAgents: { forkGate: false, spawnControls: true, agents: [reviewer] } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'prompted' });
  const results = toolResultsIn(await h.forkflow.transcript('cv-sys'));
  expect(results[0]!.isError).toBe(false);
  const zed = requestsOf('Zed.');
  expect(zed).toHaveLength(1);
  expect(JSON.stringify(bodyOf(zed[0]!).system)).toContain('You are Zed, who answers in one word.');
  expect(results[1]).toMatchObject({ isError: true });
  expect(results[1]!.text).toContain('"reviewer" has its own');
  expect(results[2]).toMatchObject({ isError: true });
  expect(results[2]!.text).toMatch(/Invalid Agent call: .*system_prompt/);
  expect(result.children?.map((c) => c.agentId)).toEqual(['cv-sys.spawn-1']);

  // With the fork gate on, a call without subagent_type is a fork: it keeps its caller's prompt.
  const forked = await h.forkflow
    .startAgent({ agentId: 'cv-sys-fork', prompt: script('Forking.', agentStep({ description: 'fork', system_prompt: 'You are new.', prompt: '@reply no' }), '@reply refused'), subAgents: { forkGate: true, spawnControls: true } })
    .then((a) => a.result());
  expect(forked).toMatchObject({ status: 'completed', text: 'refused' });
  const forkResults = toolResultsIn(await h.forkflow.transcript('cv-sys-fork'));
  expect(forkResults[0]).toMatchObject({ isError: true });
  expect(forkResults[0]!.text).toContain('a fork keeps your system prompt');
  // Without spawn controls it is an unknown key, and the Agent tool does not show it.
  const off = await h.forkflow.startAgent({ agentId: 'cv-sys-off', prompt: script('Off.', agentStep({ description: 'x', subagent_type: 'general-purpose', system_prompt: 'You are new.', prompt: '@reply no' }), '@reply off'), subAgents: { forkGate: false } }).then((a) => a.result());
  expect(off).toMatchObject({ status: 'completed', text: 'off' });
  expect(toolResultsIn(await h.forkflow.transcript('cv-sys-off'))[0]!.text).toMatch(/Invalid Agent call: .*system_prompt/);
  const agentTool = bodyOf(requestsOf('Off.')[0]!).tools!.find((t) => t.name === 'Agent')!;
  expect(Object.keys(agentTool.input_schema.properties as object)).not.toContain('system_prompt');
  const shown = bodyOf(requestsOf('Prompted.')[0]!).tools!.find((t) => t.name === 'Agent')!;
  expect(Object.keys(shown.input_schema.properties as object)).toContain('system_prompt');
});

test('a fork keeps its parent\'s tools array (the cache) and is held to the narrower set call by call', async () => {
  const child = script('Forked.', toolStep('Grep', { pattern: 'x' }), '@reply fork done');
  const prompt = script('Forking.', agentStep({ description: 'fork', tool_access: { allow: ['Glob'] }, prompt: child }), '@reply waiting', '@reply all done');
  const result = await h.forkflow.startAgent({ agentId: 'cv-fork', prompt, subAgents: { spawnControls: true } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed' });
  expect(result.children?.[0]).toMatchObject({ state: 'completed', text: 'fork done' });
  const parentTools = bodyOf(requestsOf('Forking.')[0]!).tools;
  const forkRequest = messageRequests(h.model).find((e) => e.rawBody.includes('Forked.') && JSON.stringify(bodyOf(e).messages.at(-1)).includes('forkflow-worker'))!;
  expect(bodyOf(forkRequest).tools).toEqual(parentTools);
  const forkResults = toolResultsIn(await h.forkflow.transcript('cv-fork.fork-1'));
  expect(forkResults.at(-1)).toMatchObject({ isError: true });
  expect(forkResults.at(-1)!.text).toContain('not allowed by this agent\'s tool access policy (allow_list: Glob)');
});

test("inheritSystemPrompt (seed 002): a general-purpose child runs on its caller's system prompt, read from the run that holds it after continue-as-new; a named one keeps its own", async () => {
  const reviewer = { name: 'reviewer', description: 'Reviews.', systemPrompt: 'You review.', sourceFile: 'reviewer.md', tools: ['Glob'] };
  const system = 'You are Root. Tool notes: use Glob before Read.';
  const prompt = script(
    'Inheriting.',
    toolStep('Glob', { pattern: '*' }),
    agentStep({ description: 'gp', subagent_type: 'general-purpose', prompt: 'Heir.\n@reply heir' }),
    agentStep({ description: 'named', subagent_type: 'reviewer', prompt: 'Named heir.\n@reply named' }),
    '@reply inherited',
  );
  // One turn per run: the Agent calls come from a run that holds its context by reference.
  const started = await h.forkflow.startAgent({ agentId: 'cv-inherit', prompt, system, continueAsNew: { turnsPerRun: 1 }, subAgents: { forkGate: false, inheritSystemPrompt: true, agents: [reviewer] } });
  const result = await started.result();
  expect(result).toMatchObject({ status: 'completed', text: 'inherited' });
  expect((await h.client.workflow.getHandle('cv-inherit').describe()).runId).not.toBe(started.runId);
  expect(JSON.stringify(bodyOf(requestsOf('Heir.')[0]!).system)).toContain(system);
  expect(JSON.stringify(bodyOf(requestsOf('Named heir.')[0]!).system)).not.toContain('You are Root.');

  // Without it a general-purpose child has forkflow's default prompt, as before.
  const plain = await h.forkflow
    .startAgent({ agentId: 'cv-inherit-off', prompt: script('Not inheriting.', agentStep({ description: 'gp', subagent_type: 'general-purpose', prompt: 'Orphan.\n@reply orphan' }), '@reply plain'), system, subAgents: { forkGate: false } })
    .then((a) => a.result());
  expect(plain).toMatchObject({ status: 'completed', text: 'plain' });
  expect(JSON.stringify(bodyOf(requestsOf('Orphan.')[0]!).system)).not.toContain('You are Root.');
});

test('a model-written summary of each agent at work in a tree (S1-130): a fork of each as it stands, no tools, its cached prefix; the agents go on untouched', async () => {
  const child = script('Check the tests.', toolStep('Glob', { pattern: '*' }), '@sleep 60000 @reply never');
  const root = script('Audit the parser.', toolStep('Glob', { pattern: '*' }), agentStep({ description: 'tests', subagent_type: 'general-purpose', prompt: child }), '@sleep 60000 @reply never');
  const handle = await h.forkflow.startAgent({ agentId: 'cv-sum', prompt: root });
  try {
    // Both are in a model call that does not end: at work, as the tree shows them.
    await h.model.log.waitFor((e) => e.outcome === 'pending' && e.rawBody.includes('Check the tests.') && !e.rawBody.includes('Audit the parser.'));
    await waitFor(async () => (await h.forkflow.tree('cv-sum')).agents.filter((a) => a.state === 'running').length === 2 || undefined, 'both agents running in visibility');
    const summaries = await summarizeTree(h.forkflow, 'cv-sum');
    expect(summaries.map((s) => s.agentId).sort()).toEqual(['cv-sum', 'cv-sum.spawn-1']);
    const byId = Object.fromEntries(summaries.map((s) => [s.agentId, 'summary' in s ? s.summary : s.error]));
    expect(byId['cv-sum']).toBe('Working on Audit the parser.; tool calls so far: Glob ×1, Agent ×1.');
    expect(byId['cv-sum.spawn-1']).toBe('Working on Check the tests.; tool calls so far: Glob ×1.');

    // The summary fork's request is the agent's own, tools and system included, with the question after it.
    const asked = messageRequests(h.model).find((e) => e.rawBody.includes(AGENT_SUMMARY_TAG) && textOf(bodyOf(e).messages[0]!).startsWith('Check the tests.'))!;
    const own = messageRequests(h.model).filter((e) => textOf(bodyOf(e).messages[0]!).startsWith('Check the tests.') && !e.rawBody.includes(AGENT_SUMMARY_TAG)).at(-1)!;
    expect(bodyOf(asked).tools).toEqual(bodyOf(own).tools);
    expect(bodyOf(asked).system).toEqual(bodyOf(own).system);
    expect(bodyOf(asked).messages.slice(0, 2)).toEqual(bodyOf(own).messages.slice(0, 2));
    // The agent never saw the question, and the summary forks are not listed.
    expect(JSON.stringify(await h.forkflow.transcript('cv-sum.spawn-1'))).not.toContain(AGENT_SUMMARY_TAG);
    const query = `ForkLabel = '${AGENT_SUMMARY_LABEL}'`;
    const ofTree = (rows: { parentId?: string }[]) => rows.filter((r) => r.parentId === 'cv-sum' || r.parentId === 'cv-sum.spawn-1');
    await waitFor(async () => ofTree(await h.forkflow.list({ query, includeHidden: true })).length === 2 || undefined, 'both summary forks in visibility');
    expect(ofTree(await h.forkflow.list({ query }))).toEqual([]);
  } finally {
    await handle.cancel();
  }
});
