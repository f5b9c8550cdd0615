/**
 * Interrupt is not kill (issue 32 item 5, seed 001 S1-62/S1-68), against the dev server and the
 * offline model: an interrupt during a model call or a long tool call stops it, leaves a
 * transcript the Messages API takes (every tool_use answered), and the agent waits for its
 * next message while its background sub-agent keeps running and is reported; an operator
 * moves a running sync sub-agent to the background; bad or pointless requests are refused.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ForkflowError, InvalidInputError } from '../../src/client';
import { blocksOf, textOf, toolUsesOf, type MessageParam } from '../../src/shared/messages-api/anthropic';
import { interruptSignal } from '../../src/shared/tree/interrupt';
import { startHarness, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';
import { historyEvents, typesOf } from '../kit/history-order';
import { bodyOf, messageRequests } from '../kit/requests';
import { agentStep, notificationsIn, script, toolResultsIn } from '../kit/tree';
import { rejectionOf, waitFor } from '../kit/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'interrupt' });
});
afterAll(() => h.close());

/** A Bash step that runs until `gate` (a file in the workspace) exists. */
const gated = (gate: string) => `@tool Bash ${JSON.stringify({ command: `while [ ! -f ${gate} ]; do sleep 0.05; done; echo released` })}`;
const noSubAgentFork = { forkGate: false };

/** Every tool_use is answered by a tool_result in the next message, and no two assistant turns touch. */
function expectValidForMessagesApi(transcript: MessageParam[]): void {
  expect(transcript[0]!.role).toBe('user');
  transcript.forEach((m, i) => {
    if (m.role === 'assistant') expect(transcript[i - 1]?.role).toBe('user');
    const uses = toolUsesOf(m);
    if (uses.length === 0) return;
    const answered = blocksOf(transcript[i + 1]!).flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
    expect(answered).toEqual(uses.map((u) => u.id));
  });
}

const statusOf = (id: string) => h.forkflow.status(id);

test('an interrupt during a model call aborts it; the agent waits, resumes on a message, and its background child still reports', async () => {
  const gate = join(h.workspaceRoot, 'gate-model');
  const child = script('Child.', gated(gate), '@reply child done');
  const root = script('Root.', agentStep({ description: 'background work', subagent_type: 'general-purpose', prompt: child, run_in_background: true }), '@sleep 60000 @reply never');
  await h.forkflow.startAgent({ agentId: 'int-model', prompt: root, subAgents: noSubAgentFork });
  const second = await h.model.log.waitFor((e) => e.outcome === 'pending' && textOf(bodyOf(e).messages[0] ?? { role: 'user', content: '' }).includes('Root.') && bodyOf(e).messages.length === 3);
  await waitFor(async () => (await statusOf('int-model.spawn-1')).activity === 'tool Bash' || undefined, 'the background child to be in its Bash call');

  const answer = await h.forkflow.interrupt('int-model', { reason: 'changed my mind' });
  expect(answer).toEqual({ agentId: 'int-model', turn: 2, during: 'model call', continues: false });
  // Resolved once the turn stopped: the request was aborted, the agent waits, its child runs on.
  await h.model.log.waitFor((e) => e.seq === second.seq && e.outcome === 'aborted');
  const idle = await statusOf('int-model');
  expect(idle).toMatchObject({ state: 'idle', turns: 1, children: { running: 1 }, interrupts: { count: 1, last: { by: 'operator', reason: 'changed my mind', during: 'model call', turn: 2 } } });
  const stopped = await h.forkflow.transcript('int-model');
  expect(stopped.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'user']);
  expect(textOf(stopped[3]!)).toContain('interrupted by operator (changed my mind) before you replied');
  expect(stopped.some((m) => m.role === 'assistant' && textOf(m).includes('never'))).toBe(false);
  // Interrupting again finds nothing in flight: refused, and nothing changes.
  const again = await rejectionOf(h.forkflow.interrupt('int-model'));
  expect(again).toBeInstanceOf(ForkflowError);
  expect((again as Error).message).toMatch(/nothing to interrupt/);

  expect(await h.forkflow.sendMessage('int-model', { message: '@reply resumed\n@reply saw the report' })).toBe('queued');
  await waitFor(async () => (await statusOf('int-model')).lastText === 'resumed' || undefined, 'the agent to answer the message');
  writeFileSync(gate, '');
  const result = await h.forkflow.result('int-model');
  expect(result).toMatchObject({ status: 'completed', text: 'saw the report', stopReason: 'end_turn' });
  expect((await h.forkflow.result('int-model.spawn-1')).status).toBe('completed');
  const transcript = await h.forkflow.transcript('int-model');
  expectValidForMessagesApi(transcript);
  const notes = notificationsIn(transcript);
  expect(notes).toHaveLength(1);
  expect(notes[0]).toContain('child done');
  // The model saw the interruption note, then the message, in one (merged) user turn.
  const resumed = messageRequests(h.model).find((e) => textOf(bodyOf(e).messages.at(-1)!).includes('@reply resumed'))!;
  expect(bodyOf(resumed).messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  expect(textOf(bodyOf(resumed).messages[2]!)).toContain('interrupted by operator');
  await recordHistory(h.client.workflow.getHandle('int-model'), 'interrupt-during-model-call');
});

test('an interrupt with a message during a long tool call stops it; each tool_use keeps an interrupted result; the agent goes on at once', async () => {
  const gate = join(h.workspaceRoot, 'gate-tool');
  const written = join(h.workspaceRoot, 'never-written.txt');
  const prompt = script('Work.', `@tools ${JSON.stringify([{ name: 'Bash', input: { command: `while [ ! -f ${gate} ]; do sleep 0.05; done; echo released` } }, { name: 'Write', input: { file_path: written, content: 'x' } }])}`, '@reply never reached');
  const handle = await h.forkflow.start({ agentId: 'int-tool', prompt });
  await waitFor(async () => (await handle.status()).activity === 'tool Bash' || undefined, 'the Bash call to be running');

  const answer = await handle.interrupt({ by: 'lead', reason: 'wrong approach', message: '@reply redirected', summary: 'new plan' });
  expect(answer).toEqual({ agentId: 'int-tool', turn: 1, during: 'tool calls', continues: true });
  const result = await handle.result();
  expect(result).toMatchObject({ status: 'completed', text: 'redirected', turns: 2 });
  expect(existsSync(written)).toBe(false);
  const transcript = await h.forkflow.transcript('int-tool');
  expectValidForMessagesApi(transcript);
  const [bash, write] = toolResultsIn(transcript);
  expect(bash).toMatchObject({ isError: true, text: 'Interrupted by lead before it finished: its effects so far, if any, are unknown.' });
  expect(write).toMatchObject({ isError: true, text: 'Not run: the turn was interrupted by lead.' });
  const boundary = textOf(transcript[2]!);
  expect(boundary).toContain('interrupted by lead (wrong approach) during your tool calls');
  expect(boundary).toContain('@reply redirected');
  // The Bash activity was cancelled (its process group killed), not left to run out.
  const order = typesOf(await historyEvents(h.client.workflow.getHandle('int-tool')));
  expect(order).toContain('EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED');
  expect(order).toContain('EVENT_TYPE_ACTIVITY_TASK_CANCELED');
  await recordHistory(h.client.workflow.getHandle('int-tool'), 'interrupt-during-tool-call');
});

test('an operator moves a running sync child to the background: the parent goes on and hears its outcome later', async () => {
  const gate = join(h.workspaceRoot, 'gate-sync');
  const child = script('Sync child.', gated(gate), '@reply sync child done');
  const root = script('Parent.', agentStep({ description: 'foreground work', subagent_type: 'general-purpose', prompt: child }), '@reply went on', '@reply got the late report');
  await h.forkflow.startAgent({ agentId: 'int-bg', prompt: root, subAgents: noSubAgentFork });
  await waitFor(async () => (await statusOf('int-bg.spawn-1')).activity === 'tool Bash' || undefined, 'the sync child to be in its Bash call');

  expect(await rejectionOf(h.forkflow.background('int-bg'))).toBeInstanceOf(ForkflowError); // a root has no parent
  expect(await h.forkflow.background('int-bg.spawn-1')).toEqual({ agentId: 'int-bg.spawn-1', parentId: 'int-bg', moved: true });
  await waitFor(async () => (await statusOf('int-bg')).lastText === 'went on' || undefined, 'the parent to go on');
  const moved = toolResultsIn(await h.forkflow.transcript('int-bg'))[0]!;
  expect(moved.json).toMatchObject({ status: 'async_launched', agentId: 'int-bg.spawn-1', note: 'moved to the background by operator' });
  expect((await statusOf('int-bg.spawn-1')).state).toBe('running');

  writeFileSync(gate, '');
  const result = await h.forkflow.result('int-bg');
  expect(result).toMatchObject({ status: 'completed', text: 'got the late report' });
  const notes = notificationsIn(await h.forkflow.transcript('int-bg'));
  expect(notes).toHaveLength(1);
  expect(notes[0]).toContain('sync child done');
});

test('interrupting a parent waiting on a sync child stops that child (part of the turn) with its partial result', async () => {
  const child = script('Doomed child.', '@sleep 60000 @reply never');
  const root = script('Parent.', agentStep({ description: 'foreground work', subagent_type: 'general-purpose', prompt: child }), '@reply unreachable');
  await h.forkflow.startAgent({ agentId: 'int-sync', prompt: root, subAgents: noSubAgentFork });
  await waitFor(async () => (await statusOf('int-sync.spawn-1').catch(() => undefined))?.activity === 'model turn 1' || undefined, 'the sync child to be in its model call');

  expect(await h.forkflow.interrupt('int-sync')).toMatchObject({ during: 'tool calls', turn: 1 });
  expect((await statusOf('int-sync.spawn-1')).state).toBe('killed');
  const status = await statusOf('int-sync');
  expect(status.state).toBe('idle');
  const transcript = await h.forkflow.transcript('int-sync');
  expectValidForMessagesApi(transcript);
  expect(toolResultsIn(transcript)[0]).toMatchObject({ isError: true, json: { status: 'killed', agentId: 'int-sync.spawn-1' } });
  await h.forkflow.cancel('int-sync');
  expect((await h.forkflow.result('int-sync')).status).toBe('killed');
});

test('bad interrupts are refused where they arrive and change nothing', async () => {
  const idle = await h.forkflow.start({ agentId: 'int-idle', prompt: 'Idle.\n@reply first', idleTimeout: '60s' });
  await waitFor(async () => (await idle.status()).state === 'idle' || undefined, 'the agent to go idle');
  // The client checks input before sending; the workflow refuses what has nothing to act on.
  expect(await rejectionOf(idle.interrupt({ reason: '' }))).toBeInstanceOf(InvalidInputError);
  const refused = await rejectionOf(idle.interrupt({ reason: 'late' }));
  expect((refused as Error).message).toMatch(/no model or tool call in flight \(it is idle\)/);
  expect(await rejectionOf(h.forkflow.background('int-idle.spawn-9'))).toBeInstanceOf(ForkflowError);
  // The signal twin (for workflows) records its refusals in status instead.
  const raw = h.client.workflow.getHandle('int-idle');
  await raw.signal(interruptSignal, { reason: 42 } as never);
  await raw.signal(interruptSignal, {});
  const status = await waitFor(async () => {
    const s = await idle.status();
    return s.rejectedSignals.length >= 2 ? s : undefined;
  }, 'both signals to be refused');
  expect(status.rejectedSignals.map((r) => r.signal)).toEqual(['interruptTurn', 'interruptTurn']);
  expect(status.rejectedSignals[1]!.issues[0]).toMatch(/nothing to interrupt/);
  expect(status).toMatchObject({ state: 'idle', turns: 1 });
  expect(status.interrupts).toBeUndefined();
  await idle.cancel();
});

test('the interruptTurn signal (how a parent workflow interrupts) stops a turn as the update does', async () => {
  // Interrupted in its second call: a first call's prompt and the message would reach the scripted model as one user turn, its script first.
  const handle = await h.forkflow.start({ agentId: 'int-signal', prompt: 'Signal me.\n@tool Glob {"pattern":"*"}\n@sleep 60000 @reply never', idleTimeout: '60s' });
  const call = await h.model.log.waitFor((e) => e.outcome === 'pending' && JSON.stringify(e.body ?? '').includes('Signal me.') && bodyOf(e).messages.length === 3);
  await h.client.workflow.getHandle('int-signal').signal(interruptSignal, { by: 'int-parent', message: '@reply after the signal' });
  await h.model.log.waitFor((e) => e.seq === call.seq && e.outcome === 'aborted');
  const status = await waitFor(async () => {
    const s = await handle.status();
    return s.lastText === 'after the signal' && s.state === 'idle' ? s : undefined;
  }, 'the agent to go on with the message');
  expect(status).toMatchObject({ turns: 2, rejectedSignals: [], interrupts: { count: 1, last: { by: 'int-parent', during: 'model call', turn: 2 } } });
  const transcript = await h.forkflow.transcript('int-signal');
  expectValidForMessagesApi(transcript);
  expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'user', 'assistant']);
  expect(textOf(transcript[3]!)).toContain('interrupted by int-parent before you replied');
  expect(textOf(transcript[3]!)).toContain('[message from int-parent, summary: interrupting message]');
  await handle.cancel();
});

test('a parent model interrupts its own running sub-agent with SendMessage interrupt: the turn stops and the child acts on the message at once', async () => {
  const gate = join(h.workspaceRoot, 'gate-parent');
  const child = script('Child.', gated(gate), '@reply never reached');
  const root = script('Parent.', agentStep({ description: 'background work', subagent_type: 'general-purpose', name: 'worker', prompt: child, run_in_background: true }), '@reply launched');
  const parent = await h.forkflow.startAgent({ agentId: 'int-send', prompt: root, subAgents: { forkGate: false, spawnControls: true } });
  const childId = 'int-send.worker-1';
  await waitFor(async () => (await statusOf(childId).catch(() => undefined))?.activity === 'tool Bash' || undefined, 'the child to be in its Bash call');
  await waitFor(async () => (await parent.status()).lastText === 'launched' || undefined, 'the parent to wait');

  const send = (to: string, message: string) => `@tool SendMessage ${JSON.stringify({ to, message, summary: 'redirect', interrupt: true })}`;
  await parent.sendMessage({ message: script(send('worker', '@reply redirected by its parent'), '@reply sent', send('worker', 'too late'), send('int-send', 'myself'), '@reply done'), summary: 'go' });
  expect(await parent.result()).toMatchObject({ status: 'completed', text: 'done' });

  // The child's Bash call was stopped by its parent, and it went on with the message in the same run.
  const childResult = await h.forkflow.result(childId);
  expect(childResult).toMatchObject({ status: 'completed', text: 'redirected by its parent', turns: 2 });
  expect(await statusOf(childId)).toMatchObject({ interrupts: { count: 1, last: { by: 'int-send', during: 'tool calls', turn: 1 } }, rejectedSignals: [] });
  const childTranscript = await h.forkflow.transcript(childId);
  expectValidForMessagesApi(childTranscript);
  expect(toolResultsIn(childTranscript)[0]).toMatchObject({ isError: true, text: 'Interrupted by int-send before it finished: its effects so far, if any, are unknown.' });
  expect(textOf(childTranscript[2]!)).toContain('[message from int-send, summary: redirect]');

  const results = toolResultsIn(await h.forkflow.transcript('int-send'));
  expect(results[1]).toMatchObject({ isError: false, json: { status: 'interrupting', agentId: childId } });
  // Once it finished there is no turn to stop; an agent that is not its sub-agent is not reached.
  expect(results[2]).toMatchObject({ isError: true });
  expect(results[2]!.text).toContain(`${childId} has finished (completed): there is no turn to interrupt`);
  expect(results[3]!.text).toContain('interrupt reaches only a sub-agent of yours, and "int-send" is not one');
  // The gate was never opened: the command did not run to its end.
  expect(existsSync(gate)).toBe(false);
});

test('an interruptTurn signal with a message that finds no turn in flight queues the message instead of dropping it', async () => {
  const idle = await h.forkflow.start({ agentId: 'int-late', prompt: 'Idle.\n@reply first', idleTimeout: '60s' });
  await waitFor(async () => (await idle.status()).state === 'idle' || undefined, 'the agent to go idle');
  await h.client.workflow.getHandle('int-late').signal(interruptSignal, { by: 'int-parent', message: '@reply acted on it', summary: 'late' });
  const status = await waitFor(async () => {
    const s = await idle.status();
    return s.lastText === 'acted on it' && s.state === 'idle' ? s : undefined;
  }, 'the agent to act on the queued message');
  expect(status).toMatchObject({ turns: 2, rejectedSignals: [] });
  expect(status.interrupts).toBeUndefined();
  expect(textOf((await h.forkflow.transcript('int-late'))[2]!)).toContain('[message from int-parent, summary: late]');
  await idle.cancel();
});
