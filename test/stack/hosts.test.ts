/**
 * Three worker hosts on the self-hosted stack, each its own process with its own checkout
 * of one repository (same commit) and its own host id, serving one task queue. One host is
 * SIGKILLed mid-run: forks whose work can move finish on the other two; a worktree fork
 * whose worktree lives on the lost host waits, and says so in its status, until that host
 * comes back; then it finishes too.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { portsFrom } from '../../scripts/stack/config';
import { startStack, type Stack } from '../../scripts/stack/stack';
import { ForkflowClient } from '../../src/client';
import { startOfflineModel, type OfflineModel } from '../../src/offline';
import { bundleForkflowWorkflows } from '../../src/worker/bundle';
import { freePort } from '../../src/worker/dev-server';
import { tempDir, uniqueTaskQueue } from '../kit/env';
import { startWorkerProcess, type WorkerProcess } from '../kit/processes';
import { messageRequests } from '../kit/requests';
import { freeStackPorts } from '../kit/stack-ports';
import { waitFor } from '../kit/wait';

jest.setTimeout(900_000);

const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: (m: string) => console.warn(m), error: (m: string) => console.error(m) };

const HOSTS = ['host-a', 'host-b', 'host-c'];
const TURNS = 5;
const script = (tag: string) => [`Hosts fork ${tag}.`, `@repeat ${TURNS} @sleep 300 @tool Read {"file_path":"notes.txt"}`, `@reply ${tag} done`].join('\n');

let stack: Stack;
let model: OfflineModel;
let connection: Connection;
let forkflow: ForkflowClient;
let taskQueue: string;
let bundlePath: string;
const checkouts = new Map<string, string>();
const hosts = new Map<string, WorkerProcess>();

function startHost(host: string): Promise<WorkerProcess> {
  return startWorkerProcess({
    address: stack.address,
    taskQueue,
    modelUrl: model.url,
    workspace: checkouts.get(host)!,
    bundlePath,
    extraArgs: ['--host', host],
    // Each host keeps its own response store, as separate machines do.
    extraEnv: { FORKFLOW_RESPONSE_DIR: join(checkouts.get(host)!, '..', `${host}-responses`) },
  });
}

beforeAll(async () => {
  const dir = tempDir('hosts');
  chmodSync(dir, 0o755);
  // One repository, one commit, checked out once per host.
  const origin = join(dir, 'origin');
  mkdirSync(origin);
  writeFileSync(join(origin, 'notes.txt'), 'alpha\nbeta\n');
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'pipe' });
  git(origin, 'init', '-q', '-b', 'main');
  git(origin, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'empty');
  git(origin, 'add', 'notes.txt');
  git(origin, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'notes');
  for (const host of HOSTS) {
    const checkout = join(dir, host, 'repo');
    mkdirSync(join(dir, host), { recursive: true });
    git(dir, 'clone', '-q', origin, checkout);
    checkouts.set(host, checkout);
  }
  const [started, bundle, m] = await Promise.all([startStack({ dir: join(dir, 'stack'), ports: portsFrom(await freeStackPorts()) }), bundleForkflowWorkflows(quiet), startOfflineModel({ port: await freePort() })]);
  stack = started;
  model = m;
  bundlePath = join(dir, 'bundle.js');
  writeFileSync(bundlePath, bundle);
  taskQueue = uniqueTaskQueue('hosts');
  for (const host of HOSTS) hosts.set(host, await startHost(host));
  connection = await Connection.connect({ address: stack.address });
  forkflow = new ForkflowClient(new Client({ connection, namespace: stack.namespace }), { taskQueue });
});

afterAll(async () => {
  for (const worker of hosts.values()) await worker.kill('SIGKILL');
  await connection?.close();
  await model?.close();
  await stack?.stop();
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

  // Every movable fork is done; the bound one is not, and says where it waits.
  const waiting = await forkflow.status('bound');
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

