/**
 * A named agent's definition fields at run time (seed 001, "Agent Definition 字段"): with the
 * fork gate off and no `run_in_background` in the call, `background: true` still runs it in
 * the background; `initialPrompt` opens its first turn; `skills` are preloaded into its
 * system prompt (a plugin-style name by its suffix); `maxTurns` stops its loop; `effort`
 * reaches its requests as `output_config.effort` (a fork takes its caller's); `color` is in
 * its status and its visibility row (memo), where the web view, `top` and `watch` read it. A
 * plugin's agents and skills run under their `<plugin>:<name>` types.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { textOf } from '../../src/shared/messages-api/anthropic';
import type { AgentDefinition } from '../../src/shared/agents/agents';
import { loadAgentSources } from '../../src/activities/agents';
import { startHarness, tempDir, type Harness } from '../kit/env';
import { bodyOf, messageRequests } from '../kit/requests';
import { agentStep, notificationsIn, script, toolResultsIn, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';
import { treeLines } from '../../src/cli/watch/render';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'agent-fields' });
});
afterAll(() => h.close());

const checklist: AgentDefinition = { name: 'checklist', description: 'The review checklist.', context: 'fork', systemPrompt: 'Check every error path twice.', sourceFile: 'checklist.md' };
const reviewer: AgentDefinition = {
  name: 'reviewer',
  description: 'Reviews changes.',
  systemPrompt: 'You review changes.',
  sourceFile: 'reviewer.md',
  background: true,
  initialPrompt: 'Begin with the riskiest file.',
  skills: ['team:checklist', 'checklist'],
  tools: ['Glob'],
};
const looper: AgentDefinition = { name: 'looper', description: 'Loops.', systemPrompt: 'You loop.', sourceFile: 'looper.md', maxTurns: 2, tools: ['Glob'] };

test('background: true in the definition answers async_launched with the gate off; initialPrompt and skills reach the first request', async () => {
  const prompt = script(
    'Delegate a review.',
    agentStep({ description: 'review', subagent_type: 'reviewer', prompt: 'Review the change.\n@reply reviewed: fine' }),
    '@reply waiting',
    '@reply saw the review',
  );
  const result = await h.forkflow.startAgent({ agentId: 'fields-bg', prompt, subAgents: { forkGate: false, agents: [reviewer, checklist] } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'saw the review' });

  const transcript = await h.forkflow.transcript('fields-bg');
  expect(toolResultsIn(transcript)[0]!.json).toMatchObject({ status: 'async_launched', agentId: 'fields-bg.spawn-1' });
  const notes = notificationsIn(transcript);
  expect(notes).toHaveLength(1);
  expect(notes[0]).toContain('reviewed: fine');

  const first = messageRequests(h.model).find((e) => bodyOf(e).messages.length === 1 && JSON.stringify(bodyOf(e).system).includes('You review changes.'))!;
  expect(textOf(bodyOf(first).messages[0]!)).toMatch(/^Begin with the riskiest file\.\n\nReview the change\./);
  const system = JSON.stringify(bodyOf(first).system);
  expect(system).toContain('You review changes.');
  // Listed twice (by plugin-style name and by name), preloaded once.
  expect(system.split('Check every error path twice.')).toHaveLength(2);
  expect(system).toContain('<preloaded-skill name=\\"checklist\\">');
});

test("a definition's maxTurns ends its loop at that many turns; without background: true the call waits for it", async () => {
  const prompt = script(
    'Delegate a loop.',
    agentStep({ description: 'loop', subagent_type: 'looper', prompt: 'Loop.\n@tool Glob {"pattern":"*"}\n@tool Glob {"pattern":"*"}\n@tool Glob {"pattern":"*"}\n@reply never' }),
    '@reply done',
  );
  const result = await h.forkflow.startAgent({ agentId: 'fields-turns', prompt, subAgents: { forkGate: false, agents: [looper] } }).then((a) => a.result());
  expect(result.status).toBe('completed');
  const [answer] = toolResultsIn(await h.forkflow.transcript('fields-turns'));
  // Sync: the child's outcome is the tool result itself, and it stopped at its own limit.
  expect(answer!.json).toMatchObject({ agentId: 'fields-turns.spawn-1' });
  expect(answer!.json?.status).not.toBe('async_launched');
  expect(answer!.json).toMatchObject({ note: expect.stringContaining('SendMessage to "fields-turns.spawn-1"') as string });
  expect((await h.forkflow.status('fields-turns.spawn-1')).turns).toBe(2);
});

const painter: AgentDefinition = { name: 'painter', description: 'Paints.', systemPrompt: 'You paint carefully.', sourceFile: 'painter.md', effort: 'low', color: 'cyan', tools: ['Glob'] };
const plain: AgentDefinition = { name: 'plain', description: 'Plain.', systemPrompt: 'You are plain.', sourceFile: 'plain.md', tools: ['Glob'] };

/** The requests whose system prompt contains `marker`. */
const requestsWith = (marker: string) => messageRequests(h.model).filter((e) => JSON.stringify(bodyOf(e).system ?? '').includes(marker));

test("a definition's effort reaches its agent's requests as output_config.effort, and only its; its colour is in its status and its listing", async () => {
  const prompt = script(
    'Delegate twice.',
    agentStep({ description: 'paint', subagent_type: 'painter', prompt: 'Paint it.\n@reply painted' }),
    agentStep({ description: 'plain', subagent_type: 'plain', prompt: 'Do it plainly.\n@reply plain done' }),
    '@reply both done',
  );
  const result = await h.forkflow.startAgent({ agentId: 'fields-effort', prompt, system: 'You are the lead.', subAgents: { forkGate: false, agents: [painter, plain] } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'both done' });

  const painted = requestsWith('You paint carefully.');
  expect(painted.length).toBeGreaterThan(0);
  for (const e of painted) expect(bodyOf(e).output_config).toEqual({ effort: 'low' });
  // Neither the agent without one nor its caller sends the field at all (their bytes are as before).
  for (const e of [...requestsWith('You are plain.'), ...requestsWith('You are the lead.')]) expect(bodyOf(e)).not.toHaveProperty('output_config');
  expect(requestsWith('You are plain.').length).toBeGreaterThan(0);

  const [paintId, plainId] = ['fields-effort.spawn-1', 'fields-effort.spawn-2'];
  expect(await h.forkflow.status(paintId)).toMatchObject({ color: 'cyan', effort: 'low' });
  const plainStatus = await h.forkflow.status(plainId);
  expect(plainStatus).not.toHaveProperty('color');
  expect(plainStatus).not.toHaveProperty('effort');

  // Visibility lists it with its colour (its start memo): what the web view, `top` and `watch --tree` show.
  const rows = await waitFor(async () => {
    const listed = await h.forkflow.list({ query: "ForkParentId = 'fields-effort'" });
    return listed.length === 2 && listed.some((r) => r.color) ? listed : undefined;
  }, 'the sub-agents in visibility');
  expect(rows.find((r) => r.agentId === paintId)).toMatchObject({ color: 'cyan' });
  expect(rows.find((r) => r.agentId === plainId)).not.toHaveProperty('color');
  const lines = treeLines(rows, paintId);
  expect(lines.find((l) => l.includes(paintId))).toContain(`${paintId} (cyan) [paint]`);
  expect(lines.find((l) => l.includes(plainId))).not.toContain('(');
});

test("an agent's effort (ForkInput.effort) goes on every request of its own and of its forks", async () => {
  const prompt = script('Fork once.', agentStep({ description: 'forked', prompt: 'Forked work.\n@reply forked done' }), '@reply waiting', '@reply saw the report');
  const result = await h.forkflow.startAgent({ agentId: 'fields-effort-root', prompt, system: 'You are the effortful root.', effort: 'high', color: 'red' }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'saw the report' });
  const mine = requestsWith('You are the effortful root.');
  // The fork's own request: its opening (the fork rules) ends its messages.
  const forked = mine.filter((e) => JSON.stringify(bodyOf(e).messages.at(-1)).includes('forkflow-worker'));
  expect(forked.length).toBeGreaterThan(0);
  expect(mine.length).toBeGreaterThan(forked.length);
  for (const e of mine) expect(bodyOf(e).output_config).toEqual({ effort: 'high' });
  expect(await h.forkflow.status('fields-effort-root')).toMatchObject({ color: 'red', effort: 'high' });
  // A fork takes its caller's effort, not its colour (a colour names a definition).
  expect(await h.forkflow.status('fields-effort-root.fork-1')).toMatchObject({ effort: 'high' });
  expect(await h.forkflow.status('fields-effort-root.fork-1')).not.toHaveProperty('color');
  // A root's colour rides in the memo the client starts it with.
  const root = await waitFor(async () => (await h.forkflow.list({ query: "ForkAgentId = 'fields-effort-root'" }))[0], 'the root in visibility');
  expect(root.color).toBe('red');
});

test('deniedAgentTypes (seed 001: deny rules for agent types): denied types are left out of the Agent and Skill tools and refused by name; the others run', async () => {
  const auditor: AgentDefinition = { name: 'code-auditor', description: 'Audits code.', systemPrompt: 'You audit.', sourceFile: 'code-auditor.md', tools: ['Glob'] };
  const prompt = script(
    'Deny.',
    agentStep({ description: 'audit', subagent_type: 'code-auditor', prompt: '@reply audited' }),
    agentStep({ description: 'anything', subagent_type: 'general-purpose', prompt: '@reply general' }),
    `@tool Skill ${JSON.stringify({ skill: 'checklist' })}`,
    agentStep({ description: 'loop', subagent_type: 'looper', prompt: '@reply looped' }),
    agentStep({ description: 'unknown', subagent_type: 'nope', prompt: '@reply never' }),
    '@reply denied and ran',
  );
  // Rules match in any case (names are lower-case; a rule written `Code-*` still denies).
  const result = await h.forkflow.startAgent({ agentId: 'deny-root', prompt, subAgents: { forkGate: false, agents: [auditor, looper, checklist], deniedAgentTypes: ['Code-*', 'general-purpose', 'checklist'] } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'denied and ran' });
  const results = toolResultsIn(await h.forkflow.transcript('deny-root'));
  expect(results.slice(0, 3).map((r) => r.isError)).toEqual([true, true, true]);
  expect(results[0]!.text).toBe('Agent type "code-auditor" may not be started in this agent tree (subAgents.deniedAgentTypes). Available: looper.');
  expect(results[1]!.text).toContain('Agent type "general-purpose" may not be started');
  expect(results[2]!.text).toContain('Agent type "checklist" may not be started');
  expect(results[3]).toMatchObject({ isError: false, json: { status: 'completed', content: 'looped' } });
  // An unknown type's answer lists only the open types.
  expect(results[4]!.text).toBe('There is no agent type "nope". Available: looper.');
  // Only the permitted agent is listed; no Skill tool is offered (its one skill is denied).
  const first = messageRequests(h.model).find((e) => JSON.stringify(bodyOf(e).messages[0]).includes('Deny.'))!;
  const agentTool = bodyOf(first).tools!.find((t) => t.name === 'Agent')!;
  expect(agentTool.description).toContain('- looper: Loops.');
  expect(agentTool.description).not.toContain('code-auditor');
  expect(bodyOf(first).tools!.map((t) => t.name)).not.toContain('Skill');
  expect((await h.forkflow.status('deny-root')).children.total).toBe(1);
});

test("a plugin's agents (S1-26): the model starts review-kit:reviewer by its namespaced type and runs review-kit:lint by Skill; the Agent tool lists them so", async () => {
  const dir = tempDir('plugin');
  const write = (rel: string, text: string) => {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  try {
    write('.claude-plugin/plugin.json', JSON.stringify({ name: 'review-kit' }));
    write('agents/reviewer.md', '---\nname: reviewer\ndescription: Reviews with the kit.\ntools: [Glob]\nskills: [lint]\n---\nYou review with the kit.\n');
    write('agents/lint.md', '---\nname: lint\ndescription: Lints with the kit.\ncontext: fork\n---\nLint it.\n@reply linted\n');
    const { agents, problems } = await loadAgentSources([], { plugins: [dir] });
    expect(problems).toEqual([]);
    const prompt = script(
      'Use the kit.',
      agentStep({ description: 'kit review', subagent_type: 'review-kit:reviewer', prompt: 'Kit review.\n@reply kit reviewed' }),
      toolStep('Skill', { skill: 'review-kit:lint' }),
      agentStep({ description: 'bare', subagent_type: 'reviewer', prompt: '@reply never' }),
      '@reply kit used',
    );
    const result = await h.forkflow.startAgent({ agentId: 'fields-plugin', prompt, subAgents: { forkGate: false, agents } }).then((a) => a.result());
    expect(result).toMatchObject({ status: 'completed', text: 'kit used' });
    const results = toolResultsIn(await h.forkflow.transcript('fields-plugin'));
    expect(results[0]!.json).toMatchObject({ status: 'completed', content: 'kit reviewed' });
    expect(results[1]!.json).toMatchObject({ status: 'completed', agentId: 'fields-plugin.review-kit-lint-2', content: 'linted' });
    // The plain name is not the plugin's agent: refused, listing the namespaced type.
    expect(results[2]).toMatchObject({ isError: true });
    expect(results[2]!.text).toContain('There is no agent type "reviewer". Available: general-purpose, review-kit:reviewer.');
    const first = messageRequests(h.model).find((e) => bodyOf(e).messages.length === 1 && textOf(bodyOf(e).messages[0]!).startsWith('Kit review.'))!;
    // Its own plugin's skill is preloaded under its namespaced name.
    expect(JSON.stringify(bodyOf(first).system)).toContain('<preloaded-skill name=\\"review-kit:lint\\">');
    const agentTool = bodyOf(messageRequests(h.model).find((e) => textOf(bodyOf(e).messages[0]!).startsWith('Use the kit.'))!).tools!.find((t) => t.name === 'Agent')!;
    expect(agentTool.description).toContain('- review-kit:reviewer: Reviews with the kit.');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
