/**
 * The public contract as an operator (or another-language backend) meets it: the real
 * `temporal` CLI binary starting `forkWorkflow` with JSON input, signalling `sendMessage`,
 * querying `status`, and cancelling; and the `forkflow` CLI on an agent tree.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startHarness, tempDir, type Harness } from '../kit/env';
import { boundClis, runForkflow, runTemporal, type ProcessResult } from '../kit/processes';
import { agentStep, script, toolResultsIn, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'operator' });
});
afterAll(() => h.close());

const temporal = (...args: string[]): Promise<string> => boundClis(h.env, h.taskQueue).temporal(...args);
const cli = (...args: string[]): Promise<ProcessResult> => boundClis(h.env, h.taskQueue).cli(...args);

/** `temporal workflow query -o json` prints the query result as JSON. */
interface StatusView {
  state: string;
  turns: number;
  pendingMessages: number;
  agentId: string;
  forkLabel: string;
}
async function queryStatus(workflowId: string): Promise<StatusView> {
  const out = JSON.parse(await temporal('workflow', 'query', '-w', workflowId, '--type', 'status', '-o', 'json')) as { queryResult: unknown[] };
  return out.queryResult[0] as StatusView;
}

test('start with JSON input, signal sendMessage, query status: a message resumes the conversation', async () => {
  const input = JSON.stringify({ prompt: 'Answer twice.\n@sleep 2000 @reply first', forkLabel: 'cli-fork' });
  await temporal('workflow', 'start', '--type', 'forkWorkflow', '--task-queue', h.taskQueue, '-w', 'op-signal', '--input', input);
  await h.model.log.waitFor((e) => e.outcome === 'pending');

  const running = await queryStatus('op-signal');
  expect(running).toMatchObject({ agentId: 'op-signal', state: 'running', forkLabel: 'cli-fork', turns: 0 });

  await temporal('workflow', 'signal', '-w', 'op-signal', '--name', 'sendMessage', '--input', JSON.stringify({ message: '@reply second', from: 'operator' }));
  expect(await waitFor(async () => (await queryStatus('op-signal')).pendingMessages === 1 || undefined, 'the signal to be queued')).toBe(true);

  const result = JSON.parse(await temporal('workflow', 'result', '-w', 'op-signal', '-o', 'json')) as { result: { status: string; text: string; turns: number } };
  expect(result.result).toMatchObject({ status: 'completed', text: 'second', turns: 2 });
  expect(await queryStatus('op-signal')).toMatchObject({ state: 'completed', pendingMessages: 0 });
});

test('workflow cancel ends the fork killed, with its result readable', async () => {
  await temporal('workflow', 'start', '--type', 'forkWorkflow', '--task-queue', h.taskQueue, '-w', 'op-cancel', '--input', JSON.stringify({ prompt: 'Hang.\n@sleep 60000 @reply never' }));
  await h.model.log.waitFor((e) => e.outcome === 'pending' && JSON.stringify(e.body ?? '').includes('Hang.'));
  await temporal('workflow', 'cancel', '-w', 'op-cancel');
  const result = await h.forkflow.result('op-cancel');
  expect(result).toMatchObject({ status: 'killed', stopReason: 'cancelled' });
  expect((await queryStatus('op-cancel')).state).toBe('killed');
});

test('a bad signal from the CLI is rejected without harming the fork', async () => {
  await temporal('workflow', 'start', '--type', 'forkWorkflow', '--task-queue', h.taskQueue, '-w', 'op-badsignal', '--input', JSON.stringify({ prompt: 'Slow.\n@sleep 2000 @reply ok' }));
  await h.model.log.waitFor((e) => e.outcome === 'pending' && JSON.stringify(e.body ?? '').includes('Slow.'));
  await temporal('workflow', 'signal', '-w', 'op-badsignal', '--name', 'sendMessage', '--input', '"just a string"');
  const result = await h.forkflow.result('op-badsignal');
  expect(result).toMatchObject({ status: 'completed', text: 'ok' });
  const status = await h.forkflow.status('op-badsignal');
  expect(status.rejectedSignals).toHaveLength(1);
});

test('invalid JSON input from the CLI fails the workflow with the validation issues', async () => {
  await temporal('workflow', 'start', '--type', 'forkWorkflow', '--task-queue', h.taskQueue, '-w', 'op-invalid', '--input', JSON.stringify({ prompt: 'x', maxTurns: 'many' }));
  const r = await runTemporal(['workflow', 'result', '-w', 'op-invalid', '--address', h.env.address, '-o', 'json']);
  expect(r.status).not.toBe(0);
  type Failure = { message: string; applicationFailureInfo: { type: string; nonRetryable: boolean } };
  const out = JSON.parse(r.stdout) as { status: string; closeEvent: { workflowExecutionFailedEventAttributes: { failure: Failure } } };
  expect(out.status).toBe('FAILED');
  const failure = out.closeEvent.workflowExecutionFailedEventAttributes.failure;
  expect(failure.applicationFailureInfo).toMatchObject({ type: 'InvalidForkInput', nonRetryable: true });
  expect(failure.message).toContain('maxTurns');
});

test("an operator's day on a tree: check agent files, approve through `temporal workflow update`, list the tree, cancel it", async () => {
  const agents = tempDir('op-agents');
  writeFileSync(join(agents, 'reviewer.md'), '---\nname: reviewer\ndescription: Reviews changes\ntools: Read, Grep\n---\nYou review changes.\n');
  writeFileSync(join(agents, 'broken.md'), 'no frontmatter at all\n');
  const checked = await runForkflow(['agents', '--dir', agents]);
  expect(checked.status).toBe(1); // a bad file is reported (and skipped), never fatal to the rest
  expect(checked.stdout).toMatch(/│ reviewer │/);
  expect(checked.stdout).toMatch(/1 agent loaded, 1 problem/);
  expect(checked.stdout).toContain('broken.md');

  const prompt = script(
    'Write, then delegate.',
    toolStep('FileWrite', { file_path: 'op-approved.txt', content: 'approved by ops' }),
    agentStep({ description: 'review the write', subagent_type: 'reviewer', name: 'reviewer', prompt: 'Review.\n@sleep 60000 @reply never' }),
    '@reply waiting for the review',
  );
  const started = await cli('--json', 'agent', '--prompt', prompt, '--agent-id', 'op-tree', '--agents-dir', agents, '--bubble');
  expect(started.status).toBe(0);
  const pending = await waitFor(async () => {
    const s = await h.forkflow.status('op-tree');
    return s.state === 'awaiting_approval' ? s.approvals[0] : undefined;
  }, 'the write to wait for approval');
  expect(pending.tool).toBe('FileWrite');

  // What the Web UI's update dialog (or any SDK) sends: the same validated update the CLI uses.
  const decision = JSON.stringify({ requestId: pending.requestId, decision: 'approve', by: 'ops' });
  expect(await temporal('workflow', 'update', 'execute', '-w', 'op-tree', '--name', 'decideApproval', '--input', decision)).toContain('approved');
  await waitFor(async () => ((await h.forkflow.status('op-tree.reviewer-1').catch(() => undefined))?.state === 'running') || undefined, 'the reviewer to run');
  expect(readFileSync(join(h.workspaceRoot, 'op-approved.txt'), 'utf8')).toBe('approved by ops');

  const tree = await waitFor(async () => {
    const view = JSON.parse((await cli('--json', 'tree', 'op-tree')).stdout) as { agents: { agentId: string }[]; counts: Record<string, number> };
    return view.agents.length === 2 ? view : undefined;
  }, 'visibility to list both members');
  expect(tree.agents.map((a) => a.agentId).sort()).toEqual(['op-tree', 'op-tree.reviewer-1']);

  expect((await cli('cancel', 'op-tree')).status).toBe(0);
  expect(await h.forkflow.result('op-tree')).toMatchObject({ status: 'killed', children: [expect.objectContaining({ agentId: 'op-tree.reviewer-1', state: 'killed' }) as unknown] });
  expect((await h.forkflow.status('op-tree.reviewer-1')).state).toBe('killed');

  // The fork gate is on unless the operator turns it off (seed 001 keeps it off outside interactive sessions; forkflow has none, S1-115).
  const plain = script('Delegate.', agentStep({ description: 'look', prompt: 'Look.\n@reply looked' }), '@reply delegated');
  expect((await cli('--json', 'agent', '--prompt', plain, '--agent-id', 'op-no-fork', '--no-fork-gate', '--wait')).status).toBe(0);
  expect(toolResultsIn(await h.forkflow.transcript('op-no-fork'))[0]!.json).toMatchObject({ status: 'completed', agentId: 'op-no-fork.spawn-1', content: 'looked' });
  expect((await h.forkflow.status('op-no-fork.spawn-1')).querySource).toBe('agent:builtin:general-purpose');
});
