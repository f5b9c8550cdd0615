/**
 * A sub-agent's output file across its runs (issue 32 item 4): an agent that continued as new
 * holds its earlier messages by reference to its earlier runs, and its output file shows them
 * all, from its first own message: while it runs (its third run answering) and after it ended.
 * A fork's output file starts after what it inherited, in every run. The reader is the
 * activity a parent's Read of the file runs, asked here directly against the dev server's
 * real workflows.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAgentOutputActivities } from '../../src/activities/agent-output';
import type { ForkInputJson } from '../../src/shared/wire/fork-input';
import { startHarness, type Harness } from '../kit/env';
import { startInputOf } from '../kit/histories';
import { script, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

jest.setTimeout(300_000);

let h: Harness;
let read: (agentId: string) => Promise<string>;
beforeAll(async () => {
  h = await startHarness({ name: 'output-continued' });
  const activities = createAgentOutputActivities({ client: h.client });
  read = async (agentId) => {
    const out = await activities.readAgentOutput({ agentId });
    expect(out.found).toBe(true);
    return out.text;
  };
});
afterAll(() => h.close());

/** The runs of the agent's chain, oldest first (each continued run names the run before it). */
async function runsOf(agentId: string): Promise<string[]> {
  const runs: string[] = [];
  let runId: string | undefined = (await h.client.workflow.getHandle(agentId).describe()).runId;
  while (runId) {
    runs.unshift(runId);
    const input: ForkInputJson = await startInputOf<ForkInputJson>(h.client.workflow.getHandle(agentId, runId));
    runId = input.continuation?.ref.run.runId;
  }
  return runs;
}
const runCount = async (agentId: string) => (await runsOf(agentId)).length;

/** `text` holds every part of `has` and none of `lacks`. */
function expectParts(text: string, parts: { has: string[]; lacks: string[] }): void {
  for (const part of parts.has) expect(text).toContain(part);
  for (const part of parts.lacks) expect(text).not.toContain(part);
}

test("an agent that continued as new shows its whole own conversation in its output file, while it runs and after it ended", async () => {
  const id = 'oc-spawned';
  const handle = await h.forkflow.startAgent({
    agentId: id,
    prompt: script('Work in steps.', toolStep('Bash', { command: 'echo oc-step-one' }), toolStep('Bash', { command: 'echo oc-step-two' }), toolStep('Bash', { command: 'while [ ! -e oc-go ]; do sleep 0.05; done; echo oc-step-three' }), '@reply oc finished'),
    continueAsNew: { turnsPerRun: 1 },
  });
  // In its third call, in a later run than the one that ran its first two steps.
  await waitFor(async () => ((await h.forkflow.status(id)).activity?.startsWith('tool Bash') === true && (await h.forkflow.status(id)).turns === 3 ? true : undefined), 'the third Bash call');
  expect(await runCount(id)).toBe(3);
  expect((await h.forkflow.status(id)).ownMessagesFrom).toBe(0);

  const running = await read(id);
  expect(running).toMatch(/^Agent oc-spawned: running; turns 3; tool uses 3;/);
  // Its prompt and first step are in its first run, its second step in its second.
  expectParts(running, { has: ['--- user\nWork in steps.', '[tool_result] oc-step-one', '[tool_result] oc-step-two'], lacks: ['[tool_result] oc-step-three', 'earlier messages not shown'] });
  // In order, each once.
  expect(running.indexOf('oc-step-one\n')).toBeLessThan(running.indexOf('[tool_result] oc-step-two'));
  expect(running.split('[tool_result] oc-step-one')).toHaveLength(2);

  writeFileSync(join(h.workspaceRoot, 'oc-go'), '');
  expect(await handle.result()).toMatchObject({ status: 'completed', text: 'oc finished', ownMessagesFrom: 0 });
  const after = await read(id);
  expect(after).toMatch(/^Agent oc-spawned: completed; turns 4; tool uses 3;/);
  for (const part of ['--- user\nWork in steps.', '[tool_result] oc-step-one', '[tool_result] oc-step-two', '[tool_result] oc-step-three', '--- assistant\noc finished']) expect(after).toContain(part);

  // Its first run is gone (deleted, as past its retention): the latest run's own messages are
  // shown, what came before counted as not shown, rather than no output at all.
  const [first] = await runsOf(id);
  await h.client.workflowService.deleteWorkflowExecution({ namespace: h.env.namespace, workflowExecution: { workflowId: id, runId: first } });
  await waitFor(async () => ((await h.client.workflow.getHandle(id, first).describe().then(() => false, () => true)) ? true : undefined), 'the first run to be deleted (the server deletes in the background: about 30 s here)', 180_000);
  const partial = await read(id);
  expect(partial).toMatch(/^Agent oc-spawned: completed; turns 4; tool uses 3;/);
  expect(partial).toContain('--- assistant\noc finished');
  expect(partial).toMatch(/\[… \d+ earlier messages not shown\]/);
  expect(partial).not.toContain('oc-step-one');
});

test("a fork's output file starts after what it inherited, in every run", async () => {
  const parentId = 'oc-parent';
  const parent = await h.forkflow.startAgent({ agentId: parentId, prompt: script('Parent-only context, not the fork\'s.', toolStep('Bash', { command: 'echo oc-parent-step' }), '@reply parent done') });
  expect(await parent.result()).toMatchObject({ status: 'completed' });
  const inherited = (await h.forkflow.status(parentId)).messages;

  const fork = await h.forkflow.forkFrom(parentId, { agentId: 'oc-fork', prompt: script('Fork directive.', toolStep('Bash', { command: 'echo oc-fork-one' }), toolStep('Bash', { command: 'echo oc-fork-two' }), '@reply fork done'), continueAsNew: { turnsPerRun: 1 } });
  expect(await fork.result()).toMatchObject({ status: 'completed', text: 'fork done', ownMessagesFrom: inherited });
  expect(await runCount('oc-fork')).toBe(3);

  const text = await read('oc-fork');
  expect(text).toMatch(/^Agent oc-fork: completed; turns 3; tool uses 2;/);
  // Its directive opens it; its first step was taken by its first run; nothing of its parent's.
  expectParts(text, { has: ['Fork directive.', '[tool_result] oc-fork-one', '[tool_result] oc-fork-two'], lacks: ['Parent-only context', 'oc-parent-step', 'parent done'] });

  // Resumed by a message from outside (a new run of the finished fork): its output still starts at its directive.
  expect(await h.forkflow.sendMessage('oc-fork', { message: '@reply fork resumed', summary: 'again' })).toBe('resumed');
  await waitFor(async () => ((await h.forkflow.status('oc-fork')).lastText === 'fork resumed' && (await h.forkflow.status('oc-fork')).state === 'completed' ? true : undefined), 'the resumed fork to answer');
  expect((await h.forkflow.status('oc-fork')).ownMessagesFrom).toBe(inherited);
  const resumed = await read('oc-fork');
  for (const part of ['Fork directive.', '[tool_result] oc-fork-one', '--- assistant\nfork resumed']) expect(resumed).toContain(part);
  expect(resumed).not.toContain('Parent-only context');
});

test('an agent whose newest messages lie in more runs than the reader follows shows its latest run, the rest counted as not shown, and the Read completes', async () => {
  const id = 'oc-many';
  const steps = Array.from({ length: 12 }, (_, i) => toolStep('Bash', { command: `echo oc-many-${i + 1}` }));
  const result = await h.forkflow.startAgent({ agentId: id, prompt: script('Many short runs.', ...steps, '@reply many done'), continueAsNew: { turnsPerRun: 1 } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'many done', turns: 13 });
  expect(await runCount(id)).toBe(13);
  const text = await read(id);
  expect(text).toMatch(/^Agent oc-many: completed; turns 13; tool uses 12;/);
  expect(text).toContain('--- assistant\nmany done');
  // Its 26 messages lie in 13 runs (two a run): more than the 8 earlier runs the reader asks,
  // so the latest run's own message (its reply) is shown and the 25 before it are counted.
  expect(text).toContain('[… 25 earlier messages not shown]');
  expectParts(text, { has: [], lacks: ['Many short runs.', 'oc-many-1\n', 'oc-many-12'] });
});
