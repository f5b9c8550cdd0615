/**
 * Three worker hosts on the self-hosted stack, each its own process with its own checkout
 * of one repository (same commit) and its own host id, serving one task queue. One host is
 * SIGKILLed mid-run: forks whose work can move finish on the other two; a worktree fork
 * whose worktree lives on the lost host waits, and says so in its status, until that host
 * comes back; then it finishes too.
 */
import { join } from 'node:path';
import type { ForkflowClient } from '../../src/client';
import type { OfflineModel } from '../../src/offline';
import { startWorkerProcess, type WorkerProcess } from '../kit/processes';
import { messageRequests } from '../kit/requests';
import { hostCheckouts, startStackHarness, type StackHarness } from '../kit/stack';
import { waitFor } from '../kit/wait';

jest.setTimeout(900_000);

const HOSTS = ['host-a', 'host-b', 'host-c'];
const TURNS = 5;
const script = (tag: string) => [`Hosts fork ${tag}.`, `@repeat ${TURNS} @sleep 300 @tool Read {"file_path":"notes.txt"}`, `@reply ${tag} done`].join('\n');

let h: StackHarness;
let model: OfflineModel;
let forkflow: ForkflowClient;
let taskQueue: string;
const checkouts = new Map<string, string>();
const hosts = new Map<string, WorkerProcess>();

function startHost(host: string): Promise<WorkerProcess> {
  return startWorkerProcess({
    address: h.stack.address,
    taskQueue,
    modelUrl: model.url,
    workspace: checkouts.get(host)!,
    bundlePath: h.bundlePath,
    extraArgs: ['--host', host],
    // Each host keeps its own response store, as separate machines do.
    extraEnv: { FORKFLOW_RESPONSE_DIR: join(checkouts.get(host)!, '..', `${host}-responses`) },
  });
}

beforeAll(async () => {
  h = await startStackHarness('hosts');
  ({ model, forkflow, taskQueue } = h);
  // One repository, one commit, checked out once per host.
  for (const [host, checkout] of hostCheckouts(h.dir, HOSTS)) checkouts.set(host, checkout);
  for (const host of HOSTS) hosts.set(host, await startHost(host));
});

afterAll(async () => {
  for (const worker of hosts.values()) await worker.kill('SIGKILL');
  await h?.close();
});

test('a host SIGKILLed mid-run: movable forks finish on the others, a worktree fork waits for its host and finishes when it returns', async () => {
  const movable = Array.from({ length: 6 }, (_, i) => `movable-${i}`);
  for (const id of movable) await forkflow.start({ agentId: id, prompt: script(id) });
  await forkflow.start({ agentId: 'bound', prompt: script('bound'), isolation: 'worktree' });

  // The worktree fork's tool calls name its host; every fork has a call behind it.
  const bound = await waitFor(async () => {
    const s = await forkflow.status('bound').catch(() => undefined);
    return s && /on .*@host-/.test(s.activity ?? '') ? s : undefined;
  }, 'the worktree fork running a tool on its host', 120_000);
  const lost = /@(host-[a-c])/.exec(bound.activity!)![1]!;
  await model.log.waitFor(() => movable.every((id) => requestsOf(id) >= 2), { timeoutMs: 120_000 });

  const t0 = Date.now();
  await hosts.get(lost)!.kill('SIGKILL');
  const results = await Promise.all(movable.map((id) => forkflow.result(id)));
  const movedIn = Date.now() - t0;
  for (const [i, result] of results.entries()) expect(result).toMatchObject({ status: 'completed', text: `${movable[i]} done`, turns: TURNS + 1 });

  // Every movable fork is done; the bound one is not, and says where it waits. Its model
  // call may still be running (elsewhere, or retried off the lost host): its next tool call
  // is the one that waits for the host.
  const waiting = await waitFor(async () => {
    const s = await forkflow.status('bound');
    return s.state.match(/completed|failed/) || s.activity?.includes(`@${lost}`) ? s : undefined;
  }, 'the worktree fork waiting for its host', 60_000);
  expect(waiting.state).not.toMatch(/completed|failed/);
  expect(waiting.activity).toContain(`${taskQueue}@${lost}, the host of its worktree`);

  hosts.set(lost, await startHost(lost));
  const t1 = Date.now();
  const result = await forkflow.result('bound');
  expect(result).toMatchObject({ status: 'completed', text: 'bound done', turns: TURNS + 1 });
  console.log(`host loss: ${movable.length} movable forks done ${movedIn} ms after ${lost} was killed; the worktree fork finished ${Date.now() - t1} ms after ${lost} returned`);
});

function requestsOf(tag: string): number {
  return messageRequests(model).filter((e) => e.rawBody.includes(`Hosts fork ${tag}.`)).length;
}

