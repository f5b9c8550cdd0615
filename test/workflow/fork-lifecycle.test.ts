/**
 * forkWorkflow against a real dev server and the offline model over HTTP: tools to
 * completion, status and transcript, messages at turn boundaries, cancel, timeout, max turns,
 * provider errors, invalid input and invalid signals.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { blocksOf, textOf, toolUsesOf } from '../../src/shared/messages-api/anthropic';
import { ResultAlreadyTakenError } from '../../src/client';
import { startHarness, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';
import { afterCancelRequest, historyEvents, NEW_WORK, typesOf } from '../kit/history-order';
import { bodyOf, lastMessage, messageRequests } from '../kit/requests';
import { rejectionOf, waitFor } from '../kit/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'lifecycle' });
  writeFileSync(join(h.workspaceRoot, 'notes.txt'), 'alpha\nbeta\ngamma\n');
});
afterAll(() => h.close());
beforeEach(() => h.model.log.clear());

test('runs tool calls to completion; status and transcript tell the story', async () => {
  const result = await h.forkflow.fork(
    {
      agentId: 'lifecycle-tools',
      forkLabel: 'reader',
      prompt: ['Read the notes.', '@tool Read {"file_path":"notes.txt"}', '@tool Grep {"pattern":"beta","output_mode":"content"}', '@reply Found beta.'].join('\n'),
    },
    { mode: 'sync' },
  );
  expect(result).toMatchObject({ status: 'completed', text: 'Found beta.', turns: 3, toolUses: 2, stopReason: 'end_turn', maxTurnsReached: false });
  expect(result.usage.outputTokens).toBeGreaterThan(0);

  const transcript = await h.forkflow.transcript('lifecycle-tools');
  expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
  const readResult = blocksOf(transcript[2]!)[0]!;
  expect(readResult).toMatchObject({ type: 'tool_result', tool_use_id: toolUsesOf(transcript[1]!)[0]!.id });
  expect(JSON.stringify(readResult)).toContain('gamma');
  expect(JSON.stringify(blocksOf(transcript[4]!)[0])).toContain('beta');

  const status = await h.forkflow.status('lifecycle-tools');
  expect(status).toMatchObject({ agentId: 'lifecycle-tools', state: 'completed', turns: 3, toolUses: 2, forkLabel: 'reader', pendingMessages: 0 });
  expect(status.usage).toEqual(result.usage);
  // The emulator saw exactly three model calls, each carrying the whole conversation so far.
  const requests = messageRequests(h.model);
  expect(requests.map((r) => bodyOf(r).messages.length)).toEqual([1, 3, 5]);
  await recordHistory(h.client.workflow.getHandle('lifecycle-tools'), 'tools-to-completion');
});

test('a message sent during a tool round enters after that round’s results', async () => {
  const gate = join(h.workspaceRoot, 'release-1');
  const handle = await h.forkflow.fork(
    {
      agentId: 'lifecycle-message',
      prompt: `Wait for the gate.\n@tool Bash {"command":"while [ ! -f ${gate} ]; do sleep 0.05; done; echo released"}\n@reply done`,
    },
    { mode: 'forget' },
  );
  await waitFor(async () => (await handle.status()).activity === 'tool Bash', 'the Bash tool to be running');
  await handle.sendMessage({ message: '@reply acknowledged', summary: 'ack please', from: 'operator' });
  await waitFor(async () => (await handle.status()).pendingMessages === 1, 'the message to be queued');
  writeFileSync(gate, '');
  const result = await handle.result();
  expect(result).toMatchObject({ status: 'completed', text: 'acknowledged', turns: 2 });

  const second = lastMessage(messageRequests(h.model)[1]!);
  const blocks = blocksOf(second);
  expect(blocks[0]).toMatchObject({ type: 'tool_result' });
  expect(JSON.stringify(blocks[0])).toContain('released');
  expect(blocks[1]).toMatchObject({ type: 'text' });
  expect(textOf({ role: 'user', content: [blocks[1]!] })).toContain('@reply acknowledged');
  expect(textOf({ role: 'user', content: [blocks[1]!] })).toContain('ack please');
  await recordHistory(h.client.workflow.getHandle('lifecycle-message'), 'message-during-tool-round');
});

test('cancel during a model call ends killed at once, with the partial result, and aborts the request', async () => {
  const handle = await h.forkflow.fork(
    { agentId: 'lifecycle-cancel', prompt: 'Look, then hang.\n@tool Glob {"pattern":"*.txt"}\n@sleep 60000 @reply never' },
    { mode: 'forget' },
  );
  await h.model.log.waitFor((e) => e.outcome === 'pending' && bodyOf(e).messages.length === 3);
  await handle.cancel();
  const result = await handle.result();
  expect(result.status).toBe('killed');
  expect(result.stopReason).toBe('cancelled');
  expect(result.turns).toBe(1);
  // "At once" as history tells it: the first workflow task after the request cancels the
  // model call, nothing new starts, and the call ends cancelled (not run out) before the run closes.
  const events = await historyEvents(h.client.workflow.getHandle('lifecycle-cancel'));
  const { firstTask, all } = afterCancelRequest(events);
  expect(typesOf(firstTask)).toContain('EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED');
  expect(all.filter((e) => NEW_WORK.has(e.eventType!))).toEqual([]);
  const order = typesOf(all);
  expect(order.indexOf('EVENT_TYPE_ACTIVITY_TASK_CANCELED')).toBeGreaterThan(order.indexOf('EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED'));
  expect(order.at(-1)).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
  expect(order).not.toContain('EVENT_TYPE_ACTIVITY_TASK_COMPLETED');
  const partial = await h.forkflow.transcript('lifecycle-cancel');
  expect(partial).toHaveLength(3);
  expect(result.text).toBe(textOf(partial[1]!).trim());
  const aborted = await h.model.log.waitFor((e) => e.outcome === 'aborted');
  expect(bodyOf(aborted).messages).toHaveLength(3);
  await recordHistory(h.client.workflow.getHandle('lifecycle-cancel'), 'cancel-during-model-call');
});

test('timeout cancels the fork and reports timeout', async () => {
  const result = await h.forkflow.fork(
    { agentId: 'lifecycle-timeout', prompt: 'Hang.\n@sleep 60000 @reply never', timeout: '1500ms' },
    { mode: 'sync' },
  );
  expect(result).toMatchObject({ status: 'timeout', stopReason: 'timeout', turns: 0 });
  expect(result.durationMs).toBeGreaterThanOrEqual(1500);
  await h.model.log.waitFor((e) => e.outcome === 'aborted');
  expect((await h.forkflow.status('lifecycle-timeout')).state).toBe('timeout');
  await recordHistory(h.client.workflow.getHandle('lifecycle-timeout'), 'timeout');
});

test('maxTurns reached is a normal completion with a flag; maxTurns 0 makes no model call', async () => {
  const capped = await h.forkflow.fork(
    { agentId: 'lifecycle-maxturns', prompt: 'Loop.\n@repeat 5 @tool Glob {"pattern":"*"}', maxTurns: 2 },
    { mode: 'sync' },
  );
  expect(capped).toMatchObject({ status: 'completed', stopReason: 'max_turns', maxTurnsReached: true, turns: 2, toolUses: 2 });
  expect(messageRequests(h.model)).toHaveLength(2);

  h.model.log.clear();
  const none = await h.forkflow.fork({ agentId: 'lifecycle-zero', prompt: 'Nothing.', maxTurns: 0 }, { mode: 'sync' });
  expect(none).toMatchObject({ status: 'completed', turns: 0, maxTurnsReached: true, text: '' });
  expect(messageRequests(h.model)).toHaveLength(0);
});

test('a 529 is retried after retry-after, without a duplicated message', async () => {
  const result = await h.forkflow.fork(
    { agentId: 'lifecycle-529', prompt: 'Overloaded once.\n@fail 529 x1 retry-after=1 @reply recovered' },
    { mode: 'sync' },
  );
  expect(result).toMatchObject({ status: 'completed', text: 'recovered', turns: 1 });
  const requests = messageRequests(h.model);
  expect(requests.map((r) => r.status)).toEqual([529, 200]);
  // Temporal waited for the provider's retry-after (1 s), not its own 1 s-and-growing default only by luck.
  expect(requests[1]!.receivedAt - requests[0]!.receivedAt).toBeGreaterThanOrEqual(900);
  expect(bodyOf(requests[1]!).messages).toEqual(bodyOf(requests[0]!).messages);
  const transcript = await h.forkflow.transcript('lifecycle-529');
  expect(transcript.filter((m) => m.role === 'assistant')).toHaveLength(1);
  await recordHistory(h.client.workflow.getHandle('lifecycle-529'), 'retry-after-529');
});

test('a 400 fails the fork at once with the provider’s message', async () => {
  const result = await h.forkflow.fork({ agentId: 'lifecycle-400', prompt: 'Bad.\n@nonsense-instruction' }, { mode: 'sync' });
  expect(result.status).toBe('failed');
  expect(result.error).toMatch(/unknown instruction/i);
  expect(result.error).toContain('@nonsense-instruction');
  expect(messageRequests(h.model)).toHaveLength(1); // non-retryable: asked once
  expect((await h.forkflow.status('lifecycle-400')).state).toBe('failed');
  await recordHistory(h.client.workflow.getHandle('lifecycle-400'), 'provider-400');
});

test('invalid input fails the workflow at once, with no workflow-task retry loop', async () => {
  const handle = await h.client.workflow.start('forkWorkflow', {
    taskQueue: h.taskQueue,
    workflowId: 'lifecycle-invalid',
    args: [{ prompt: '', maxTurns: -1, surprise: true }],
  });
  const err: unknown = await handle.result().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe('InvalidForkInput');
  expect(cause!.message).toContain('prompt');
  expect(cause!.message).toContain('maxTurns');
  const history = await handle.fetchHistory();
  const failedTasks = (history.events ?? []).filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
  expect(failedTasks).toHaveLength(0);
  expect(history.events!.length).toBeLessThanOrEqual(5); // started, task scheduled/started/completed, failed
  await recordHistory(handle, 'invalid-input');
});

test('an invalid signal payload is rejected, recorded in status, and the fork carries on', async () => {
  const handle = await h.forkflow.fork({ agentId: 'lifecycle-badsignal', prompt: 'Slow.\n@sleep 3000 @reply fine' }, { mode: 'forget' });
  await h.model.log.waitFor((e) => e.outcome === 'pending');
  const raw = h.client.workflow.getHandle('lifecycle-badsignal');
  await raw.signal('sendMessage', { message: 42, sneaky: true });
  const status = await waitFor(async () => {
    const s = await handle.status();
    return s.rejectedSignals.length > 0 ? s : undefined;
  }, 'the rejected signal to show in status');
  expect(status.rejectedSignals[0]!.signal).toBe('sendMessage');
  expect(status.rejectedSignals[0]!.issues.join(' ')).toMatch(/message/);
  expect(status.pendingMessages).toBe(0);
  expect(await handle.result()).toMatchObject({ status: 'completed', text: 'fine' });
  await recordHistory(h.client.workflow.getHandle('lifecycle-badsignal'), 'invalid-signal');
});

test("a handle's result is taken once; the client reads it again by agent id", async () => {
  const handle = await h.forkflow.fork({ agentId: 'lifecycle-once', prompt: 'Once.\n@reply only answer' }, { mode: 'forget' });
  const first = await handle.result();
  expect(first).toMatchObject({ status: 'completed', text: 'only answer' });
  const again = await rejectionOf(handle.result());
  expect(again).toBeInstanceOf(ResultAlreadyTakenError);
  expect((again as ResultAlreadyTakenError).message).toContain('client.result("lifecycle-once")');
  expect(await h.forkflow.result('lifecycle-once')).toEqual(first);
  expect(messageRequests(h.model)).toHaveLength(1); // reading twice asked the model nothing more
});
