/**
 * Agent trees, routing and delivery: forks and spawns as child workflows, sync results,
 * background notifications (once), auto-backgrounding, inbox priorities, and every limit
 * or policy turning into an is_error the model can act on while the agent carries on.
 */
import { DEFAULTS, FORK_QUERY_SOURCE } from '../../src/shared/wire/constants';
import { FORK_REFUSAL } from '../../src/shared/prefix/recursion';
import { textOf } from '../../src/shared/messages-api/anthropic';
import { startHarness, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';
import { bodyOf, messageRequests } from '../kit/requests';
import { agentStep, notificationsIn, script, toolResultsIn, toolStep } from '../kit/tree';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'tree' });
});
afterAll(() => h.close());

const counter = { name: 'counter', description: 'Counts things.', systemPrompt: 'You count things, nothing else.', tools: ['Glob'], sourceFile: 'counter.md' };

test('fork gate on: Agent without subagent_type forks in the background; the report arrives once, the script goes on', async () => {
  const prompt = script('Delegate.', agentStep({ description: 'count files', prompt: 'Count.\n@reply three files' }), '@reply waiting', '@reply saw the report');
  const result = await h.forkflow.startAgent({ agentId: 'tree-fork', prompt }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'saw the report' });
  expect(result.children).toEqual([expect.objectContaining({ agentId: 'tree-fork.fork-1', state: 'completed', text: 'three files' })]);

  const transcript = await h.forkflow.transcript('tree-fork');
  const launched = toolResultsIn(transcript)[0]!;
  expect(launched.json).toMatchObject({ status: 'async_launched', agentId: 'tree-fork.fork-1' });
  const notes = notificationsIn(transcript);
  expect(notes).toHaveLength(1);
  expect(notes[0]).toContain('<status>completed</status>');
  expect(notes[0]).toContain('<result>three files</result>');

  const child = await h.forkflow.status('tree-fork.fork-1');
  expect(child).toMatchObject({ querySource: FORK_QUERY_SOURCE, parentAgentId: 'tree-fork', rootAgentId: 'tree-fork', depth: 1, usedParentSnapshot: true });
  // The fork's request carries the parent's conversation and answers its pending Agent call.
  const childRequest = messageRequests(h.model).find((e) => e.rawBody.includes('Count.\\n@reply three files') && JSON.stringify(bodyOf(e).messages.at(-1)).includes('forkflow-worker'))!;
  expect(textOf(bodyOf(childRequest).messages[0]!)).toContain('Delegate.');
  await recordHistory(h.client.workflow.getHandle('tree-fork'), 'tree-background-fork');
  await recordHistory(h.client.workflow.getHandle('tree-fork.fork-1'), 'tree-fork-child');
});

test('subagent_type runs the named agent with its own prompt and tools; general-purpose too', async () => {
  const prompt = script(
    'Two helpers.',
    agentStep({ description: 'count', subagent_type: 'counter', prompt: 'Count them.\n@reply counted' }),
    agentStep({ description: 'general', subagent_type: 'general-purpose', prompt: 'Help.\n@reply helped' }),
    '@reply started both',
    '@reply first report',
    '@reply second report',
  );
  const result = await h.forkflow.startAgent({ agentId: 'tree-named', prompt, subAgents: { agents: [counter] } }).then((a) => a.result());
  expect(result.status).toBe('completed');
  expect(result.children?.map((c) => [c.agentId, c.state, c.text])).toEqual([
    ['tree-named.spawn-1', 'completed', 'counted'],
    ['tree-named.spawn-2', 'completed', 'helped'],
  ]);
  const named = messageRequests(h.model).find((e) => bodyOf(e).messages.length === 1 && textOf(bodyOf(e).messages[0]!).startsWith('Count them.'))!;
  expect(JSON.stringify(bodyOf(named).system)).toContain('You count things, nothing else.');
  expect(bodyOf(named).tools!.map((t) => t.name)).toEqual(['Glob']);
  expect((await h.forkflow.status('tree-named.spawn-1')).querySource).toBe('agent:custom:counter');
  expect((await h.forkflow.status('tree-named.spawn-2')).querySource).toBe('agent:builtin:general-purpose');
});

test('fork gate off: a sync child is the tool result; run_in_background and a slow sync child notify later', async () => {
  const prompt = script(
    'Mixed.',
    agentStep({ description: 'quick', prompt: 'Quick.\n@reply sync answer' }),
    agentStep({ description: 'bg', prompt: 'Bg.\n@reply background answer', run_in_background: true }),
    agentStep({ description: 'slow', prompt: 'Slow.\n@sleep 3000 @reply slow answer' }),
    '@reply waiting',
    '@reply got one',
    '@reply got both',
  );
  const result = await h.forkflow
    .startAgent({ agentId: 'tree-sync', prompt, subAgents: { forkGate: false, backgroundAfter: '1s' } })
    .then((a) => a.result());
  expect(result.status).toBe('completed');
  const transcript = await h.forkflow.transcript('tree-sync');
  const [quick, bg, slow] = toolResultsIn(transcript);
  expect(quick!.json).toMatchObject({ status: 'completed', content: 'sync answer' });
  expect(bg!.json).toMatchObject({ status: 'async_launched' });
  expect(slow!.json).toMatchObject({ status: 'async_launched', note: expect.stringContaining('moved to the background') as string });
  const notes = notificationsIn(transcript);
  expect(notes).toHaveLength(2);
  expect(notes.join()).toContain('background answer');
  expect(notes.join()).toContain('slow answer');
  expect(notes.join()).not.toContain('sync answer');
  await recordHistory(h.client.workflow.getHandle('tree-sync'), 'tree-sync-background-auto');
});

test('background tasks disabled (backgroundTasks: false): a fork is waited for past backgroundAfter, run_in_background is gone from the tool and refused by name, so is a background Bash command (S1-12)', async () => {
  const prompt = script(
    'Foreground only.',
    agentStep({ description: 'slow fork', prompt: 'Slow.\n@sleep 3000 @reply fork answer' }),
    agentStep({ description: 'bg', subagent_type: 'general-purpose', prompt: 'Bg.\n@reply never', run_in_background: true }),
    toolStep('Bash', { command: 'sleep 1', run_in_background: true }),
    '@reply all in the foreground',
  );
  const result = await h.forkflow.startAgent({ agentId: 'tree-fg', prompt, backgroundTasks: false, subAgents: { backgroundAfter: '1s' } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'all in the foreground' });
  const transcript = await h.forkflow.transcript('tree-fg');
  const [fork, bg, bash] = toolResultsIn(transcript);
  // The fork ran in the foreground although the gate is on and it outlived backgroundAfter.
  expect(fork!.json).toMatchObject({ status: 'completed', agentId: 'tree-fg.fork-1', content: 'fork answer' });
  expect(bg).toMatchObject({ isError: true, text: expect.stringContaining('background tasks are disabled in this agent tree (backgroundTasks: false)') as string });
  expect(bash).toMatchObject({ isError: true, text: expect.stringContaining('A Bash command with run_in_background cannot run: background tasks are disabled') as string });
  expect(notificationsIn(transcript)).toEqual([]);
  const first = messageRequests(h.model).find((e) => bodyOf(e).messages.length === 1 && textOf(bodyOf(e).messages[0]!).startsWith('Foreground only.'))!;
  const agentTool = bodyOf(first).tools!.find((t) => t.name === 'Agent')!;
  expect(Object.keys(agentTool.input_schema.properties as object)).not.toContain('run_in_background');
  expect(agentTool.description).toContain('you wait for its report, which is the result of this call');
});

test('inbox priorities: now before next before later at one turn boundary', async () => {
  const prompt = script('Busy.', agentStep({ description: 'fast', prompt: 'Fast.\n@reply fast done' }), '@sleep 2500 @reply busy', '@reply ordered');
  const handle = await h.forkflow.startAgent({ agentId: 'tree-prio', prompt });
  await h.model.log.waitFor((e) => e.outcome === 'pending' && e.rawBody.includes('Busy.') && (bodyOf(e).messages.length === 3));
  await h.forkflow.status('tree-prio');
  await handle.sendMessage({ message: 'second (next)', from: 'ops' });
  await handle.sendMessage({ message: 'first (now)', from: 'ops', priority: 'now' });
  expect((await handle.result()).status).toBe('completed');
  const transcript = await h.forkflow.transcript('tree-prio');
  const boundary = transcript.find((m) => m.role === 'user' && textOf(m).includes('first (now)'))!;
  const text = textOf(boundary);
  expect(text.indexOf('first (now)')).toBeLessThan(text.indexOf('second (next)'));
  expect(text.indexOf('second (next)')).toBeLessThan(text.indexOf('<task-notification>'));
});

test('limits and policies are is_error results the agent acts on, and it carries on', async () => {
  const prompt = script(
    'Try everything.',
    agentStep({ description: 'no type', subagent_type: 'nope', prompt: '@reply x' }),
    agentStep({ description: 'bad model', subagent_type: 'general-purpose', model: 'claude-opus-4-8', prompt: '@reply x' }),
    toolStep('SendMessage', { to: 'nobody-here', message: 'hi', summary: 'hi' }),
    toolStep('SendMessage', { to: 'nobody-here', message: 'no summary' }),
    toolStep('TaskStop', { task_id: 'nope' }),
    toolStep('Grep', { pattern: 'x' }),
    agentStep({ description: 'one', prompt: 'One.\n@sleep 1500 @reply one done' }),
    agentStep({ description: 'two', prompt: '@reply two' }),
    '@reply done trying',
    '@reply report in',
  );
  const result = await h.forkflow
    .startAgent({
      agentId: 'tree-limits',
      prompt,
      toolAccess: '{"mode":"deny_list","tools":["Grep"]}',
      // The root's own model is listed too: its forks inherit it, and the allowlist holds for that as well.
      subAgents: { maxChildren: 1, modelAllowlist: { anthropic: ['claude-haiku-4-5', DEFAULTS.model] } },
    })
    .then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'report in' });
  const results = toolResultsIn(await h.forkflow.transcript('tree-limits'));
  expect(results.map((r) => r.isError)).toEqual([true, true, true, true, true, true, false, true]);
  expect(results[0]!.text).toContain('Available: general-purpose');
  expect(results[1]!.text).toContain('Allowed on anthropic: claude-haiku-4-5');
  expect(results[2]!.text).toContain('No running agent "nobody-here"');
  expect(results[3]!.text).toContain('summary');
  expect(results[4]!.text).toContain('No sub-agent "nope"');
  expect(results[5]!.text).toContain('tool access policy (deny_list: Grep)');
  expect(results[7]!.text).toContain('the most one agent may run at once');
  // The allowlist is in the Agent tool's description the model saw.
  const first = messageRequests(h.model).find((e) => e.rawBody.includes('Try everything.'))!;
  expect(JSON.stringify(bodyOf(first).tools)).toContain('claude-haiku-4-5');
});

test('depth limit, the recursion guard, and no sub-agent tools for spawned children without nesting', async () => {
  const deep = await h.forkflow
    .startAgent({ agentId: 'tree-depth', prompt: script('Deep.', agentStep({ description: 'x', prompt: '@reply x' }), '@reply ok'), subAgents: { maxDepth: 0 } })
    .then((a) => a.result());
  expect(deep.status).toBe('completed');
  expect(toolResultsIn(await h.forkflow.transcript('tree-depth'))[0]!.text).toContain('nest 0 levels deep');

  // A fork child that tries to fork is told to do the work itself.
  const childScript = script('Nested.', agentStep({ description: 'grandchild', prompt: '@reply y' }), '@reply did it myself');
  const parent = await h.forkflow
    .startAgent({ agentId: 'tree-guard', prompt: script('Guard.', agentStep({ description: 'child', prompt: childScript }), '@reply waiting', '@reply fine') })
    .then((a) => a.result());
  expect(parent.children?.[0]).toMatchObject({ state: 'completed', text: 'did it myself' });
  const childResults = toolResultsIn(await h.forkflow.transcript('tree-guard.fork-1')).slice(-1);
  expect(childResults[0]).toMatchObject({ isError: true, text: FORK_REFUSAL });

  const spawnParent = await h.forkflow
    .startAgent({ agentId: 'tree-nested-off', prompt: script('Spawn.', agentStep({ description: 'gp', subagent_type: 'general-purpose', prompt: 'GP.\n@reply gp' }), '@reply waiting', '@reply ok') })
    .then((a) => a.result());
  expect(spawnParent.status).toBe('completed');
  const gp = messageRequests(h.model).find((e) => bodyOf(e).messages.length === 1 && textOf(bodyOf(e).messages[0]!).startsWith('GP.'))!;
  expect(bodyOf(gp).tools!.map((t) => t.name)).not.toContain('Agent');
});

test('maxConcurrentOps (seed 002) caps sub-agents and background shell tasks together: one more of either is refused by name until one ends', async () => {
  const prompt = script(
    'Many ops.',
    toolStep('Bash', { command: 'sleep 30', run_in_background: true }),
    agentStep({ description: 'slow', prompt: 'Slow.\n@sleep 1500 @reply slow done' }),
    toolStep('Bash', { command: 'echo third', run_in_background: true }),
    agentStep({ description: 'third', prompt: '@reply never' }),
    toolStep('TaskStop', { task_id: 'bash-1' }),
    agentStep({ description: 'after', prompt: 'After.\n@reply after done' }),
    '@reply waiting',
    '@reply ops done',
    '@reply all in',
  );
  const result = await h.forkflow.startAgent({ agentId: 'tree-ops', prompt, subAgents: { maxConcurrentOps: 2 } }).then((a) => a.result());
  expect(result.status).toBe('completed');
  const results = toolResultsIn(await h.forkflow.transcript('tree-ops'));
  expect(results.map((r) => r.isError)).toEqual([false, false, true, true, false, false]);
  for (const refused of [results[2]!, results[3]!]) expect(refused.text).toContain('2 operations in all, the most this agent tree allows at once (subAgents.maxConcurrentOps)');
  expect(results[5]!.json).toMatchObject({ status: 'async_launched' });
});

test("what forkflow does not do is refused by name (seed differences): Claude Code's built-in agent types, an alias where nothing maps it; nested spawning stays off unless asked", async () => {
  const prompt = script(
    'Ask for the seed.',
    agentStep({ description: 'explore', subagent_type: 'Explore', prompt: '@reply never' }),
    agentStep({ description: 'alias', subagent_type: 'general-purpose', model: 'sonnet', prompt: '@reply never' }),
    '@reply refused',
  );
  // A tree on a provider other than Anthropic, without a catalogue: nothing maps "sonnet" there.
  const result = await h.forkflow.startAgent({ agentId: 'tree-seed-refusals', prompt, subAgents: { forkGate: false, provider: 'bedrock' } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'refused' });
  const [explore, alias] = toolResultsIn(await h.forkflow.transcript('tree-seed-refusals'));
  expect(explore).toMatchObject({ isError: true, text: expect.stringMatching(/^"Explore" is one of Claude Code's built-in agents, which forkflow does not ship: .*There is no agent type "Explore"\. Available: general-purpose\./) as string });
  expect(alias).toMatchObject({ isError: true, text: 'Model "sonnet" is a Claude Code alias, which means a model only on Anthropic\'s own API or through a provider catalogue, and this agent tree runs on "bedrock" with none: pass a model id of bedrock, or omit model.' });
  expect(messageRequests(h.model).filter((e) => bodyOf(e).model === 'sonnet')).toEqual([]);

  // Seed 002 lets sub-agents spawn by default; here one setting asks for it (the default is the other test's, above).
  const nested = await h.forkflow
    .startAgent({ agentId: 'tree-nested-on', prompt: script('Nest.', agentStep({ description: 'gp', subagent_type: 'general-purpose', prompt: 'Nested GP.\n@reply gp' }), '@reply ok'), subAgents: { forkGate: false, nested: true } })
    .then((a) => a.result());
  expect(nested.status).toBe('completed');
  const gp = messageRequests(h.model).find((e) => bodyOf(e).messages.length === 1 && textOf(bodyOf(e).messages[0]!).startsWith('Nested GP.'))!;
  expect(bodyOf(gp).tools!.map((t) => t.name)).toContain('Agent');
});
