/**
 * A named agent's definition fields at run time (seed 001, "Agent Definition 字段"): with the
 * fork gate off and no `run_in_background` in the call, `background: true` still runs it in
 * the background; `initialPrompt` opens its first turn; `skills` are preloaded into its
 * system prompt (a plugin-style name by its suffix); `maxTurns` stops its loop.
 */
import { textOf } from '../../src/shared/anthropic';
import type { AgentDefinition } from '../../src/shared/agents';
import { startHarness, type Harness } from '../kit/env';
import { bodyOf, messageRequests } from '../kit/requests';
import { agentStep, notificationsIn, script, toolResultsIn } from '../kit/tree';

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
