/**
 * One provider rate limit, hit hard: the offline model admits 4 Messages requests per 2 s
 * and answers the rest 429 with `retry-after`. Ten forks of four turns each on the
 * self-hosted stack all complete; every refused call was retried no sooner than the
 * provider said.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { portsFrom } from '../../scripts/stack/config';
import { startStack, type Stack } from '../../scripts/stack/stack';
import { ForkflowClient } from '../../src/client';
import { startOfflineModel, type OfflineModel } from '../../src/offline';
import { bundleForkflowWorkflows } from '../../src/worker/bundle';
import { freePort } from '../../src/worker/dev-server';
import { createModelClient } from '../../src/worker/model-client';
import { createForkflowWorker } from '../../src/worker/worker';
import { tempDir, uniqueTaskQueue } from '../kit/env';
import { messageRequests } from '../kit/requests';
import { freeStackPorts } from '../kit/stack-ports';

jest.setTimeout(900_000);

const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: (m: string) => console.warn(m), error: (m: string) => console.error(m) };
const FORKS = 10;
const TURNS = 3;

let stack: Stack;
let model: OfflineModel;
let connection: Connection;
let native: NativeConnection;
let worker: Worker;
let running: Promise<void>;
let forkflow: ForkflowClient;

beforeAll(async () => {
  const dir = tempDir('rate');
  chmodSync(dir, 0o755);
  const workspace = tempDir('rate-ws');
  writeFileSync(join(workspace, 'notes.txt'), 'alpha\n');
  const [started, bundle, m] = await Promise.all([
    startStack({ dir, ports: portsFrom(await freeStackPorts()) }),
    bundleForkflowWorkflows(quiet),
    startOfflineModel({ port: await freePort(), rateLimit: { requests: 4, perMs: 2000 } }),
  ]);
  stack = started;
  model = m;
  const bundlePath = join(dir, 'bundle.js');
  writeFileSync(bundlePath, bundle);
  connection = await Connection.connect({ address: stack.address });
  const client = new Client({ connection, namespace: stack.namespace });
  native = await NativeConnection.connect({ address: stack.address });
  const taskQueue = uniqueTaskQueue('rate');
  worker = await createForkflowWorker({ connection: native, client, namespace: stack.namespace, taskQueue, anthropic: createModelClient({ apiKey: 'k', baseURL: model.url }), workspaceRoot: workspace, workflowBundle: { codePath: bundlePath } });
  running = worker.run();
  forkflow = new ForkflowClient(client, { taskQueue });
});

afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running?.catch(() => undefined);
  await native?.close();
  await connection?.close();
  await model?.close();
  await stack?.stop();
});

test('a sustained 429 with retry-after slows the forks down and fails none', async () => {
  const ids = Array.from({ length: FORKS }, (_, i) => `rate-${i}`);
  const t0 = Date.now();
  for (const [i, id] of ids.entries()) await forkflow.start({ agentId: id, prompt: [`Rate fork ${i}.`, `@repeat ${TURNS - 1} @tool Read {"file_path":"notes.txt"}`, `@reply rate ${i} done`].join('\n') });
  const results = await Promise.all(ids.map((id) => forkflow.result(id)));
  for (const [i, result] of results.entries()) expect(result).toMatchObject({ status: 'completed', text: `rate ${i} done`, turns: TURNS });

  const requests = messageRequests(model);
  const refused = requests.filter((e) => e.status === 429);
  // The limit was really in the way, and every call still got through in the end.
  expect(refused.length).toBeGreaterThan(FORKS);
  expect(requests.filter((e) => e.outcome === 'completed')).toHaveLength(FORKS * TURNS);
  // Each refused call came back no sooner than retry-after said (the model's own timestamps).
  for (const r of refused) {
    // The emulator's 429 message carries the same whole seconds as its retry-after header.
    const wait = Number(/retry in (\d+) s/.exec(r.error?.message ?? '')?.[1]);
    expect(wait).toBeGreaterThanOrEqual(1);
    const next = requests.find((e) => e.seq > r.seq && e.rawBody === r.rawBody);
    expect(next).toBeDefined();
    expect(next!.receivedAt - r.endedAt!).toBeGreaterThanOrEqual(wait * 1000 - 50);
  }
  console.log(`rate limit: ${FORKS} forks x ${TURNS} turns done in ${Date.now() - t0} ms under 4 requests / 2 s; ${refused.length} calls answered 429, all retried after their retry-after`);
});
