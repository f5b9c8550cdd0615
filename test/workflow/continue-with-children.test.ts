/**
 * Continue-as-new with background children running (issue 13, item 5). A parent whose runs
 * are two turns long continues as new while its forks wait for approval; the forks finish in
 * later runs, which adopted them, and their reports arrive exactly once. Cancelling a parent
 * after it continued cancels the children it adopted.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ForkResult } from '../../src/client';
import { addUsage } from '../../src/shared/messages-api/anthropic';
import type { ForkInputJson } from '../../src/shared/wire/fork-input';
import type { ChildRecord } from '../../src/shared/tree/tree-input';
import { startHarness, type Harness } from '../kit/env';
import { recordHistory, startInputOf } from '../kit/histories';
import { E, historyEvents } from '../kit/history-order';
import { notificationsIn, script, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'can-kids' });
  writeFileSync(join(h.workspaceRoot, 'small.txt'), 'one\ntwo\n');
});
afterAll(() => h.close());

/** An Agent call for a fork that waits for approval of one write, then reports. */
const writer = (name: string) => ({
  name: 'Agent',
  input: { name, description: `writer ${name}`, prompt: script(`Write ${name}.`, toolStep('FileWrite', { file_path: `${name}.txt`, content: name }), `@reply wrote ${name}`) },
});

function params(agentId: string, after: string[]) {
  return {
    agentId,
    prompt: script('Parent.', `@tools ${JSON.stringify([writer('a'), writer('b')])}`, toolStep('Read', { file_path: 'small.txt' }), toolStep('Read', { file_path: 'small.txt' }), ...after),
    permissionMode: 'bubble' as const,
    maxTurns: 20,
    subAgents: { forkGate: true },
    continueAsNew: { turnsPerRun: 2 },
  };
}

/** The runs of an agent, oldest first (each continued run names the run before it). */
async function runsOf(agentId: string): Promise<{ runId: string; input: ForkInputJson }[]> {
  const runs: { runId: string; input: ForkInputJson }[] = [];
  let runId: string | undefined = (await h.client.workflow.getHandle(agentId).describe()).runId;
  while (runId) {
    const input: ForkInputJson = await startInputOf<ForkInputJson>(h.client.workflow.getHandle(agentId, runId));
    runs.unshift({ runId, input });
    runId = input.continuation?.ref.run.runId;
  }
  return runs;
}

/** The child's pending approval, once it waits for one. */
async function pendingApproval(childId: string): Promise<string> {
  return waitFor(async () => {
    const s = await h.forkflow.status(childId).catch(() => undefined);
    return s?.state === 'awaiting_approval' ? s.approvals[0]?.requestId : undefined;
  }, `${childId} to wait for approval`);
}

const outcomeSignals = (events: Awaited<ReturnType<typeof historyEvents>>) =>
  events.filter((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED && e.workflowExecutionSignaledEventAttributes?.signalName === 'childOutcome');

test('a parent continues as new while its children run; later runs hear their reports exactly once', async () => {
  const id = 'can-kids';
  const handle = await h.forkflow.startAgent(params(id, ['@reply waiting', '@reply got one', '@reply done']));
  const [a, b] = [`${id}.a-1`, `${id}.b-2`];
  const requestA = await pendingApproval(a);
  const requestB = await pendingApproval(b);
  // The parent moved on to a new run while both children still wait.
  await waitFor(async () => ((await runsOf(id)).length >= 2 ? true : undefined), 'the parent to continue as new');
  // Each report is its own turn: the first once the parent waits for both, the second once it waits for one.
  const waitingFor = (n: number) => waitFor(async () => ((await h.forkflow.status(id)).activity === `waiting for ${n} sub-agent(s)` ? true : undefined), `the parent to wait for ${n} child(ren)`);
  await waitingFor(2);
  expect(await h.forkflow.approve(a, requestA)).toBe('approved');
  await waitingFor(1);
  expect(await h.forkflow.approve(b, requestB)).toBe('approved');
  const result: ForkResult = await handle.result();
  expect(result).toMatchObject({ status: 'completed', text: 'done', turns: 6 });

  const runs = await runsOf(id);
  console.log(`continue-with-children: ${runs.length} runs, carried turns ${runs.map((r) => r.input.continuation?.state?.turns ?? 0).join(', ')}`);
  // Two turns a run: turns 1–2, 3–4, then 5–6 (after the reports).
  expect(runs.map((r) => r.input.continuation?.state?.turns ?? 0)).toEqual([0, 2, 4]);
  // The second run ended while waiting for both (its two turns were up); the third went on waiting, without a model call.
  expect(runs.map((r) => r.input.continuation?.state?.waitingForChildren === true)).toEqual([false, false, true]);
  // The first run started both children and closed before either ended: later runs adopted them.
  const first = await historyEvents(h.client.workflow.getHandle(id, runs[0]!.runId));
  expect(first.filter((e) => e.eventType === E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED)).toHaveLength(2);
  expect(first.some((e) => e.eventType === E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED)).toBe(false);
  const carried = runs[1]!.input.continuation!.state!.children as ChildRecord[];
  expect(carried.map((c) => [c.agentId, c.state])).toEqual([
    [a, 'running'],
    [b, 'running'],
  ]);
  let reports = 0;
  for (const run of runs.slice(1)) reports += outcomeSignals(await historyEvents(h.client.workflow.getHandle(id, run.runId))).length;
  expect(reports).toBe(2);

  // Each report reached the parent once, as one notification.
  const notes = notificationsIn(await h.forkflow.transcript(id));
  expect(notes).toHaveLength(2);
  expect(notes.filter((n) => n.includes(a))).toHaveLength(1);
  expect(notes.filter((n) => n.includes(b))).toHaveLength(1);
  expect(result.children?.map((c) => [c.agentId, c.state])).toEqual([
    [a, 'completed'],
    [b, 'completed'],
  ]);
  // Nothing lost or counted twice: the tree's usage is the parent's and each child's own.
  const childA: ForkResult = await h.client.workflow.getHandle<() => Promise<ForkResult>>(a).result();
  const childB: ForkResult = await h.client.workflow.getHandle<() => Promise<ForkResult>>(b).result();
  expect(childA.text).toBe('wrote a');
  expect(result.treeUsage).toEqual(addUsage(addUsage(result.usage, childA.usage), childB.usage));

  // (continue-as-new-children-*.json were recorded before the wait could continue as new: they replay its patch's old path.)
  await recordHistory(h.client.workflow.getHandle(id), 'can-children-first-run', { runId: runs[0]!.runId });
  await recordHistory(h.client.workflow.getHandle(id), 'can-children-waiting-run', { runId: runs[1]!.runId });
  await recordHistory(h.client.workflow.getHandle(id), 'can-children-resumed-wait-run', { runId: runs[2]!.runId });
  await recordHistory(h.client.workflow.getHandle(a), 'can-children-child-reports');
});

test('cancelling a parent after it continued as new cancels the children it adopted', async () => {
  const id = 'can-kids-cancel';
  const handle = await h.forkflow.startAgent(params(id, ['@reply waiting', '@reply never']));
  const [a, b] = [`${id}.a-1`, `${id}.b-2`];
  await pendingApproval(a);
  await pendingApproval(b);
  await waitFor(async () => ((await runsOf(id)).length >= 2 ? true : undefined), 'the parent to continue as new');
  await handle.cancel();
  const result: ForkResult = await handle.result();
  expect(result.status).toBe('killed');
  expect(result.children?.map((c) => [c.agentId, c.state])).toEqual([
    [a, 'killed'],
    [b, 'killed'],
  ]);
  for (const child of [a, b]) {
    const r: ForkResult = await h.client.workflow.getHandle<() => Promise<ForkResult>>(child).result();
    expect(r.status).toBe('killed');
  }
  const last = await historyEvents(h.client.workflow.getHandle(id));
  expect(last.filter((e) => e.eventType === E.EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED)).toHaveLength(2);
  expect(outcomeSignals(last)).toHaveLength(2);
});
