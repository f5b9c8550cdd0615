/**
 * Approvals (`permissionMode: bubble`) at their edges: a decision for a request that is not
 * pending is refused by the update's validator (the client sees an ApplicationFailure, the
 * fork keeps waiting, history shows no failed workflow task), and a request nobody decides
 * expires by the fork's policy — denied to the model, or failing the fork; a fork cancelled
 * while it waits ends at once without running the call.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { decideApprovalUpdate } from '../../src/shared/messages';
import { startHarness, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';
import { script, toolResultsIn, toolStep } from '../kit/tree';
import { rejectionOf, waitFor } from '../kit/wait';

const E = temporal.api.enums.v1.EventType;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'approvals' });
});
afterAll(() => h.close());

async function rejection(p: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await rejectionOf(p);
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (err as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}

test('a decision for an unknown or malformed request is rejected by the validator; the fork keeps waiting', async () => {
  const prompt = script('Write.', toolStep('FileWrite', { file_path: 'ok.txt', content: 'yes' }), '@reply wrote');
  const handle = await h.forkflow.start({ agentId: 'approval-unknown', prompt, permissionMode: 'bubble' });
  const pending = await waitFor(async () => (await handle.status()).approvals[0], 'the approval request');
  const wf = h.client.workflow.getHandle('approval-unknown');

  const unknown = await rejection(wf.executeUpdate(decideApprovalUpdate, { args: [{ requestId: 'no-such-request', decision: 'approve' }] }));
  expect(unknown.type).toBe('UnknownApprovalRequest');
  expect(unknown.message).toContain(`Pending: ${pending.requestId}`);
  const malformed = await rejection(wf.executeUpdate(decideApprovalUpdate, { args: [{ requestId: pending.requestId, decision: 'maybe' } as never] }));
  expect(malformed.type).toBe('InvalidApprovalDecision');

  // Still waiting on the same request, and a valid decision still goes through.
  expect(await handle.status()).toMatchObject({ state: 'awaiting_approval', approvals: [{ requestId: pending.requestId }] });
  expect(await h.forkflow.approve('approval-unknown', pending.requestId)).toBe('approved');
  expect(await handle.result()).toMatchObject({ status: 'completed', text: 'wrote' });

  const events = (await wf.fetchHistory()).events ?? [];
  expect(events.filter((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toEqual([]);
  // Rejected updates leave no trace; the accepted one is there once.
  expect(events.filter((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)).toHaveLength(1);
});

test('an approval nobody decides expires: denied to the model under onTimeout "deny"', async () => {
  const prompt = script('Write.', toolStep('FileWrite', { file_path: 'expired.txt', content: 'no' }), '@reply went on without it');
  const handle = await h.forkflow.start({ agentId: 'approval-expiry', prompt, permissionMode: 'bubble', approval: { timeout: '1s', onTimeout: 'deny' } });
  const result = await handle.result();
  expect(result).toMatchObject({ status: 'completed', text: 'went on without it' });
  const [written] = toolResultsIn(await h.forkflow.transcript('approval-expiry'));
  expect(written).toMatchObject({ isError: true, text: expect.stringContaining('nobody approved FileWrite') as string });
  expect(existsSync(join(h.workspaceRoot, 'expired.txt'))).toBe(false);

  // In history: the approval timer fired, and no tool activity was ever scheduled.
  const events = (await h.client.workflow.getHandle('approval-expiry').fetchHistory()).events ?? [];
  expect(events.some((e) => e.eventType === E.EVENT_TYPE_TIMER_FIRED)).toBe(true);
  expect(events.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool')).toBe(false);
  await recordHistory(h.client.workflow.getHandle('approval-expiry'), 'approval-expiry');
});

test('under onTimeout "fail" an expired approval fails the fork, naming the call', async () => {
  // A file write asks (a shell command in the sandbox would not: it is contained).
  const prompt = script('Write.', toolStep('FileWrite', { file_path: 'nope.txt', content: 'x' }), '@reply unreachable');
  const handle = await h.forkflow.start({ agentId: 'approval-expiry-fail', prompt, permissionMode: 'bubble', approval: { timeout: '1s', onTimeout: 'fail' } });
  // A failed fork is a result too (ForkFailed carries it): the error names the call.
  expect(await handle.result()).toMatchObject({ status: 'failed', stopReason: 'error', error: expect.stringContaining('No decision on FileWrite: nope.txt') as string });
  expect((await h.forkflow.status('approval-expiry-fail')).state).toBe('failed');
});

test('cancelled while waiting for an approval: the fork ends killed at once, the call never runs, the decision is refused', async () => {
  const prompt = script('Write.', toolStep('FileWrite', { file_path: 'cancelled.txt', content: 'no' }), '@reply unreachable');
  const handle = await h.forkflow.start({ agentId: 'approval-cancelled', prompt, permissionMode: 'bubble', approval: { timeout: '1h', onTimeout: 'deny' } });
  const pending = await waitFor(async () => (await handle.status()).approvals[0], 'the approval request');
  await handle.cancel();
  expect(await handle.result()).toMatchObject({ status: 'killed', stopReason: 'cancelled', turns: 1 });
  expect(await handle.status()).toMatchObject({ state: 'killed' });
  expect(existsSync(join(h.workspaceRoot, 'cancelled.txt'))).toBe(false);
  // The hour-long approval timer did not hold the fork: it closed without it firing, and no tool ran.
  const events = (await h.client.workflow.getHandle('approval-cancelled').fetchHistory()).events ?? [];
  expect(events.some((e) => e.eventType === E.EVENT_TYPE_TIMER_FIRED)).toBe(false);
  expect(events.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool')).toBe(false);
  await expect(h.forkflow.approve('approval-cancelled', pending.requestId)).rejects.toThrow();
});
