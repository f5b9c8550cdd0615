/**
 * Agent trees across crashes and machines: a child's notification reaches its parent once
 * even when the worker is SIGKILLed between the child's completion and the parent's next
 * turn; a pending approval survives a worker SIGKILL and a dev-server restart; a remote fork
 * runs on a second worker process polling another task queue; a tree lending budget shares
 * loses no usage when the root's worker and a member's worker are SIGKILLed and the root
 * continues as new.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ForkflowClient } from '../../src/client';
import { agentOutputFile } from '../../src/shared/tree/agent-output';
import { freePort, startDevServer } from '../../src/worker/dev-server';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { startGatewayProcess, startWorkerProcess } from '../kit/processes';
import { bodyOf } from '../kit/requests';
import { agentStep, notificationsIn, script, toolResultsIn, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';
import { addUsage, textOf, ZERO_USAGE, type Usage } from '../../src/shared/messages-api/anthropic';
import type { RequestLogEntry } from '../../src/offline';
import { forkflowConnectionOptions } from '../../src/client/connection-options';

/** The first line of a request's first message (each agent's prompt starts with its tag). */
function firstLineOf(e: RequestLogEntry): string {
  return textOf(bodyOf(e).messages[0] ?? { role: 'user', content: '' }).split('\n')[0] ?? '';
}

jest.setTimeout(180_000);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'tree-durable', noWorker: true });
});
afterAll(() => h.close());

const workerOpts = (address: string, taskQueue: string, bundlePath: string, workspace: string, extraArgs: string[] = []) => ({
  address,
  taskQueue,
  modelUrl: h.model.url,
  workspace,
  bundlePath,
  extraArgs,
});

test('a notification reaches the parent exactly once when the worker dies between the child’s end and the parent’s next turn', async () => {
  const taskQueue = uniqueTaskQueue('notify-kill');
  const forkflow = new ForkflowClient(h.client, { taskQueue });
  const opts = workerOpts(h.env.address, taskQueue, h.env.bundlePath, h.workspaceRoot);
  let worker = await startWorkerProcess(opts);
  try {
    const prompt = script('Parent.', agentStep({ description: 'child', prompt: 'Child.\n@reply child done' }), '@sleep 4000 @reply waiting', '@reply after the report');
    const parent = await forkflow.startAgent({ agentId: 'notify-once', prompt });
    // The child has finished while the parent's next model call is still in flight.
    await waitFor(async () => (await forkflow.status('notify-once.fork-1').catch(() => undefined))?.state === 'completed' || undefined, 'the child to complete', 60_000);
    await h.model.log.waitFor((e) => e.outcome === 'pending' && e.rawBody.includes('Parent.') && bodyOf(e).messages.length === 3);
    await worker.kill('SIGKILL');
    worker = await startWorkerProcess(opts);
    expect(await parent.result()).toMatchObject({ status: 'completed', text: 'after the report' });
    const transcript = await forkflow.transcript('notify-once');
    expect(notificationsIn(transcript)).toHaveLength(1);
    const last = h.model.log.entries().filter((e) => e.outcome === 'completed' && e.rawBody.includes('Parent.')).at(-1)!;
    expect(last.rawBody.split('<task-notification>').length - 1).toBe(1);
  } finally {
    await worker.kill();
  }
});

test('a pending approval survives a worker SIGKILL and a dev-server restart; approve then deny', async () => {
  const dir = tempDir('approval-durable');
  const dbFile = join(dir, 'temporal.db');
  const port = await freePort();
  let server = await startDevServer({ dbFile, port, headless: true, logLevel: 'error' });
  const workspace = tempDir('approval-ws');
  const taskQueue = uniqueTaskQueue('approval');
  const opts = workerOpts(server.address, taskQueue, h.env.bundlePath, workspace);
  let worker = await startWorkerProcess(opts);
  let connection = await Connection.connect(forkflowConnectionOptions({ address: server.address }));
  try {
    let forkflow = new ForkflowClient(new Client({ connection, namespace: server.namespace }), { taskQueue });
    const prompt = script('Two writes.', toolStep('FileWrite', { file_path: 'kept.txt', content: 'approved after a crash' }), toolStep('FileWrite', { file_path: 'refused.txt', content: 'no' }), '@reply finished');
    await forkflow.start({ agentId: 'durable-approval', prompt, permissionMode: 'bubble' });
    const pending = await waitFor(async () => (await forkflow.status('durable-approval')).approvals[0], 'the approval request');

    await worker.kill('SIGKILL');
    await connection.close();
    await server.stop();
    server = await startDevServer({ dbFile, port, headless: true, logLevel: 'error' });
    connection = await Connection.connect(forkflowConnectionOptions({ address: server.address }));
    forkflow = new ForkflowClient(new Client({ connection, namespace: server.namespace }), { taskQueue });
    worker = await startWorkerProcess(opts);

    const after = await forkflow.status('durable-approval');
    expect(after.state).toBe('awaiting_approval');
    expect(after.approvals).toEqual([pending]);
    expect(await forkflow.approve('durable-approval', pending.requestId, { by: 'ops' })).toBe('approved');
    const second = await waitFor(async () => {
      const s = await forkflow.status('durable-approval');
      return s.approvals[0]?.requestId !== pending.requestId ? s.approvals[0] : undefined;
    }, 'the second approval request');
    expect(await forkflow.deny('durable-approval', second.requestId, { reason: 'not today' })).toBe('denied');
    expect(await forkflow.result('durable-approval')).toMatchObject({ status: 'completed', text: 'finished' });
    expect(readFileSync(join(workspace, 'kept.txt'), 'utf8')).toBe('approved after a crash');
    expect(existsSync(join(workspace, 'refused.txt'))).toBe(false);
    const results = toolResultsIn(await forkflow.transcript('durable-approval'));
    expect(results[1]).toMatchObject({ isError: true, text: expect.stringContaining('Reason: not today') as string });
  } finally {
    await worker.kill();
    await connection.close();
    await server.stop();
  }
});

/**
 * A home worker and a remote one (its own task queue, workspace holding `file` and identity), a
 * client on the home queue; both workers are stopped when `run` ends.
 */
async function withRemoteWorker(name: string, file: { name: string; text: string }, identity: string, run: (forkflow: ForkflowClient, remoteQueue: string) => Promise<void>): Promise<void> {
  const taskQueue = uniqueTaskQueue(`home-${name}`);
  const remoteQueue = uniqueTaskQueue(`remote-${name}`);
  const remoteWorkspace = tempDir(`remote-${name}-ws`);
  writeFileSync(join(remoteWorkspace, file.name), file.text);
  const home = await startWorkerProcess(workerOpts(h.env.address, taskQueue, h.env.bundlePath, h.workspaceRoot));
  const remote = await startWorkerProcess({ ...workerOpts(h.env.address, remoteQueue, h.env.bundlePath, remoteWorkspace), extraArgs: ['--identity', identity] });
  try {
    await run(new ForkflowClient(h.client, { taskQueue }), remoteQueue);
  } finally {
    await home.kill();
    await remote.kill();
  }
}

/** The identities of the workers that completed the agent's workflow tasks. */
async function workerIdentities(agentId: string): Promise<string[]> {
  const events = (await h.client.workflow.getHandle(agentId).fetchHistory()).events ?? [];
  return [...new Set(events.flatMap((e) => (e.workflowTaskCompletedEventAttributes?.identity ? [e.workflowTaskCompletedEventAttributes.identity] : [])))];
}

test('a remote fork runs on a second worker process polling another task queue', async () => {
  await withRemoteWorker('fork', { name: 'remote-only.txt', text: 'on the remote machine\n' }, 'remote-worker', async (forkflow, remoteQueue) => {
    const child = script('Remote.', toolStep('Read', { file_path: 'remote-only.txt' }), '@reply read it remotely');
    const prompt = script('Home.', agentStep({ description: 'over there', isolation: 'remote', prompt: child }), '@reply waiting', '@reply heard back');
    const result = await forkflow
      .startAgent({ agentId: 'remote-parent', prompt, subAgents: { remoteTaskQueue: remoteQueue, uiBaseUrl: 'http://localhost:8233' } })
      .then((a) => a.result());
    expect(result).toMatchObject({ status: 'completed', text: 'heard back' });
    const transcript = await forkflow.transcript('remote-parent');
    expect(toolResultsIn(transcript)[0]!.json).toEqual({
      status: 'remote_launched',
      agentId: 'remote-parent.fork-1',
      workflowId: 'remote-parent.fork-1',
      taskQueue: remoteQueue,
      uiUrl: 'http://localhost:8233/namespaces/default/workflows/remote-parent.fork-1',
      // Seed 001's remote_launched fields (src/shared/tree/agent-output.ts).
      outputFile: agentOutputFile('remote-parent.fork-1'),
      description: 'over there',
    });
    expect(notificationsIn(transcript)[0]).toContain('read it remotely');
    expect(await workerIdentities('remote-parent.fork-1')).toEqual(['remote-worker']);
    expect(JSON.stringify(await forkflow.transcript('remote-parent.fork-1'))).toContain('on the remote machine');
  });
});

test("a named agent whose definition says isolation: remote runs on the remote workers without the call asking; a tree without them refuses it by name", async () => {
  await withRemoteWorker('def', { name: 'farm-only.txt', text: 'built on the farm\n' }, 'farm-worker', async (forkflow, remoteQueue) => {
    const cloud = { name: 'cloud', description: 'Builds on the farm.', systemPrompt: 'You build remotely.', isolation: 'remote' as const, sourceFile: 'inline' };
    const child = script('Build.', toolStep('Read', { file_path: 'farm-only.txt' }), '@reply built remotely');
    const call = agentStep({ description: 'build it', subagent_type: 'cloud', name: 'builder', prompt: child });
    const result = await forkflow
      .startAgent({ agentId: 'remote-def', prompt: script('Home.', call, '@reply waiting', '@reply heard back'), subAgents: { forkGate: false, agents: [cloud], remoteTaskQueue: remoteQueue } })
      .then((a) => a.result());
    expect(result).toMatchObject({ status: 'completed', text: 'heard back' });
    const childId = 'remote-def.builder-1';
    expect(toolResultsIn(await forkflow.transcript('remote-def'))[0]!.json).toMatchObject({ status: 'remote_launched', agentId: childId, taskQueue: remoteQueue });
    expect(await workerIdentities(childId)).toEqual(['farm-worker']);
    expect(JSON.stringify(await forkflow.transcript(childId))).toContain('built on the farm');

    // A call asking it to run here (in a worktree) wins over the definition (seed 001, S1-21): it runs on this
    // worker, not the farm (this workspace is no git repository, so its worktree cannot be made: it fails here).
    const here = await forkflow.startAgent({ agentId: 'remote-def-here', prompt: script('Home.', agentStep({ description: 'build here', subagent_type: 'cloud', isolation: 'worktree', prompt: child }), '@reply ran here'), subAgents: { forkGate: false, agents: [cloud], remoteTaskQueue: remoteQueue } }).then((a) => a.result());
    expect(here).toMatchObject({ status: 'completed', text: 'ran here' });
    const hereAnswer = toolResultsIn(await forkflow.transcript('remote-def-here'))[0]!;
    expect(hereAnswer.text).not.toContain('runs only on the remote workers');
    expect(hereAnswer.json).toMatchObject({ agentId: 'remote-def-here.spawn-1' });
    expect(await workerIdentities('remote-def-here.spawn-1')).not.toContain('farm-worker');

    // Without remote workers the same definition is refused, not run here in silence.
    const refused = await forkflow.startAgent({ agentId: 'remote-def-none', prompt: script('Home.', call, '@reply refused'), subAgents: { forkGate: false, agents: [cloud] } }).then((a) => a.result());
    expect(refused).toMatchObject({ status: 'completed', text: 'refused' });
    const answer = toolResultsIn(await forkflow.transcript('remote-def-none'))[0]!;
    expect(answer.isError).toBe(true);
    expect(answer.text).toContain('No remote workers are configured for this agent, and agent type "cloud" runs only on them (its definition says isolation: remote)');
  });
});

/** The worker that completed the latest workflow task of `agentId` (the one holding it now). */
async function holderOf(agentId: string): Promise<string | undefined> {
  const events = (await h.client.workflow.getHandle(agentId).fetchHistory()).events ?? [];
  return events.flatMap((e) => (e.workflowTaskCompletedEventAttributes?.identity ? [e.workflowTaskCompletedEventAttributes.identity] : [])).at(-1);
}

test("a SIGKILL of the root's worker and of a member's worker mid-tree, and the root continuing as new, lose no usage: every response the model served is charged once", async () => {
  const taskQueue = uniqueTaskQueue('tree-kill');
  const forkflow = new ForkflowClient(h.client, { taskQueue });
  const responses = tempDir('tree-kill-responses');
  const gateway = await startGatewayProcess(h.model.url, tempDir('tree-kill-gateway'));
  // Two workers on one queue: the tree spreads over both; each keeps its name when started again.
  const start = (identity: string) =>
    startWorkerProcess({ ...workerOpts(h.env.address, taskQueue, h.env.bundlePath, h.workspaceRoot, ['--identity', identity]), extraEnv: { FORKFLOW_RESPONSE_DIR: responses, FORKFLOW_MODEL_GATEWAY: gateway.url } });
  const workers = new Map([
    ['tree-w1', await start('tree-w1')],
    ['tree-w2', await start('tree-w2')],
  ]);
  const restart = async (identity: string) => {
    const w = workers.get(identity);
    if (!w) throw new Error(`no worker called ${identity}`);
    await w.kill('SIGKILL');
    workers.set(identity, await start(identity));
  };
  try {
    const tag = `Kill tree ${Date.now()}`;
    const member = (i: number) => `${tag} m${i}.\n@sleep 600 @tool Glob {"pattern":"*"}\n@sleep 600 @tool Glob {"pattern":"*"}\n@sleep 600 @reply member done`;
    const calls = Array.from({ length: 6 }, (_, i) => ({ name: 'Agent', input: { description: `member ${i}`, name: `m${i}`, prompt: member(i), run_in_background: true } }));
    const rootId = 'tree-kill-root';
    // The root continues as new every second turn: its ledger (and every member's share) crosses runs.
    const root = await forkflow.startAgent({
      agentId: rootId,
      prompt: `${tag} root.\n@tools ${JSON.stringify(calls)}\n@reply launched\n@repeat 20 @reply noted`,
      maxTurns: 30,
      budget: { maxTokens: 1_000_000 },
      continueAsNew: { turnsPerRun: 2 },
      subAgents: { forkGate: false, maxChildren: 6, maxTreeRunning: 7 },
    });
    const servedOf = () => h.model.log.entries().filter((e) => e.path === '/v1/messages' && e.outcome === 'completed' && firstLineOf(e).startsWith(tag));
    const membersServed = () => servedOf().filter((e) => !firstLineOf(e).endsWith('root.')).length;
    const memberCallInFlight = () => h.model.log.entries().some((e) => e.outcome === 'pending' && firstLineOf(e).startsWith(tag) && !firstLineOf(e).endsWith('root.'));
    await waitFor(() => (membersServed() >= 4 && memberCallInFlight() ? true : undefined), 'a few member calls and one in flight', 60_000);
    // Both workers die at once, so the root's worker and every member's worker die with calls in flight.
    expect(await holderOf(rootId)).toMatch(/^tree-w[12]$/);
    await Promise.all([...workers.keys()].map(restart));
    // Later (the root continues as new every second turn), the worker holding the root dies again.
    await waitFor(() => (membersServed() >= 10 ? true : undefined), 'more member calls', 120_000);
    await restart((await holderOf(rootId))!);
    const result = await root.result();
    expect(result.status).toBe('completed');
    // The root did continue as new (its latest run is not its first).
    expect((await h.client.workflow.getHandle(rootId).describe()).runId).not.toBe(root.runId);
    // Every member made its three calls; the model served each request once (the gateway finished
    // the ones a dead worker left in flight, and replayed them to the retry).
    const served = servedOf();
    expect(served.filter((e) => !firstLineOf(e).endsWith('root.'))).toHaveLength(18);
    expect(new Set(served.map((e) => e.rawBody)).size).toBe(served.length);
    // The ledger holds exactly what was served, agent by agent and field by field.
    const byAgent = new Map<string, Usage>();
    for (const e of served) {
      const key = /m(\d+)\.$/.exec(firstLineOf(e))?.[1] ?? 'root';
      const u = e.usage!;
      byAgent.set(key, addUsage(byAgent.get(key) ?? ZERO_USAGE, { ...ZERO_USAGE, inputTokens: u.input_tokens, outputTokens: u.output_tokens, cacheReadInputTokens: u.cache_read_input_tokens ?? 0, cacheCreationInputTokens: u.cache_creation_input_tokens ?? 0 }));
    }
    const nodes = Object.values(result.ledger!.nodes);
    expect(nodes).toHaveLength(7);
    for (const n of nodes) {
      const key = n.agentId === rootId ? 'root' : /\.m(\d+)-\d+$/.exec(n.agentId)![1]!;
      expect({ agent: n.agentId, usage: n.usage }).toEqual({ agent: n.agentId, usage: byAgent.get(key) });
    }
  } finally {
    for (const w of workers.values()) await w.kill();
    await gateway.stop();
  }
});
