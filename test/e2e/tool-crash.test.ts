/**
 * Crash tests for bring-your-own tools, each worker SIGKILLed mid-call and replaced:
 * - a TypeScript service's worker during an idempotent tool: the call runs again (attempt 2)
 *   and the fork's transcript equals an uninterrupted run's; during a non-idempotent tool:
 *   the model gets "interrupted, it may have partly run" exactly once, the tool ran once;
 * - a Python service's worker (which never heartbeats) during a non-idempotent tool: the
 *   same, found out by the call's own time limit;
 * - the forkflow worker holding a stdio MCP session, during an idempotent call: the server is
 *   started again on the other worker, the call runs again and its result tells the model the
 *   server's state is gone; the killed worker's private server directory is swept; during a
 *   call configured non-idempotent: interrupted, once.
 * No fork is left stuck, and no workflow task fails.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { ForkflowClient, type ForkHandle } from '../../src/client';
import type { StreamEvent } from '../../src/shared/streams/stream-events';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { everythingStdio, testServerRules } from '../kit/mcp/servers';
import { startWorkerProcess, type WorkerProcess } from '../kit/processes';
import { startPythonToolWorker, startTsToolWorker, type ServiceProcess } from '../kit/service-processes';
import { script, toolResultsIn, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

jest.setTimeout(300_000);

const E = temporal.api.enums.v1.EventType;

let h: Harness;
let stateDir: string;
beforeAll(async () => {
  h = await startHarness({ name: 'tool-crash' });
  stateDir = tempDir('tool-crash');
});
afterAll(() => h.close());

const ledger = (file = 'ledger.txt') => (existsSync(join(stateDir, file)) ? readFileSync(join(stateDir, file), 'utf8').split('\n').filter(Boolean) : []);
/** The marker a slow tool writes when it starts (TypeScript: per agent; Python: per label). */
const started = (marker: string) => waitFor(() => existsSync(join(stateDir, marker)), `${marker} to appear`, 60_000);

async function events(id: string) {
  return (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
}
async function noTaskFailures(id: string) {
  expect((await events(id)).filter((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toEqual([]);
}

describe('a service tool worker SIGKILLed mid-call', () => {
  let queue: string;
  let worker: ServiceProcess;
  beforeAll(async () => {
    queue = uniqueTaskQueue('crash-desk');
    worker = await startTsToolWorker({ address: h.env.address, namespace: h.env.namespace, taskQueue: queue, stateDir });
  });
  afterAll(() => worker.kill('SIGTERM'));

  const routes = () => [
    { tools: ['slow_step'], taskQueue: queue, idempotent: true, heartbeat: '2s', retry: { maximumAttempts: 3, initialInterval: '200ms' } },
    { tools: ['slow_charge'], taskQueue: queue, heartbeat: '2s' },
  ];

  test('an idempotent tool runs again on a new worker; the transcript equals an uninterrupted run', async () => {
    const prompt = script('Compute.', toolStep('slow_step', { ms: 3000, label: 'idem' }), '@reply computed');
    // The same conversation, uninterrupted.
    await h.forkflow.fork({ agentId: 'crash-idem-ref', prompt, routes: routes() }, { mode: 'sync' });
    const handle = await h.forkflow.start({ agentId: 'crash-idem', prompt, routes: routes() });
    await started('started-idem-crash-idem-1');
    await worker.kill('SIGKILL');
    worker = await startTsToolWorker({ address: h.env.address, namespace: h.env.namespace, taskQueue: queue, stateDir });
    expect(await handle.result()).toMatchObject({ status: 'completed', text: 'computed' });
    expect(await h.forkflow.transcript('crash-idem')).toEqual(await h.forkflow.transcript('crash-idem-ref'));
    // It ran twice: attempt 1 on the lost worker, attempt 2 on the new one.
    const runs = ledger().filter((l) => l.startsWith('slow_step')).map((l) => l.split(' ')[2]);
    expect(runs).toEqual(['1', '1', '2']);
    await noTaskFailures('crash-idem');
  });

  test('a non-idempotent tool: "interrupted, it may have partly run" exactly once, never run again', async () => {
    const prompt = script('Charge.', toolStep('slow_charge', { ms: 3000, label: 'once' }), '@reply charged or not');
    const handle = await h.forkflow.start({ agentId: 'crash-once', prompt, routes: routes() });
    await started('started-once-crash-once-1');
    await worker.kill('SIGKILL');
    worker = await startTsToolWorker({ address: h.env.address, namespace: h.env.namespace, taskQueue: queue, stateDir });
    expect(await handle.result()).toMatchObject({ status: 'completed', text: 'charged or not' });
    const results = toolResultsIn(await h.forkflow.transcript('crash-once'));
    expect(results).toEqual([{ isError: true, text: 'slow_charge was interrupted: its worker stopped heartbeating (no beat within 2 s); it may have partly run. It was not run again: check its effect before you run it again.' }]);
    expect(ledger().filter((l) => l.startsWith('slow_charge'))).toHaveLength(1);
    const calls = (await events('crash-once')).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'forkflow.callTool');
    expect(calls).toHaveLength(1);
    await noTaskFailures('crash-once');
  });
});

test('a Python service (no heartbeats) SIGKILLed mid-call: the call\'s time limit finds it; interrupted once', async () => {
  const queue = uniqueTaskQueue('py-crash');
  let py = await startPythonToolWorker({ address: h.env.address, namespace: h.env.namespace, taskQueue: queue, stateDir });
  try {
    const prompt = script('Charge.', toolStep('slow_charge', { ms: 3000, label: 'py' }), '@reply done');
    const handle = await h.forkflow.start({ agentId: 'crash-python', prompt, routes: [{ tools: ['slow_charge'], taskQueue: queue, timeout: '4s' }] });
    await started('py-started-py-1');
    await py.kill('SIGKILL');
    py = await startPythonToolWorker({ address: h.env.address, namespace: h.env.namespace, taskQueue: queue, stateDir });
    expect(await handle.result()).toMatchObject({ status: 'completed', text: 'done' });
    expect(toolResultsIn(await h.forkflow.transcript('crash-python'))).toEqual([
      { isError: true, text: 'slow_charge was interrupted: no answer within its 4 s limit (its worker may have been lost); it may have partly run. It was not run again: check its effect before you run it again.' },
    ]);
    expect(ledger('py-ledger.txt').filter((l) => l.startsWith('slow_charge'))).toHaveLength(1);
    await noTaskFailures('crash-python');
  } finally {
    await py.kill('SIGTERM');
  }
});

describe('the forkflow worker holding a stdio MCP session SIGKILLed mid-call', () => {
  let queue: string;
  let forkflow: ForkflowClient;
  let workers: WorkerProcess[] = [];
  // The workers' state directory, theirs alone: its mcp-servers/ holds the servers' private directories.
  let state: string;
  const serverDirs = () => (existsSync(join(state, 'mcp-servers')) ? readdirSync(join(state, 'mcp-servers')) : []);
  // The workers' operator allows the test's MCP servers, and the refused-start test's `node -e` server (by flag: how an operator would).
  const workerOpts = () => ({ address: h.env.address, taskQueue: queue, modelUrl: h.model.url, workspace: h.workspaceRoot, bundlePath: h.env.bundlePath, extraEnv: { FORKFLOW_STATE_DIR: state }, extraArgs: [...testServerRules(), `${process.execPath} -e *`].flatMap((r) => ['--mcp-command', r]) });
  beforeAll(async () => {
    queue = uniqueTaskQueue('mcp-crash');
    forkflow = new ForkflowClient(h.client, { taskQueue: queue });
    state = tempDir('mcp-crash-state');
    workers = await Promise.all([startWorkerProcess(workerOpts()), startWorkerProcess(workerOpts())]);
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill()));
  });

  const longOp = (extra = {}) => ({ everything: everythingStdio({ include: ['trigger-long-running-operation'], ...extra }) });
  const prompt = script('Run the long op.', toolStep('mcp__everything__trigger-long-running-operation', { duration: 4, steps: 8 }), '@reply op over');

  /** Starts `agentId`, waits for its call to be under way (a progress event), SIGKILLs the worker holding its session. */
  async function killHolderMidCall(handle: ForkHandle): Promise<void> {
    const stream = handle.stream();
    for await (const e of stream as AsyncGenerator<StreamEvent>) if (e.type === 'tool-progress') break;
    await stream.return(undefined);
    const status = await handle.status();
    const holder = /@mcp-.*-(\d+)-[0-9a-f]{8}$/.exec(status.mcpServers?.[0]?.sessionQueue ?? '')?.[1];
    const victim = workers.find((w) => String(w.child.pid) === holder);
    expect(victim).toBeDefined();
    await victim!.kill('SIGKILL');
    workers = workers.filter((w) => w !== victim);
  }

  test("an idempotent call: the server starts again on the other worker, the call runs again and tells the model the server's state is gone; the killed worker's server directory is swept", async () => {
    expect((await forkflow.fork({ agentId: 'mcp-crash-ref', prompt, mcpServers: longOp() }, { mode: 'sync' })).status).toBe('completed');
    await waitFor(() => serverDirs().length === 0, 'the reference run to close its server');
    const handle = await forkflow.start({ agentId: 'mcp-crash-idem', prompt, mcpServers: longOp() });
    await killHolderMidCall(handle);
    // The dead worker's directory is left by it, until the server starts again on the other worker.
    expect(await handle.result()).toMatchObject({ status: 'completed', text: 'op over' });
    const [ref] = toolResultsIn(await forkflow.transcript('mcp-crash-ref'));
    const [rerun] = toolResultsIn(await forkflow.transcript('mcp-crash-idem'));
    expect(rerun).toEqual({ isError: false, text: `[MCP server "everything" was started again before this call: its session was started again, so state from earlier calls of it is gone.]\n${ref!.text}` });
    // No private directory left: the killed worker's was swept, the new session's removed at the end.
    await waitFor(() => serverDirs().length === 0, 'no MCP server directory to be left');
    const history = await events('mcp-crash-idem');
    const named = (type: string) => history.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type);
    expect(named('mcpOpen')).toHaveLength(2);
    expect(named('mcpCall')).toHaveLength(2);
    await noTaskFailures('mcp-crash-idem');
  });

  test('a required server whose start is refused on every retry leaves no private directory', async () => {
    const dying = { command: process.execPath, args: ['-e', 'process.stderr.write("no licence key\\n"); process.exit(3)'], startTimeout: '3s' };
    const refused = await forkflow.fork({ agentId: 'mcp-crash-refused', prompt: '@reply never', mcpServers: { licensed: dying }, requiredMcpServers: ['licensed'] }, { mode: 'sync' }).then(() => undefined, (e: unknown) => e);
    expect(String(refused)).toContain('MCP server "licensed" is unavailable (tried for 3 s)');
    expect(serverDirs()).toEqual([]);
  });

  test('a call configured non-idempotent: interrupted exactly once, the model told the server was started again', async () => {
    workers.push(await startWorkerProcess(workerOpts()));
    const handle = await forkflow.start({ agentId: 'mcp-crash-once', prompt, mcpServers: longOp({ traits: { 'trigger-long-running-operation': { readOnly: false, idempotent: false } } }) });
    await killHolderMidCall(handle);
    expect(await handle.result()).toMatchObject({ status: 'completed', text: 'op over' });
    const results = toolResultsIn(await forkflow.transcript('mcp-crash-once'));
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ isError: true, text: expect.stringContaining('mcp__everything__trigger-long-running-operation was interrupted: the worker running the call was lost; it may have partly run. It was not run again') as string });
    expect(results[0]!.text).toContain('its session was started again, so state from earlier calls of it is gone');
    const history = await events('mcp-crash-once');
    expect(history.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'mcpCall')).toHaveLength(1);
    expect((await handle.status()).mcpServers?.[0]).toMatchObject({ state: 'ready', restarts: 1 });
    await noTaskFailures('mcp-crash-once');
  });
});
