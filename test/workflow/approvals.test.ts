/**
 * Approvals (`permissionMode: bubble`) at their edges: a decision for a request that is not
 * pending is refused by the update's validator (the client sees an ApplicationFailure, the
 * fork keeps waiting, history shows no failed workflow task), and a request nobody decides
 * expires by the fork's policy — denied to the model, or failing the fork; a fork cancelled
 * while it waits ends at once without running the call.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { decideApprovalUpdate } from '../../src/shared/wire/messages';
import { startHarness, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';
import { agentStep, script, toolResultsIn, toolStep } from '../kit/tree';
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

test("default asks per the main rules: a write waits for the operator, an allow rule lets it through, a named agent's own default asks under a root that does not (S1-57, S1-53)", async () => {
  // A root in `default`: its FileWrite waits for the operator's decision.
  const asking = await h.forkflow.start({ agentId: 'default-asks', prompt: script('Write.', toolStep('FileWrite', { file_path: 'default-asks.txt', content: 'asked' }), '@reply wrote'), permissionMode: 'default' });
  const pending = await waitFor(async () => (await asking.status()).approvals[0], 'the approval request');
  expect(pending).toMatchObject({ tool: 'FileWrite', summary: 'FileWrite: default-asks.txt' });
  expect(existsSync(join(h.workspaceRoot, 'default-asks.txt'))).toBe(false);
  expect(await h.forkflow.approve('default-asks', pending.requestId)).toBe('approved');
  expect(await asking.result()).toMatchObject({ status: 'completed', text: 'wrote' });
  expect(existsSync(join(h.workspaceRoot, 'default-asks.txt'))).toBe(true);
  await recordHistory(h.client.workflow.getHandle('default-asks'), 'default-mode-asks');

  // The input's allow rule: the same write runs unasked.
  const ruled = await h.forkflow.start({ agentId: 'default-ruled', prompt: script('Write.', toolStep('FileWrite', { file_path: 'default-ruled.txt', content: 'ruled' }), '@reply wrote'), permissionMode: 'default', permissionRules: { allow: ['FileWrite'] } });
  expect(await ruled.result()).toMatchObject({ status: 'completed', text: 'wrote' });
  expect((await ruled.status()).approvals).toEqual([]);
  // Claude Code's Tool(specifier) rules are refused by name.
  await expect(h.forkflow.start({ agentId: 'default-specifier', prompt: 'x', permissionMode: 'default', permissionRules: { allow: ['Bash(npm test:*)'] } })).rejects.toThrow(/Tool\(specifier\) rules are not supported/);

  // A named agent whose definition says `default`, under a root that asks nothing (acceptEdits, the default): its own mode applies.
  const writer = { name: 'writer', description: 'Writes.', systemPrompt: 'You write.', sourceFile: 'writer.md', permissionMode: 'default' as const };
  const child = script('Write it.', toolStep('FileWrite', { file_path: 'named-default.txt', content: 'named' }), '@reply child wrote');
  const root = await h.forkflow.startAgent({ agentId: 'default-named', prompt: script('Delegate.', agentStep({ subagent_type: 'writer', prompt: child }), '@reply done'), subAgents: { forkGate: false, agents: [writer] } });
  expect((await root.status()).permissionMode).toBe('acceptEdits');
  const childPending = await waitFor(async () => (await h.forkflow.status('default-named.spawn-1').catch(() => undefined))?.approvals[0], "the named agent's approval request");
  expect((await h.forkflow.status('default-named.spawn-1')).permissionMode).toBe('default');
  expect(await h.forkflow.approve('default-named.spawn-1', childPending.requestId)).toBe('approved');
  expect(await root.result()).toMatchObject({ status: 'completed', text: 'done' });
  expect(existsSync(join(h.workspaceRoot, 'named-default.txt'))).toBe(true);
});

test('a decision that arrives after its request expired is queued to the agent as a message, not refused; the call is not run (S1-86)', async () => {
  const prompt = script('Write.', toolStep('FileWrite', { file_path: 'late.txt', content: 'late' }), toolStep('Glob', { pattern: '*.none' }, '@sleep 4000 '), '@reply unreachable: the late message is the next prompt');
  const handle = await h.forkflow.start({ agentId: 'approval-late', prompt, permissionMode: 'bubble', approval: { timeout: '1s', onTimeout: 'deny' } });
  // The request expires (the model reads "Not run"), then the late decision comes.
  const requestId = await waitFor(async () => {
    const results = toolResultsIn(await h.forkflow.transcript('approval-late').catch(() => []));
    if (!results[0]?.text.includes('nobody approved')) return undefined;
    const uses = (await h.forkflow.transcript('approval-late')).flatMap((m) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content : []));
    return uses.find((b) => b.type === 'tool_use' && b.name === 'FileWrite')?.id as string | undefined;
  }, 'the expired request');
  expect(await h.forkflow.approve('approval-late', requestId, { by: 'ops-oncall' })).toBe('approved');
  // Decided once: a second decision is refused as for an unknown request.
  await expect(h.forkflow.approve('approval-late', requestId)).rejects.toThrow(/No pending approval/);
  // The scripted model reads the queued message as its next prompt, and reports on it.
  expect(await handle.result()).toMatchObject({ status: 'completed', text: expect.stringContaining('[late permission decision by ops-oncall]') as string });
  expect(existsSync(join(h.workspaceRoot, 'late.txt'))).toBe(false);
  const delivered = (await h.forkflow.transcript('approval-late')).filter((m) => m.role === 'user').map((m) => JSON.stringify(m.content));
  expect(delivered.some((t) => t.includes('[late permission decision by ops-oncall]') && t.includes('FileWrite: late.txt') && t.includes('approved by ops-oncall after it had stopped waiting, so it was not run'))).toBe(true);
});

test("bubble asks the parent agent too (subAgents.parentApprovals): a sync child's request moves it to the background, the parent's AnswerApproval decides it (S1-59)", async () => {
  const asker = { name: 'asker', description: 'Asks before it writes.', systemPrompt: 'You write carefully.', sourceFile: 'asker.md', permissionMode: 'bubble' as const };
  const child = script('Write it.', toolStep('FileWrite', { file_path: 'parent-approved.txt', content: 'approved by my parent' }), '@reply child wrote');
  const prompt = script(
    'Delegate.',
    agentStep({ subagent_type: 'asker', prompt: child }),
    toolStep('AnswerApproval', { agent_id: 'parent-answers.spawn-1', decision: 'approve', reason: 'a file in the workspace' }),
    '@reply answered',
    // The child's report may come after that turn (then one more).
    '@reply done',
  );
  const root = await h.forkflow.startAgent({ agentId: 'parent-answers', prompt, subAgents: { forkGate: false, parentApprovals: true, agents: [asker] } });
  expect((await root.result()).status).toBe('completed');
  const results = toolResultsIn(await h.forkflow.transcript('parent-answers'));
  // The Agent call waited on its sync child, which asked: it moved to the background so the parent could answer.
  expect(results[0]!.json).toMatchObject({ status: 'async_launched', agentId: 'parent-answers.spawn-1', note: 'moved to the background by its permission request' });
  expect(results[1]!.json).toMatchObject({ status: 'sent', agentId: 'parent-answers.spawn-1', decision: 'approve' });
  const request = (await h.forkflow.transcript('parent-answers')).flatMap((m) => (m.role === 'user' && Array.isArray(m.content) ? m.content : [])).find((b) => b.type === 'text' && b.text.startsWith('[permission request from'));
  expect(request).toMatchObject({ text: expect.stringContaining('asks to run FileWrite: parent-approved.txt') as string });
  await waitFor(async () => (await h.forkflow.status('parent-answers.spawn-1')).state === 'completed', 'the child to finish');
  expect(readFileSync(join(h.workspaceRoot, 'parent-approved.txt'), 'utf8')).toBe('approved by my parent');
  // Without the setting the tool is not offered, and its name is as unknown as it always was.
  const plain = await h.forkflow.startAgent({ agentId: 'parent-not-asked', prompt: script('Try.', toolStep('AnswerApproval', { agent_id: 'x', decision: 'approve' }), '@reply ok'), subAgents: { forkGate: false } });
  expect((await plain.result()).status).toBe('completed');
  expect(toolResultsIn(await h.forkflow.transcript('parent-not-asked'))[0]).toMatchObject({ isError: true, text: expect.stringContaining('Tool "AnswerApproval" is not available') as string });
});
