/**
 * Background shell tasks end to end (issue 32 items 4 and 6), on forkflow worker processes with
 * the real sandbox and the offline model:
 * - a task that outlives its worker: `Bash` with `run_in_background` starts it on the worker's
 *   host queue; its output is readable while it runs (TaskOutput, and Read of its output file);
 *   the worker is SIGKILLed and replaced on the same host; the task goes on, and its end reaches
 *   the agent once, as a task notification carrying `<tool-use-id>` and `<output-file>`;
 * - a quiet task is reported stalled; TaskStop (by its legacy name `shell_id`) stops it and
 *   everything it started;
 * - another agent can neither read, stop nor Read another's task, and a background call meets
 *   the same checks as a foreground one.
 * Every wait is on an observed condition (a transcript, a file).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { ForkflowClient } from '../../src/client';
import { groupAlive } from '../../src/activities/tools/process-group';
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
let stateDir: string;
let worker: WorkerProcess;

const startWorker = () =>
  startWorkerProcess({ address: h.env.address, taskQueue: queue, modelUrl: h.model.url, workspace, bundlePath: h.env.bundlePath, extraEnv: { FORKFLOW_STATE_DIR: stateDir, FORKFLOW_HOST_ID: 'bg-host' } });

beforeAll(async () => {
  h = await startHarness({ name: 'bg-shell' });
  queue = uniqueTaskQueue('bg-shell');
  forkflow = new ForkflowClient(h.client, { taskQueue: queue });
  workspace = tempDir('bg-shell-ws');
  stateDir = tempDir('bg-shell-state');
  writeFileSync(join(workspace, 'README.md'), 'original\n');
  worker = await startWorker();
});
afterAll(async () => {
  await worker.kill();
  await h.close();
});

/** The first tool_use in a transcript named `name`. */
function toolUse(messages: MessageParam[], name: string): { id: string; input: unknown } | undefined {
  for (const m of messages) for (const b of m.role === 'assistant' ? blocksOf(m) : []) if (b.type === 'tool_use' && b.name === name) return { id: b.id, input: b.input };
  return undefined;
}

/** The process group of a task, from the record its host keeps beside its output file. */
function pgidOf(outputFile: string): number {
  return (JSON.parse(readFileSync(outputFile.replace(/\.log$/, '.json'), 'utf8')) as { pgid: number }).pgid;
}

async function noTaskFailures(id: string): Promise<void> {
  const events = (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
  expect(events.filter((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toEqual([]);
}

test('a background build outlives a worker SIGKILL; its output is readable while it runs; its end arrives once, with <tool-use-id> and <output-file>', async () => {
  mkdirSync(join(workspace, 'build'), { recursive: true });
  const command = 'echo step-1; while [ ! -e build/go ]; do sleep 0.05; done; echo step-2; exit 0';
  const handle = await forkflow.startAgent({ agentId: 'bg-build', prompt: script('Build it.', toolStep('Bash', { command, run_in_background: true }), '@reply started') });
  const launched = await waitFor(async () => toolResultsIn(await forkflow.transcript('bg-build'))[0], 'the background start');
  expect(launched.isError).toBe(false);
  expect(launched.json).toMatchObject({ status: 'background_started', task_id: 'bash-1' });
  const outputFile = launched.json!.output_file as string;
  // Forkflow's private state on its host, which no fork's tools can see.
  expect(outputFile.startsWith(join(stateDir, 'shell-tasks'))).toBe(true);
  await waitFor(() => existsSync(outputFile) && readFileSync(outputFile, 'utf8') === 'step-1\n', 'step-1 in the output file');

  // While it runs: its progress so far, by TaskOutput and by Read of its output file.
  await handle.sendMessage({ message: script(toolStep('TaskOutput', { task_id: 'bash-1', block: false }), toolStep('Read', { file_path: outputFile }), '@reply read it', '@reply finished'), summary: 'look' });
  await waitFor(async () => toolResultsIn(await forkflow.transcript('bg-build')).length === 3, 'TaskOutput and Read');
  const [, progress, read] = toolResultsIn(await forkflow.transcript('bg-build'));
  expect(progress!.json).toMatchObject({ status: 'running', task_id: 'bash-1', output: 'step-1\n', output_file: outputFile });
  expect(read).toMatchObject({ isError: false, text: 'step-1\n' });

  // The worker dies while the task runs, and a new one takes its host's place.
  await waitFor(async () => (await handle.status()).lastText === 'read it', 'the agent waiting for its task');
  await worker.kill('SIGKILL');
  worker = await startWorker();
  writeFileSync(join(workspace, 'build', 'go'), '');

  expect(await handle.result()).toMatchObject({ status: 'completed', text: 'finished' });
  const transcript = await forkflow.transcript('bg-build');
  const bash = toolUse(transcript, 'Bash')!;
  const notes = notificationsIn(transcript);
  expect(notes).toHaveLength(1);
  const lines = notes[0]!.split('\n');
  expect(lines.filter((l) => !l.startsWith('<usage>'))).toEqual([
    '<task-notification>',
    '<task-id>bash-1</task-id>',
    `<tool-use-id>${bash.id}</tool-use-id>`,
    `<output-file>${outputFile}</output-file>`,
    '<status>completed</status>',
    '<summary>Background command "echo step-1; while [ ! -e build/go ]; do sleep 0.05; done; echo step-2; exit 0" completed (exit code 0)</summary>',
    '<result>step-1',
    'step-2',
    '</result>',
    '</task-notification>',
  ]);
  expect(lines.filter((l) => l.startsWith('<usage>'))).toEqual([expect.stringMatching(/^<usage>duration_ms: \d+<\/usage>$/)]);
  await noTaskFailures('bg-build');
});

test('a quiet task is reported stalled; TaskStop by shell_id stops it and what it started; its outcome is not notified again', async () => {
  const command = 'echo hello; sleep 600 & sleep 600';
  const prompt = script(
    'Watch it.',
    toolStep('Bash', { command, run_in_background: true, stall_ms: 1500 }),
    '@reply started',
    // The stall notification wakes the agent: the script goes on here.
    toolStep('TaskStop', { shell_id: 'bash-1' }),
    toolStep('TaskStop', { task_id: 'bash-1' }),
    '@reply stopped',
  );
  const result = await forkflow.startAgent({ agentId: 'bg-stall', prompt }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'stopped' });
  const transcript = await forkflow.transcript('bg-stall');
  const notes = notificationsIn(transcript);
  expect(notes).toHaveLength(1);
  expect(notes[0]).toContain('<status>stalled</status>');
  expect(notes[0]).toContain('<result>hello\n</result>');
  expect(notes[0]).toMatch(/<summary>Background command "echo hello; sleep 600 &amp; sleep 600" has written nothing for \d+ s; it still runs/);
  const results = toolResultsIn(transcript);
  expect(results[1]!.json).toMatchObject({ status: 'killed', task_id: 'bash-1', ending: 'stopped', output: 'hello\n' });
  expect(results[2]).toMatchObject({ isError: true, text: 'Only a running task can be stopped; bash-1 is killed.' });
  // Nothing it started is left on the host (its `sleep 600 &` included).
  expect(groupAlive(pgidOf(results[1]!.json!.output_file as string))).toBe(false);
  await noTaskFailures('bg-stall');
});

test('another agent cannot read, stop or Read a task that is not its own; a background call meets the same checks as a foreground one', async () => {
  const owner = await forkflow.startAgent({ agentId: 'bg-owner', prompt: script('Own it.', toolStep('Bash', { command: 'echo secret-output; sleep 600', run_in_background: true, stall_ms: 600_000 }), '@reply waiting') });
  const launched = await waitFor(async () => toolResultsIn(await forkflow.transcript('bg-owner'))[0], 'the owner\'s task');
  const outputFile = launched.json!.output_file as string;
  await waitFor(() => existsSync(outputFile) && readFileSync(outputFile, 'utf8') === 'secret-output\n', 'its output');

  const intruder = script(
    'Take it.',
    toolStep('TaskOutput', { task_id: 'bash-1', block: false }),
    toolStep('TaskStop', { shell_id: 'bash-1' }),
    toolStep('Read', { file_path: outputFile }),
    '@reply tried',
  );
  expect(await forkflow.startAgent({ agentId: 'bg-intruder', prompt: intruder }).then((a) => a.result())).toMatchObject({ status: 'completed', text: 'tried' });
  const tried = toolResultsIn(await forkflow.transcript('bg-intruder'));
  expect(tried.map((r) => r.isError)).toEqual([true, true, true]);
  expect(tried[0]!.text).toContain('No sub-agent "bash-1" of yours (nor background task)');
  expect(tried[1]!.text).toContain('No sub-agent "bash-1" of yours (nor background task)');
  expect(tried[2]!.text).toMatch(/^Denied: .* is protected/);
  expect(tried.map((r) => r.text).join('\n')).not.toContain('secret-output');

  // The same checks as a foreground call: a tool access policy that denies Bash denies it in the background too.
  const denied = await forkflow.startAgent({ agentId: 'bg-denied', prompt: script('Try.', toolStep('Bash', { command: 'touch made-in-background', run_in_background: true }), '@reply no'), toolAccess: { mode: 'deny_list', tools: ['Bash'] } }).then((a) => a.result());
  expect(denied).toMatchObject({ status: 'completed', text: 'no' });
  expect(toolResultsIn(await forkflow.transcript('bg-denied'))[0]).toMatchObject({ isError: true, text: expect.stringContaining('Bash is not allowed by this agent\'s tool access policy') as string });
  expect(existsSync(join(workspace, 'made-in-background'))).toBe(false);

  // The owner's task still runs; cancelling the owner stops it (nothing outlives its agent).
  expect(groupAlive(pgidOf(outputFile))).toBe(true);
  await owner.cancel();
  expect(await owner.result()).toMatchObject({ status: 'killed', stopReason: 'cancelled' });
  expect(groupAlive(pgidOf(outputFile))).toBe(false);
});

test('a running sub-agent\'s progress is readable (TaskOutput, block false); its notification carries <tool-use-id> and the seed\'s summary', async () => {
  const child = script('Work.', toolStep('Bash', { command: 'while [ ! -e child-go ]; do sleep 0.05; done; echo worked' }), '@reply child done');
  const parent = await forkflow.startAgent({
    agentId: 'bg-parent',
    prompt: script('Delegate.', toolStep('Agent', { description: 'slow work', subagent_type: 'general-purpose', name: 'worker', prompt: child, run_in_background: true }), '@reply launched'),
    subAgents: { forkGate: false },
  });
  // The child is inside its Bash call (waiting for the file), the parent waiting for the child.
  await waitFor(async () => (await forkflow.status('bg-parent.worker-1')).activity?.startsWith('tool Bash') === true, 'the child in its Bash call');
  await waitFor(async () => (await parent.status()).lastText === 'launched', 'the parent waiting');
  await parent.sendMessage({ message: script(toolStep('TaskOutput', { task_id: 'worker', block: false }), '@reply looked', '@reply all done'), summary: 'look' });
  await waitFor(async () => toolResultsIn(await forkflow.transcript('bg-parent')).length === 2, 'TaskOutput');
  const looked = toolResultsIn(await forkflow.transcript('bg-parent'))[1]!;
  expect(looked.json).toMatchObject({ status: 'running', agentId: 'bg-parent.worker-1', name: 'worker', progress: { turns: 1, toolUses: 1, lastText: '' } });
  expect((looked.json!.progress as { doing: string }).doing).toMatch(/^tool Bash/);
  writeFileSync(join(workspace, 'child-go'), '');
  expect(await parent.result()).toMatchObject({ status: 'completed', text: 'all done' });
  const transcript = await forkflow.transcript('bg-parent');
  const agentCall = toolUse(transcript, 'Agent')!;
  const notes = notificationsIn(transcript);
  expect(notes).toHaveLength(1);
  expect(notes[0]).toContain(`<task-id>bg-parent.worker-1</task-id>\n<tool-use-id>${agentCall.id}</tool-use-id>\n<output-file>${agentOutputFile('bg-parent.worker-1')}</output-file>\n<name>worker</name>\n<status>completed</status>\n<summary>Agent "slow work" completed</summary>\n<result>child done</result>`);
  await noTaskFailures('bg-parent');
});

test('a task runs on across continue-as-new: the next run follows it again, its end arrives once', async () => {
  const prompt = script(
    'Long.',
    toolStep('Bash', { command: 'while [ ! -e can-go ]; do sleep 0.05; done; echo across-runs', run_in_background: true }),
    '@reply waiting',
    '@reply got it',
  );
  const handle = await forkflow.startAgent({ agentId: 'bg-runs', prompt, continueAsNew: { turnsPerRun: 1 } });
  // The task ends only once the agent waits for it, in a later run than the one that started
  // it (a task let end on its own could end before the agent's reply, which would then be its last).
  await waitFor(async () => (await handle.status()).lastText === 'waiting', 'the agent waiting for its task');
  writeFileSync(join(workspace, 'can-go'), '');
  expect(await handle.result()).toMatchObject({ status: 'completed', text: 'got it' });
  const notes = notificationsIn(await forkflow.transcript('bg-runs'));
  expect(notes).toHaveLength(1);
  expect(notes[0]).toContain('<status>completed</status>');
  expect(notes[0]).toContain('<result>across-runs\n</result>');
  // The run that finished is not the one that started the task.
  const first = (await h.client.workflow.getHandle('bg-runs').fetchHistory()).events![0]!;
  expect(first.workflowExecutionStartedEventAttributes?.continuedExecutionRunId).toBeTruthy();
  await noTaskFailures('bg-runs');
});
