/**
 * Sub-agents' output files end to end (issue 32 item 4; seed 001's `outputFile`), on a forkflow
 * worker process with the offline model: a parent launches a background child; `async_launched`
 * names its output file; the parent Reads it while the child runs (its output so far), again
 * after the worker was SIGKILLed and replaced (the answer comes from the child's workflow, not
 * a worker's memory), and after the child ended (all of it); the child's notification carries
 * `<output-file>`. A sibling in the same tree and an agent of another tree are refused, and
 * learn nothing of the output. A sync child's `completed` carries seed 001's totals. Every wait
 * is on an observed condition.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { ForkflowClient } from '../../src/client';
import { agentOutputFile } from '../../src/shared/tree/agent-output';
import { blocksOf, type MessageParam } from '../../src/shared/messages-api/anthropic';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { startWorkerProcess, type WorkerProcess } from '../kit/processes';
import { notificationsIn, script, toolResultsIn, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

jest.setTimeout(300_000);

const E = temporal.api.enums.v1.EventType;

let h: Harness;
let queue: string;
let forkflow: ForkflowClient;
let workspace: string;
let worker: WorkerProcess;

const startWorker = () => startWorkerProcess({ address: h.env.address, taskQueue: queue, modelUrl: h.model.url, workspace, bundlePath: h.env.bundlePath, extraEnv: { FORKFLOW_STATE_DIR: tempDir('of-state') } });

beforeAll(async () => {
  h = await startHarness({ name: 'output-file' });
  queue = uniqueTaskQueue('output-file');
  forkflow = new ForkflowClient(h.client, { taskQueue: queue });
  workspace = tempDir('of-ws');
  worker = await startWorker();
});
afterAll(async () => {
  await worker.kill();
  await h.close();
});

function toolUse(messages: MessageParam[], name: string): { id: string } | undefined {
  for (const m of messages) for (const b of m.role === 'assistant' ? blocksOf(m) : []) if (b.type === 'tool_use' && b.name === name) return { id: b.id };
  return undefined;
}

const CHILD = 'of-parent.worker-1';

test('a parent Reads its background child\'s output file while it runs, across a worker SIGKILL and after it ends; its notification names the file; no one else can Read it', async () => {
  const outputFile = agentOutputFile(CHILD);
  const child = script(
    'Work.',
    toolStep('Bash', { command: 'echo first-step-output' }),
    // The SIGKILL cuts this call (a workspace shell is not run twice: it answers "interrupted")…
    toolStep('Bash', { command: 'while [ ! -e of-go ]; do sleep 0.05; done; echo second-step-output' }),
    // …so the child waits again here, on the new worker.
    toolStep('Bash', { command: 'while [ ! -e of-go ]; do sleep 0.05; done; echo second-step-output' }),
    '@reply child done',
  );
  const parent = await forkflow.startAgent({
    agentId: 'of-parent',
    prompt: script('Delegate.', toolStep('Agent', { description: 'slow work', subagent_type: 'general-purpose', name: 'worker', prompt: child, run_in_background: true }), '@reply launched'),
    subAgents: { forkGate: false },
  });
  const launched = await waitFor(async () => toolResultsIn(await forkflow.transcript('of-parent'))[0], 'async_launched');
  expect(launched.json).toMatchObject({ status: 'async_launched', agentId: CHILD, outputFile, canReadOutputFile: true });
  expect(launched.json!.output).toContain('Read outputFile for its output so far.');
  // Without teams its child has no SendMessage back: the response promises none.
  expect(launched.json!.output).not.toContain('SendMessage');

  // The child has done its first step and waits in its second; the parent waits for it.
  // Its first result recorded (the text alone is also in its prompt and first tool call), and a Bash call running: the second.
  await waitFor(async () => toolResultsIn(await forkflow.transcript(CHILD)).some((r) => r.text.includes('first-step-output')) && (await forkflow.status(CHILD)).activity?.startsWith('tool Bash') === true, 'the child in its second Bash call');
  await waitFor(async () => (await parent.status()).lastText === 'launched', 'the parent waiting');

  // The parent Reads it; a sibling in the same tree (a sync child) tries to.
  const peek = script('Peek.', toolStep('Read', { file_path: outputFile }), '@reply peeked');
  await parent.sendMessage({ message: script(toolStep('Read', { file_path: outputFile }), toolStep('Agent', { description: 'peek', subagent_type: 'general-purpose', name: 'peeker', prompt: peek }), '@reply read while running'), summary: 'look' });
  await waitFor(async () => (await parent.status()).lastText === 'read while running', 'the first Read');
  const [, running, peeked] = toolResultsIn(await forkflow.transcript('of-parent'));
  expect(running!.isError).toBe(false);
  expect(running!.text).toMatch(new RegExp(`^Agent ${CHILD.replace('.', '\\.')}: running; turns 2; tool uses 2;`));
  expect(running!.text).toContain('[tool_result] first-step-output');
  expect(running!.text).toContain('[tool_use Bash]');
  // (Its prompt, the script, names every step: what it has not done yet shows in no result or reply.)
  expect(running!.text).toContain('--- user\nWork.\n');
  expect(running!.text).not.toContain('[tool_result] second-step-output');
  expect(running!.text).not.toContain('--- assistant\nchild done');
  expect(peeked!.json).toMatchObject({ status: 'completed', content: 'peeked' });
  // Seed 001's `completed` total (patch forkflow-outcome-totals-1): its subtree's tokens.
  const usage = peeked!.json!.usage as { inputTokens: number; outputTokens: number; cacheReadInputTokens: number; cacheCreationInputTokens: number };
  expect(peeked!.json!.totalTokens).toBe(usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens + usage.outputTokens);
  expect(peeked!.json!.totalTokens).toBeGreaterThan(0);
  // No wall time in the model's view (it would make two runs of one agent differ in bytes).
  expect(peeked!.json!).not.toHaveProperty('totalDurationMs');
  const sibling = toolResultsIn(await forkflow.transcript('of-parent.peeker-2'));
  expect(sibling).toHaveLength(1);
  expect(sibling[0]!.isError).toBe(true);
  expect(sibling[0]!.text).toContain(`Denied: ${outputFile} is not the output file of a sub-agent of yours`);

  // The worker dies; a new one answers the next Read from the child's workflow.
  await worker.kill('SIGKILL');
  worker = await startWorker();
  await parent.sendMessage({ message: script(toolStep('Read', { file_path: outputFile }), '@reply read after restart', toolStep('Read', { file_path: outputFile }), '@reply all done'), summary: 'again' });
  await waitFor(async () => (await parent.status()).lastText === 'read after restart', 'the Read after the restart');
  const again = toolResultsIn(await forkflow.transcript('of-parent'))[3]!;
  expect(again.isError).toBe(false);
  expect(again.text).toContain('[tool_result] first-step-output');
  expect(again.text).not.toContain('[tool_result] second-step-output');

  // The child ends: its notification names the file, and the parent's last Read shows all of it.
  writeFileSync(join(workspace, 'of-go'), '');
  expect(await parent.result()).toMatchObject({ status: 'completed', text: 'all done' });
  const transcript = await forkflow.transcript('of-parent');
  const notes = notificationsIn(transcript);
  expect(notes).toHaveLength(1);
  expect(notes[0]).toContain(`<task-id>${CHILD}</task-id>\n<tool-use-id>${toolUse(transcript, 'Agent')!.id}</tool-use-id>\n<output-file>${outputFile}</output-file>\n<name>worker</name>\n<status>completed</status>`);
  const after = toolResultsIn(transcript)[4]!;
  expect(after.isError).toBe(false);
  expect(after.text).toMatch(new RegExp(`^Agent ${CHILD.replace('.', '\\.')}: completed; turns 4; tool uses 3;`));
  expect(after.text).toContain('[tool_result] second-step-output');
  expect(after.text).toContain('--- assistant\nchild done');

  // An agent of another tree: refused, and nothing of the child's output reaches it (nor does a disk read happen).
  const intruder = await forkflow.startAgent({ agentId: 'of-intruder', prompt: script('Take it.', toolStep('Read', { file_path: outputFile }), toolStep('Read', { file_path: `/tmp/../${outputFile}` }), '@reply tried') }).then((a) => a.result());
  expect(intruder).toMatchObject({ status: 'completed', text: 'tried' });
  const tried = toolResultsIn(await forkflow.transcript('of-intruder'));
  expect(tried.map((r) => r.isError)).toEqual([true, true]);
  expect(tried[0]!.text).toContain('is not the output file of a sub-agent of yours');
  expect(tried.map((r) => r.text).join('\n')).not.toContain('first-step-output');

  for (const id of ['of-parent', CHILD]) {
    const events = (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    expect(events.filter((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toEqual([]);
  }
});
