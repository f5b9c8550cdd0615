/**
 * Agent trees over time: cancelling a root stops its whole subtree fast and keeps the
 * partial results; a failing leaf leaves its parent running; SendMessage reaches running,
 * idle, closed and unknown agents as specified; TaskOutput/TaskStop; approvals.
 */
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { AgentNotFoundError } from '../../src/client';
import { textOf, type MessageParam } from '../../src/shared/messages-api/anthropic';
import { CARRIED_STATE_VERSION } from '../../src/shared/wire/carried-state';
import type { ForkInputJson } from '../../src/shared/wire/fork-input';
import { startHarness, type Harness } from '../kit/env';
import { recordCarriedState, recordHistory, startInputOf } from '../kit/histories';
import { afterCancelRequest, historyEvents, NEW_WORK, typesOf } from '../kit/history-order';
import { bodyOf, lastMessage, messageRequests } from '../kit/requests';
import { agentStep, notificationsIn, script, toolResultsIn, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'tree-life' });
});
afterAll(() => h.close());

const hang = '@sleep 60000 @reply never';

test('cancelling a root ends a 3-level tree killed at once, aborting every in-flight call; partial results go up', async () => {
  const leaf = script('Leaf.', hang);
  const middle = script('Middle.', agentStep({ description: 'leaf', subagent_type: 'general-purpose', prompt: leaf, run_in_background: true }), hang);
  const root = script('Root.', agentStep({ description: 'middle', subagent_type: 'general-purpose', prompt: middle, run_in_background: true }), hang);
  const handle = await h.forkflow.startAgent({ agentId: 'cascade', prompt: root, subAgents: { forkGate: false, nested: true } });
  const pending = () => h.model.log.entries().filter((e) => e.outcome === 'pending' && /(Root|Middle|Leaf)\./.test(textOf(bodyOf(e).messages[0] ?? { role: 'user', content: '' })));
  await waitFor(() => pending().length === 3 || undefined, 'root, middle and leaf each to be in a model call');
  const inFlight = pending().map((e) => e.seq);

  await handle.cancel();
  const result = await handle.result();
  expect(result.status).toBe('killed');
  for (const id of ['cascade', 'cascade.spawn-1', 'cascade.spawn-1.spawn-1']) expect((await h.forkflow.status(id)).state).toBe('killed');
  // "At once" as each level's history tells it: the first workflow task after the request
  // cancels the level's model call (and its child), nothing new starts, and the level closes
  // (last event) after its call was cancelled and its child came back.
  for (const [id, hasChild] of [['cascade', true], ['cascade.spawn-1', true], ['cascade.spawn-1.spawn-1', false]] as const) {
    const { firstTask, all } = afterCancelRequest(await historyEvents(h.client.workflow.getHandle(id)));
    const first = typesOf(firstTask);
    expect(first).toContain('EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED');
    if (hasChild) expect(first).toContain('EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED');
    expect(all.filter((e) => NEW_WORK.has(e.eventType!))).toEqual([]);
    const order = typesOf(all);
    expect(order).toContain('EVENT_TYPE_ACTIVITY_TASK_CANCELED');
    expect(order.at(-1)).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
    // A cancelled fork returns its partial result: its parent sees the child complete (killed), then closes.
    if (hasChild) expect(order).toContain('EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED');
  }
  for (const seq of inFlight) await h.model.log.waitFor((e) => e.seq === seq && e.outcome === 'aborted');
  expect(result.children).toEqual([expect.objectContaining({ agentId: 'cascade.spawn-1', state: 'killed' })]);
  const middleResult = await h.forkflow.result('cascade.spawn-1');
  expect(middleResult.children).toEqual([expect.objectContaining({ agentId: 'cascade.spawn-1.spawn-1', state: 'killed' })]);
  await recordHistory(h.client.workflow.getHandle('cascade'), 'tree-cancel-cascade');
});

test('a failing leaf is reported to its parent, which keeps running and completes', async () => {
  const prompt = script('Parent.', agentStep({ description: 'bad leaf', prompt: 'Broken.\n@no-such-instruction' }), '@reply waiting', '@reply handled the failure');
  const result = await h.forkflow.startAgent({ agentId: 'leaf-fails', prompt }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'handled the failure' });
  const note = notificationsIn(await h.forkflow.transcript('leaf-fails'))[0]!;
  expect(note).toContain('<status>failed</status>');
  expect(note).toContain('unknown instruction');
});

test('a failed sync child answers its Agent call with an is_error result: its error and what it did; the parent goes on (S1-104)', async () => {
  const child = script('Broken later.', toolStep('Glob', { pattern: '*.none' }), '@fail 400 @reply never');
  const prompt = script('Parent.', agentStep({ description: 'bad sync child', subagent_type: 'general-purpose', prompt: child }), '@reply handled the failure');
  const result = await h.forkflow.startAgent({ agentId: 'sync-fails', prompt, subAgents: { forkGate: false } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'handled the failure' });
  const [answer] = toolResultsIn(await h.forkflow.transcript('sync-fails'));
  // Never rethrown into the parent's turn: the failure is data the model reads, with the child's partial work.
  expect(answer).toMatchObject({ isError: true, json: { status: 'failed', agentId: 'sync-fails.spawn-1', toolUses: 1, error: expect.stringContaining('400') as string } });
  expect(notificationsIn(await h.forkflow.transcript('sync-fails'))).toEqual([]);
});

test('host_mode (subAgents.hostMode): the sub-agent stays for messages after its task, takes more work, and ends after its idle limit (S2-12)', async () => {
  const prompt = script(
    'Host.',
    agentStep({ description: 'host', subagent_type: 'general-purpose', name: 'helper', host_mode: true, prompt: 'First.\n@reply first answer' }),
    toolStep('SendMessage', { to: 'helper', message: '@reply second answer', summary: 'more' }),
    toolStep('TaskOutput', { task_id: 'hosting.helper-1', timeout_ms: 600000 }),
    '@reply done',
  );
  const result = await h.forkflow.startAgent({ agentId: 'hosting', prompt, subAgents: { forkGate: false, hostMode: true, teammateIdle: '2s' } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'done' });
  const [launched, sent, output] = toolResultsIn(await h.forkflow.transcript('hosting'));
  // Not a sync answer although the gate is off: it lives on in the background.
  expect(launched!.json).toMatchObject({ status: 'async_launched', agentId: 'hosting.helper-1', note: expect.stringContaining('It stays alive after its task (host_mode)') as string });
  expect(sent!.json).toMatchObject({ status: 'queued' });
  expect(output!.json).toMatchObject({ status: 'completed', content: 'second answer', is_final: true });
  expect((await h.forkflow.startAgent({ agentId: 'hosting-off', prompt: script('No host.', agentStep({ description: 'h', host_mode: true, prompt: 'x' }), '@reply ok'), subAgents: { forkGate: false } }).then((a) => a.result())).status).toBe('completed');
  // Without the setting it is the unknown key it always was.
  expect(toolResultsIn(await h.forkflow.transcript('hosting-off'))[0]).toMatchObject({ isError: true, text: expect.stringContaining('host_mode') as string });
});

test('SendMessage to a finished child dropped from the record (keepCompleted) is refused by name, with how to resume it instead (S1-94)', async () => {
  const prompt = script(
    'Two in a row.',
    agentStep({ description: 'one', subagent_type: 'general-purpose', prompt: 'One.\n@reply first' }),
    agentStep({ description: 'two', subagent_type: 'general-purpose', prompt: 'Two.\n@reply second' }),
    toolStep('SendMessage', { to: 'trimmed.spawn-1', message: 'Go on.', summary: 'more' }),
    '@reply done',
  );
  const result = await h.forkflow.startAgent({ agentId: 'trimmed', prompt, subAgents: { forkGate: false, keepCompleted: 1 } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'done' });
  const sent = toolResultsIn(await h.forkflow.transcript('trimmed'))[2]!;
  expect(sent).toMatchObject({ isError: true, text: expect.stringContaining('trimmed.spawn-1 is not on your record') as string });
  expect(sent.text).toContain('you keep your last 1 finished sub-agents, subAgents.keepCompleted');
  expect(sent.text).toContain('`forkflow send trimmed.spawn-1 <message>`');
  // What the refusal points to works: a client resumes it from its durable history.
  expect(await h.forkflow.sendMessage('trimmed.spawn-1', { message: '@reply resumed by a client', summary: 'resume' })).toBe('resumed');
  await waitFor(async () => (await h.forkflow.status('trimmed.spawn-1')).lastText === 'resumed by a client' || undefined, 'the client resume');
});

test('SendMessage to a running child queues it; to a finished child resumes it from its history', async () => {
  const worker = script('Work.', '@sleep 1500 @reply first part', '@reply second part');
  const prompt = script(
    'Coordinate.',
    agentStep({ description: 'worker', name: 'worker', prompt: worker }),
    toolStep('SendMessage', { to: 'worker', message: '@reply got the note', summary: 'a note' }),
    '@reply waiting',
    toolStep('SendMessage', { to: 'worker', message: '@reply resumed answer', summary: 'one more thing' }),
    '@reply waiting again',
    '@reply all done',
  );
  const result = await h.forkflow.startAgent({ agentId: 'msgs', prompt }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'all done' });
  const results = toolResultsIn(await h.forkflow.transcript('msgs'));
  expect(results[1]!.json).toMatchObject({ status: 'queued', agentId: 'msgs.worker-1' });
  expect(results[2]!.json).toMatchObject({ status: 'resumed', agentId: 'msgs.worker-1' });
  const notes = notificationsIn(await h.forkflow.transcript('msgs'));
  expect(notes).toHaveLength(2);
  expect(notes[0]).toContain('got the note');
  expect(notes[1]).toContain('resumed answer');
  // The resumed child continued its own conversation: the first run's messages come first.
  const child = await h.forkflow.transcript('msgs.worker-1');
  const replies = child.filter((m) => m.role === 'assistant').map((m) => textOf(m));
  expect(replies.slice(-3)).toEqual(['first part', 'got the note', 'resumed answer']);
  await recordHistory(h.client.workflow.getHandle('msgs.worker-1'), 'resume-by-send-message');
});

test('a message wakes an idle agent into exactly one new turn, whose request ends with the message', async () => {
  const idle = await h.forkflow.start({ agentId: 'idle-agent', prompt: 'Idle.\n@reply first', idleTimeout: '60s' });
  const idleWith = (text: string) => waitFor(async () => {
    const s = await idle.status();
    return (s.state === 'idle' && s.lastText === text) || undefined;
  }, `the agent to answer "${text}" and go idle`);
  await idleWith('first');
  expect(await h.forkflow.sendMessage('idle-agent', { message: '@reply second', summary: 's' })).toBe('queued');
  await idleWith('second');
  expect(await h.forkflow.sendMessage('idle-agent', { message: '@reply third' })).toBe('queued');
  await idleWith('third');

  // The offline model's own log: one call per user turn, as an uninterrupted conversation
  // needs, and every woken request ends with the message (never with the agent's last reply).
  const requests = messageRequests(h.model).filter((e) => textOf(bodyOf(e).messages[0] ?? { role: 'user', content: '' }).includes('Idle.'));
  expect(requests.map((e) => e.outcome)).toEqual(['completed', 'completed', 'completed']);
  expect(requests.map((e) => bodyOf(e).messages.map((m) => m.role))).toEqual([['user'], ['user', 'assistant', 'user'], ['user', 'assistant', 'user', 'assistant', 'user']]);
  expect(requests.slice(1).map((e) => textOf(lastMessage(e)))).toEqual(['[message summary: s]\n@reply second', '@reply third']);
  const transcript = await h.forkflow.transcript('idle-agent');
  expect(transcript.filter((m) => m.role === 'assistant').map((m) => textOf(m))).toEqual(['first', 'second', 'third']);
  // The last request carried the whole conversation so far (cache markers aside), nothing twice.
  const said = (m: MessageParam) => `${m.role}: ${textOf(m)}`;
  expect(transcript.slice(0, -1).map(said)).toEqual(bodyOf(requests[2]!).messages.map(said));
  expect((await idle.status()).turns).toBe(3);
  await idle.cancel();
  expect(await h.forkflow.result('idle-agent')).toMatchObject({ status: 'killed', text: 'third', turns: 3 });
  await recordHistory(h.client.workflow.getHandle('idle-agent'), 'wake-by-message');
});

test('client messages: a closed agent resumes as a new run from its history, an unknown one is an error', async () => {

  const closed = await h.forkflow.fork({ agentId: 'closed-agent', prompt: 'Closed.\n@reply before' }, { mode: 'sync' });
  expect(closed.status).toBe('completed');
  const before = await h.forkflow.transcript('closed-agent');
  expect(await h.forkflow.sendMessage('closed-agent', { message: '@reply after', summary: 'again' })).toBe('resumed');
  const after = await h.forkflow.result('closed-agent');
  expect(after).toMatchObject({ status: 'completed', text: 'after', turns: 2 });
  const transcript = await h.forkflow.transcript('closed-agent');
  expect(transcript.slice(0, before.length)).toEqual(before);
  expect(transcript).toHaveLength(before.length + 2);
  const resumed = await startInputOf<ForkInputJson>(h.client.workflow.getHandle('closed-agent'));
  expect(resumed.continuation?.state).toMatchObject({ v: CARRIED_STATE_VERSION, turns: 1 });
  await recordHistory(h.client.workflow.getHandle('closed-agent'), 'resume-by-message');
  recordCarriedState(resumed.continuation?.state, 'v2-client-resume');

  await expect(h.forkflow.sendMessage('never-existed', { message: 'hi' })).rejects.toBeInstanceOf(AgentNotFoundError);
});

test('TaskOutput takes the result (no notification follows); TaskStop stops only a running task', async () => {
  const agents = [
    { name: 'Agent', input: { description: 'quick', prompt: 'Quick.\n@sleep 1500 @reply quick result' } },
    { name: 'Agent', input: { description: 'slow', prompt: `Slow.\n${hang}` } },
  ];
  const prompt = script(
    'Manage.',
    `@tools ${JSON.stringify(agents)}`,
    toolStep('TaskOutput', { task_id: 'tasks.fork-1', timeout_ms: 20_000 }),
    toolStep('TaskStop', { task_id: 'tasks.fork-2' }),
    toolStep('TaskStop', { task_id: 'tasks.fork-1' }),
    '@reply managed',
  );
  const result = await h.forkflow.startAgent({ agentId: 'tasks', prompt }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'managed' });
  const transcript = await h.forkflow.transcript('tasks');
  const results = toolResultsIn(transcript);
  // Read while it was still running: the blocking read took the result, so no notification followed.
  expect(results[2]!.json).toMatchObject({ status: 'completed', content: 'quick result' });
  expect(results[3]!.json).toMatchObject({ status: 'killed', agentId: 'tasks.fork-2' });
  expect(results[4]).toMatchObject({ isError: true, text: expect.stringContaining('Only a running task can be stopped') as string });
  expect(notificationsIn(transcript)).toEqual([]);
});

test('TaskOutput: a blocking read gives up at its timeout, block:false answers at once; a stopped task reads killed', async () => {
  const prompt = script(
    'Poll.',
    agentStep({ description: 'slow', prompt: `Slow.\n${hang}` }),
    toolStep('TaskOutput', { task_id: 'poll.fork-1', timeout_ms: 300 }),
    toolStep('TaskOutput', { task_id: 'poll.fork-1', block: false }),
    toolStep('TaskStop', { task_id: 'poll.fork-1' }),
    toolStep('TaskOutput', { task_id: 'poll.fork-1', block: false }),
    toolStep('TaskOutput', { task_id: 'no-such-task' }),
    '@reply polled',
  );
  const result = await h.forkflow.startAgent({ agentId: 'poll', prompt }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'polled' });
  const results = toolResultsIn(await h.forkflow.transcript('poll'));
  expect(results[0]!.json).toMatchObject({ status: 'async_launched', agentId: 'poll.fork-1' });
  const stillRunning = { status: 'running', agentId: 'poll.fork-1', note: expect.stringContaining('still running') as string };
  expect(results[1]).toMatchObject({ isError: false, json: stillRunning });
  expect(results[2]).toMatchObject({ isError: false, json: stillRunning });
  expect(results[3]!.json).toMatchObject({ status: 'killed', agentId: 'poll.fork-1' });
  expect(results[4]).toMatchObject({ isError: true, json: { status: 'killed', agentId: 'poll.fork-1' } });
  expect(results[5]).toMatchObject({ isError: true, text: expect.stringContaining('No sub-agent "no-such-task"') as string });
  // The timed read waited on a workflow timer of its timeout_ms that fired; the non-blocking reads started none.
  const events = await historyEvents(h.client.workflow.getHandle('poll'));
  const timers = events.filter((e) => e.timerStartedEventAttributes).map((e) => e.timerStartedEventAttributes!.startToFireTimeout);
  expect(timers.map((t) => optionalTsToMs(t))).toEqual([300]);
  expect(events.filter((e) => e.timerFiredEventAttributes)).toHaveLength(1);
  expect(notificationsIn(await h.forkflow.transcript('poll'))).toEqual([]);
});

test('approvals (bubble): a write waits for a decision; approve runs it, deny reports why', async () => {
  const prompt = script(
    'Write twice.',
    toolStep('FileWrite', { file_path: 'approved.txt', content: 'yes' }),
    toolStep('FileWrite', { file_path: 'denied.txt', content: 'no' }),
    '@reply wrote',
  );
  const handle = await h.forkflow.start({ agentId: 'approvals', prompt, permissionMode: 'bubble' });
  const first = await waitFor(async () => {
    const s = await handle.status();
    return s.state === 'awaiting_approval' && s.approvals.length === 1 ? s.approvals[0] : undefined;
  }, 'the first approval request');
  expect(first.summary).toContain('approved.txt');
  await expect(h.forkflow.approve('approvals', 'no-such-request')).rejects.toThrow(/No pending approval/);
  expect(await h.forkflow.approve('approvals', first.requestId)).toBe('approved');
  const second = await waitFor(async () => {
    const s = await handle.status();
    return s.approvals[0]?.requestId !== first.requestId ? s.approvals[0] : undefined;
  }, 'the second approval request');
  expect(await h.forkflow.deny('approvals', second.requestId, { reason: 'not this file' })).toBe('denied');
  expect((await handle.result()).status).toBe('completed');
  const results = toolResultsIn(await h.forkflow.transcript('approvals'));
  expect(results[0]!.isError).toBe(false);
  expect(results[1]).toMatchObject({ isError: true, text: expect.stringContaining('Reason: not this file') as string });
  await recordHistory(h.client.workflow.getHandle('approvals'), 'approvals-approve-deny');
});
