/**
 * Live streams (issue 15), end to end on the dev server with the offline model generating
 * paced text: a subscriber sees a fork's text as it is written, through a worker SIGKILLed
 * mid-call (the abandoned attempt marked, the retry's text whole); resumes from a seq after
 * a reconnect; keeps a resent live batch once; follows the agent across continue-as-new with monotonic seqs; and `forkflow
 * watch` (with and without `--tree`) renders it in its own process.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WithStartWorkflowOperation, WorkflowUpdateStage } from '@temporalio/client';
import { ForkflowClient } from '../../src/client';
import { StreamAssembler } from '../../src/shared/streams/stream-assembly';
import type { StreamEvent, StreamLiveInput } from '../../src/shared/streams/stream-events';
import { streamLiveQuery, streamReadQuery } from '../../src/shared/wire/messages';
import { startHarness, uniqueTaskQueue, type Harness } from '../kit/env';
import { forkflowArgs, startWorkerProcess } from '../kit/processes';
import { bodyOf, messageRequests } from '../kit/requests';
import { agentStep, script, toolStep } from '../kit/tree';
import { rejectionOf, waitFor } from '../kit/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'live-stream' });
  writeFileSync(join(h.workspaceRoot, 'notes.txt'), 'alpha\nbeta\ngamma\n');
});
afterAll(() => h.close());

/** A reply long enough to be cut in the middle: ~50 deltas of a few words. */
const words = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');

/** The reply as the deltas alone carry it (`turn-end`'s copy left out): what a live viewer saw. */
function fromDeltas(events: StreamEvent[]): string {
  const assembled = new StreamAssembler();
  for (const e of events) if (e.type !== 'turn-end') assembled.apply(e);
  return assembled.lastText();
}

/** Collects a stream in the background; `events` fills as they arrive. */
function collect(stream: AsyncIterable<StreamEvent>) {
  const events: StreamEvent[] = [];
  const ended = (async () => {
    for await (const e of stream) events.push(e);
  })();
  return { events, ended };
}

test('a subscriber gets the rest of a reply after the worker is killed mid-call; the abandoned attempt is marked', async () => {
  const taskQueue = uniqueTaskQueue('live-kill');
  const forkflow = new ForkflowClient(h.client, { taskQueue });
  const workerOpts = { address: h.env.address, taskQueue, modelUrl: h.model.url, workspace: h.workspaceRoot, bundlePath: h.env.bundlePath };
  const first = await startWorkerProcess(workerOpts);
  const text = words('w', 120);
  const handle = await forkflow.fork({ agentId: 'live-kill', prompt: script('Write it out.', toolStep('Read', { file_path: 'notes.txt' }), `@pace 30 @reply ${text}`) }, { mode: 'forget' });
  const seen = collect(handle.stream());
  let second: Awaited<ReturnType<typeof startWorkerProcess>> | undefined;
  try {
    // Some of turn 2's text has reached the subscriber: the call is mid-stream.
    await waitFor(() => seen.events.filter((e) => e.type === 'text-delta' && e.turn === 2).length >= 3, 'turn 2 text on the stream', 60_000);
    const inFlight = messageRequests(h.model).find((e) => e.outcome === 'pending' && bodyOf(e).messages.length === 3);
    expect(inFlight).toBeDefined();
    await first.kill('SIGKILL');
    second = await startWorkerProcess(workerOpts);
    const result = await handle.result();
    await seen.ended;
    expect(result).toMatchObject({ status: 'completed', text, turns: 2 });

    const { events } = seen;
    const ofTurn2 = events.filter((e) => e.turn === 2);
    // The cut attempt streamed part of the text; the retry says it abandons it and streams the whole.
    const partial = ofTurn2.filter((e) => e.type === 'text-delta' && e.attempt === 1).map((e) => (e.type === 'text-delta' ? e.text : '')).join('');
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(text.length);
    expect(ofTurn2).toContainEqual(expect.objectContaining({ type: 'attempt-abandoned', attempt: 2, abandonedAttempt: 1 }));
    expect(ofTurn2).toContainEqual(expect.objectContaining({ type: 'turn-start', attempt: 2 }));

    const assembled = new StreamAssembler();
    for (const e of events) assembled.apply(e);
    expect(assembled.attempt(2)).toBe(2);
    expect(assembled.discarded(2)).toBeGreaterThan(0);
    expect(assembled.lastText()).toBe(result.text);
    expect(fromDeltas(events)).toBe(result.text);
    expect(assembled.done).toBe(true);

    // Order and shape: seqs strictly increase; turn 1's tool call and result come before turn 2; done is last.
    expect(events.every((e, i) => i === 0 || e.seq > events[i - 1]!.seq)).toBe(true);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['turn-start', 'tool-input-delta', 'tool-use', 'tool-result', 'turn-end', 'done']));
    expect(events.at(-1)).toMatchObject({ type: 'done', status: 'completed', stopReason: 'end_turn' });
    const toolResult = events.find((e) => e.type === 'tool-result');
    expect(toolResult).toMatchObject({ turn: 1, name: 'Read', isError: false });
  } finally {
    await first.kill('SIGKILL');
    await second?.kill();
  }
});

test('a subscriber that reconnects resumes from the seq after the last one it saw', async () => {
  const text = words('r', 60);
  // Paced to last ~4 s: the reconnect lands while the call still streams (a call that has not
  // run a second yet sends nothing to a subscriber that came after it was scheduled).
  const handle = await h.forkflow.fork({ agentId: 'live-resume', prompt: `Say it.\n@pace 200 @reply ${text}` }, { mode: 'forget' });
  const stop = new AbortController();
  const before: StreamEvent[] = [];
  for await (const e of handle.stream({ signal: stop.signal })) {
    before.push(e);
    if (before.filter((x) => x.type === 'text-delta').length === 2) stop.abort();
  }
  const last = before.at(-1)!;
  const after: StreamEvent[] = [];
  for await (const e of h.forkflow.stream('live-resume', { fromSeq: last.seq + 1 })) after.push(e);
  const result = await handle.result();

  // Seqs are ordered, not contiguous (stream-events.ts): the second read starts past the first's last, nothing read twice.
  expect(after[0]!.seq).toBeGreaterThan(last.seq);
  const all = [...before, ...after];
  expect(all.every((e, i) => i === 0 || e.seq > all[i - 1]!.seq)).toBe(true);
  const assembled = new StreamAssembler();
  for (const e of all) assembled.apply(e);
  expect(assembled.lastText()).toBe(result.text);
  expect(after.at(-1)?.type).toBe('done');
});

test('a live batch sent twice (its first answer lost) is kept once, at the same seqs', async () => {
  const handle = await h.forkflow.fork({ agentId: 'live-twice', prompt: `Say it.\n@pace 200 @reply ${words('t', 40)}` }, { mode: 'forget' });
  const wf = h.client.workflow.getHandle('live-twice');
  // A made-up later attempt of turn 1, as a publisher resending after a failed query would send it.
  const batch = {
    turn: 1,
    attempt: 7,
    from: 0,
    events: [
      { v: 1, agentId: 'live-twice', type: 'turn-start', turn: 1, attempt: 7 },
      { v: 1, agentId: 'live-twice', type: 'text-delta', turn: 1, attempt: 7, index: 0, text: 'once' },
    ],
  } as unknown as StreamLiveInput;
  const first = await wf.query(streamLiveQuery, batch);
  const again = await wf.query(streamLiveQuery, batch);
  expect(first.kept).toBe(2);
  expect(again.kept).toBe(0);
  expect(again.lastSeq).toBe(first.lastSeq);
  const read = await wf.query(streamReadQuery, { fromSeq: 0, now: Date.now() });
  const ofAttempt7 = read.events.filter((e) => (e as { attempt?: number }).attempt === 7);
  expect(ofAttempt7.map((e) => (e as { type: string }).type)).toEqual(['turn-start', 'text-delta']);
  await handle.result();
});

test('the stream follows continue-as-new: one subscription, seqs monotonic across runs', async () => {
  const turns = 5;
  const prompt = script('Loop.', ...Array.from({ length: turns - 1 }, () => toolStep('Read', { file_path: 'notes.txt' })), `@reply ${words('c', 20)}`);
  const handle = await h.forkflow.startAgent({ agentId: 'live-can', prompt, maxTurns: 10, continueAsNew: { turnsPerRun: 2 } });
  const seen = collect(handle.stream());
  const result = await handle.result();
  await seen.ended;
  const { events } = seen;
  expect(result).toMatchObject({ status: 'completed', turns });
  const runs = new Set<string>();
  for await (const w of h.client.workflow.list({ query: `WorkflowId = 'live-can'` })) runs.add(w.runId);
  expect(runs.size).toBeGreaterThan(1);
  expect(events.every((e, i) => i === 0 || e.seq > events[i - 1]!.seq)).toBe(true);
  expect(new Set(events.filter((e) => e.type === 'turn-end').map((e) => e.turn))).toEqual(new Set([1, 2, 3, 4, 5]));
  const assembled = new StreamAssembler();
  for (const e of events) assembled.apply(e);
  expect(assembled.lastText()).toBe(result.text);
});

/** `forkflow watch …` in its own process, its output readable while it runs. */
function watchProcess(...args: string[]) {
  const child = spawn(process.execPath, forkflowArgs(['--address', h.env.address, '--task-queue', h.taskQueue, 'watch', ...args]), { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { stdout: () => stdout, stderr: () => stderr, exited, kill: () => child.kill() };
}

test('forkflow watch renders the live text and tool calls of a fork until it ends', async () => {
  const text = words('t', 40);
  // The fork waits for an approval after its first turn: the watcher is surely attached before the text it must show.
  const prompt = script('Write it.', toolStep('FileWrite', { file_path: 'watched.txt', content: 'x' }), `@pace 10 @reply ${text}`);
  const handle = await h.forkflow.start({ agentId: 'live-watch', prompt, permissionMode: 'bubble' });
  const pending = await waitFor(async () => (await handle.status()).approvals[0], 'the approval request');
  const watch = watchProcess('live-watch');
  try {
    await waitFor(() => watch.stdout().includes('→ FileWrite'), 'the watcher to show the first turn', 60_000);
    await h.forkflow.approve('live-watch', pending.requestId);
    expect(await watch.exited).toBe(0);
    const out = watch.stdout();
    expect(watch.stderr()).toBe('');
    // Turn 1's model call ended before anyone watched, so it sent no deltas (they are sent only
    // while someone watches); the workflow's own events of it are in the log all the same.
    expect(out).not.toContain('── turn 1');
    expect(out).toContain('· turn 1 tool_use');
    expect(out).toContain('← FileWrite');
    expect(out).toContain(`── turn 2`);
    // The text arrives in many deltas; rendered, it reads whole.
    expect(out).toContain(`\n${text}\n`);
    expect(out.trimEnd().endsWith('■ completed (end_turn)')).toBe(true);
  } finally {
    watch.kill();
  }
});

test('forkflow watch --tree shows one line per agent of the tree and the focused agent\'s text', async () => {
  const text = words('root', 20);
  const prompt = script(
    'Lead.',
    agentStep({ description: 'helper', prompt: '@reply helper done', run_in_background: true }),
    toolStep('FileWrite', { file_path: 'tree.txt', content: 'x' }),
    `@pace 10 @reply ${text}`,
  );
  const handle = await h.forkflow.startAgent({ agentId: 'live-tree', prompt, permissionMode: 'bubble' });
  const pending = await waitFor(async () => (await handle.status()).approvals[0], 'the approval request', 60_000);
  const child = await waitFor(async () => (await h.forkflow.tree('live-tree')).agents.find((a) => a.agentId !== 'live-tree'), 'the child in visibility', 60_000);
  const watch = watchProcess('live-tree', '--tree', '--interval', '200');
  try {
    await waitFor(() => watch.stdout().includes(child.agentId) && watch.stdout().includes('→ FileWrite'), 'the tree lines and the first turns', 60_000);
    await h.forkflow.approve('live-tree', pending.requestId);
    expect(await watch.exited).toBe(0);
    const lines = watch.stdout().split('\n');
    // The root, focused; its child one level in (marker column, then two spaces a level).
    expect(lines).toContainEqual(expect.stringMatching(/^tree ▶ live-tree \[\w+\] · /));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^tree {5}${child.agentId.replace(/\./g, '\\.')} \\[helper\\] · `)));
    expect(watch.stdout()).toContain(`\n${text}\n`);
    expect(watch.stdout()).toContain('■ completed');
  } finally {
    watch.kill();
  }
});

test('a malformed publish batch or poll is refused without wedging the fork', async () => {
  const prompt = script('Wait.', toolStep('FileWrite', { file_path: 'hostile.txt', content: 'x' }), '@reply still fine');
  const handle = await h.forkflow.start({ agentId: 'live-hostile', prompt, permissionMode: 'bubble' });
  const pending = await waitFor(async () => (await handle.status()).approvals[0], 'the approval request');
  const wf = h.client.workflow.getHandle('live-hostile');
  await wf.signal('__temporal_workflow_stream_publish', { items: [{ topic: 'forkflow.events', data: '%%% not base64 payload %%%' }], publisher_id: 'p', sequence: 1 });
  await wf.signal('__temporal_workflow_stream_publish', { items: 'everything' });
  const poll = await rejectionOf(wf.executeUpdate('__temporal_workflow_stream_poll', { args: [{ topics: 'all', from_offset: -1 }] }));
  expect(String((poll as Error & { cause?: Error }).cause?.message)).toContain('Invalid stream poll');
  const rejected = await waitFor(async () => {
    const s = await handle.status();
    return s.rejectedSignals.length >= 2 ? s.rejectedSignals : undefined;
  }, 'both bad batches reported');
  expect(rejected.map((r) => r.signal)).toEqual(['__temporal_workflow_stream_publish', '__temporal_workflow_stream_publish']);
  // forkflow's own stream queries check their input the same way: a refused query, the fork unharmed.
  await expect(wf.query('streamRead', { fromSeq: -1 })).rejects.toThrow(/fromSeq/);
  await expect(wf.query('streamLive', { turn: 1, attempt: 99, from: 0, events: [] })).rejects.toThrow(/attempt/);
  await expect(wf.query('streamLive', { turn: 1, attempt: 1, from: 0, events: 'all' })).rejects.toThrow(/events/);
  // Events that are not this agent's live kind are not kept: a forged `done` or another agent's delta.
  expect(await wf.query('streamLive', { turn: 1, attempt: 1, from: 0, events: [{ v: 1, agentId: 'live-hostile', turn: 1, type: 'done', status: 'completed' }, { v: 1, agentId: 'someone-else', turn: 1, attempt: 1, type: 'text-delta', index: 0, text: 'x' }] })).toMatchObject({ kept: 0 });
  await h.forkflow.approve('live-hostile', pending.requestId);
  expect(await handle.result()).toMatchObject({ status: 'completed', text: 'still fine' });
});

/** Stream traffic in a history: publish signals and update events (polls) of any kind. */
async function streamTrafficIn(workflowId: string) {
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  return {
    signals: events.filter((e) => e.workflowExecutionSignaledEventAttributes).length,
    updates: events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes || e.workflowExecutionUpdateCompletedEventAttributes || e.workflowExecutionUpdateAdmittedEventAttributes).length,
  };
}

test('watching writes nothing to history: a subscriber from the start gets every delta, and the history has no signal or update', async () => {
  const text = words('h', 60);
  const prompt = script('Write it.', toolStep('Read', { file_path: 'notes.txt' }), `@pace 20 @reply ${text}`);
  const handle = await h.forkflow.start({ agentId: 'live-no-history', prompt });
  const seen = collect(handle.stream());
  const result = await handle.result();
  await seen.ended;
  const deltas = seen.events.filter((e) => e.type === 'text-delta' && e.turn === 2);
  expect(deltas.length).toBeGreaterThan(1);
  const assembled = new StreamAssembler();
  for (const e of seen.events) assembled.apply(e);
  expect(assembled.lastText()).toBe(result.text);
  expect(fromDeltas(seen.events)).toBe(result.text);
  expect(await streamTrafficIn('live-no-history')).toEqual({ signals: 0, updates: 0 });
});

test('nobody watching: no publish signal in history; a subscriber arriving mid-call still gets the call whole', async () => {
  const text = words('u', 80);
  const unwatched = await h.forkflow.fork({ agentId: 'live-unwatched', prompt: `Say it.\n@pace 5 @reply ${text}` }, { mode: 'sync' });
  expect(unwatched.text).toBe(text);
  const history = await h.client.workflow.getHandle('live-unwatched').fetchHistory();
  expect(history.events?.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === '__temporal_workflow_stream_publish')).toEqual([]);

  const handle = await h.forkflow.start({ agentId: 'live-late', prompt: `Say it.\n@pace 40 @reply ${text}` });
  // The call is streaming (its request began) before anyone subscribes.
  await h.model.log.waitFor((e) => e.outcome === 'pending' && e.responseBeganAt !== undefined && JSON.stringify(e.body ?? '').includes('u79'));
  const seen = collect(handle.stream());
  const result = await handle.result();
  await seen.ended;
  const assembled = new StreamAssembler();
  for (const e of seen.events) assembled.apply(e);
  expect(assembled.lastText()).toBe(result.text);
  expect(seen.events.at(-1)?.type).toBe('done');
});

test('a subscriber that polls with the fork\'s start is seen: its first call streams', async () => {
  // Update-with-start delivers the poll in the run's first task, before any handler exists:
  // the SDK buffers it and hands it to the first handler registered for its name.
  const agentId = 'live-with-start';
  const text = words('s', 30);
  const poll = await h.client.workflow.startUpdateWithStart('__temporal_workflow_stream_poll', {
    args: [{ topics: [], from_offset: 0 }],
    waitForStage: WorkflowUpdateStage.ACCEPTED,
    startWorkflowOperation: new WithStartWorkflowOperation('forkWorkflow', {
      workflowId: agentId,
      taskQueue: h.taskQueue,
      workflowIdConflictPolicy: 'FAIL',
      args: [{ prompt: `Say it.\n@pace 40 @reply ${text}`, overrides: { agentId } }],
    }),
  });
  const wf = h.client.workflow.getHandle(agentId);
  expect(await wf.query<boolean>('streamWatched')).toBe(true);
  const seen = collect(h.forkflow.stream(agentId));
  await poll.result();
  expect(await h.forkflow.result(agentId)).toMatchObject({ status: 'completed', text });
  await seen.ended;
  // The first call streamed its deltas (an unwatched call sends nothing), by query: no signal in history.
  expect(seen.events.filter((e) => e.type === 'text-delta').length).toBeGreaterThan(1);
  expect((await streamTrafficIn(agentId)).signals).toBe(0);
  const assembled = new StreamAssembler();
  for (const e of seen.events) assembled.apply(e);
  expect(assembled.lastText()).toBe(text);
});
