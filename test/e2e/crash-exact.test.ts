/**
 * Crash-exact, end to end: worker, server and offline model are separate processes. Twelve
 * forks of every shape run while the worker is SIGKILLed six times at seeded random moments
 * 1–6 s apart; three seeds in a row. Every fork completes with the transcript of an
 * uninterrupted run. The model's own log, read against the workers' journal of kept
 * responses, shows that no response that reached a worker was asked for again (the response
 * store hands it to the retry); a response the model had written but the worker never
 * received, because it died first, is a call interrupted mid-way and is counted. Then the
 * same forks against a server of their own that is stopped for 3 s and later for 30 s: the
 * worker and the driving client ride out both outages.
 */
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { ForkflowClient } from '../../src/client';
import { freePort, startDevServer, type DevServer } from '../../src/worker/dev-server';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { comparable, keptRequestIds, requestIdOf, seeded, seedWorkspace, servedTwice, startScenario } from '../kit/crash-scenario';
import { toolResultsIn } from '../kit/tree';
import { startModelProcess, startWorkerProcess, type ModelProcess, type WorkerProcess } from '../kit/processes';

jest.setTimeout(300_000);

let h: Harness;
let model: ModelProcess;
let workspace: string;
let reference: Map<string, string>;
const responses = tempDir('responses');
const journal = join(tempDir('journal'), 'kept.jsonl');
// One task queue for every run, as in production: the by-reference prefix is recorded once
// (its id is its content) and read by query, which needs a worker on the queue that recorded it.
const taskQueue = uniqueTaskQueue('crash');

beforeAll(async () => {
  h = await startHarness({ name: 'crash-exact', noWorker: true });
  model = await startModelProcess(`${tempDir('model-log')}/served.jsonl`);
  workspace = tempDir('crash-ws');
  seedWorkspace(workspace);
});
afterAll(async () => {
  await model?.kill();
  await h.close();
});

function worker(): Promise<WorkerProcess> {
  return startWorkerProcess({
    address: h.env.address,
    taskQueue,
    modelUrl: model.url,
    workspace,
    bundlePath: h.env.bundlePath,
    extraEnv: { FORKFLOW_RESPONSE_DIR: responses, FORKFLOW_RESPONSE_JOURNAL: journal },
  });
}

async function transcripts(forkflow: ForkflowClient, agentIds: string[], prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const agentId of agentIds) out.set(agentId.slice(prefix.length), comparable(await forkflow.transcript(agentId), prefix));
  return out;
}

test('the twelve forks run uninterrupted: the reference', async () => {
  const forkflow = new ForkflowClient(h.client, { taskQueue });
  const w = await worker();
  try {
    const prefix = `ref-${process.pid}`;
    const scenario = await startScenario(forkflow, prefix);
    const results = await scenario.results;
    expect(results.filter((r) => r.status !== 'completed')).toEqual([]);
    reference = await transcripts(forkflow, scenario.agentIds, prefix);
    expect(reference.size).toBe(14);
    // The yardstick itself is clean: every tool call in it worked.
    for (const agentId of scenario.agentIds) expect(toolResultsIn(await forkflow.transcript(agentId)).filter((r) => r.isError)).toEqual([]);
  } finally {
    await w.kill();
  }
});

test.each([20261123, 7, 4242])('seed %i: six SIGKILLs 1–6 s apart; every fork completes as uninterrupted, no response that reached a worker is asked for again', async (seed) => {
  expect(reference).toBeDefined();
  const forkflow = new ForkflowClient(h.client, { taskQueue });
  const before = Math.max(0, ...model.served().map((e) => e.seq));
  let w = await worker();
  const prefix = `crash-${seed}-${process.pid}`;
  try {
    const scenario = await startScenario(forkflow, prefix);
    let settled = false;
    void scenario.results.finally(() => (settled = true)).catch(() => undefined);
    // The crash schedule is the test's input, drawn from the seed; nothing waits on it for sync.
    const next = seeded(seed);
    let kills = 0;
    for (; kills < 6; kills++) {
      await delay(1000 + Math.floor(next() * 5000));
      if (settled) break;
      await w.kill('SIGKILL');
      w = await worker();
    }
    const results = await scenario.results;
    expect(kills).toBe(6);
    expect(results.map((r) => r.status)).toEqual(results.map(() => 'completed'));
    expect(await transcripts(forkflow, scenario.agentIds, prefix)).toEqual(reference);
    const served = model.served().filter((e) => e.seq > before);
    const aborted = served.filter((e) => e.outcome === 'aborted').length;
    const kept = keptRequestIds(journal);
    const twice = servedTwice(served, kept);
    console.log(
      `crash seed ${seed}: ${kills} kills, ${served.filter((e) => e.outcome === 'completed').length} responses served, ${aborted} cut short by a kill, ` +
        `${twice.lostInFlight.length} lost in flight (written by the model, never received), ${twice.keptThenAskedAgain.length} kept and asked again`,
    );
    // A response that reached the worker is never paid for twice...
    expect(twice.keptThenAskedAgain).toEqual([]);
    // ... and every response the model completed reached the store, except those lost in flight.
    const unkept = served.filter((e) => e.outcome === 'completed' && !kept.has(requestIdOf(e.seq))).map((e) => e.seq);
    expect(unkept.sort((a, b) => a - b)).toEqual([...twice.lostInFlight].sort((a, b) => a - b));
  } finally {
    await w.kill();
  }
});

test('the server stopped for 3 s and later for 30 s mid-run: every fork completes as uninterrupted, no response served twice, the client survives', async () => {
  expect(reference).toBeDefined();
  const dbFile = join(tempDir('outage-db'), 'temporal.db');
  const port = await freePort();
  const serve = () => startDevServer({ dbFile, port, headless: true, logLevel: 'error' });
  let server: DevServer = await serve();
  const connection = await Connection.connect({ address: server.address });
  const forkflow = new ForkflowClient(new Client({ connection, namespace: server.namespace }), { taskQueue });
  const w = await startWorkerProcess({ address: server.address, taskQueue, modelUrl: model.url, workspace, bundlePath: h.env.bundlePath, extraEnv: { FORKFLOW_RESPONSE_DIR: responses, FORKFLOW_RESPONSE_JOURNAL: journal } });
  const before = Math.max(0, ...model.served().map((e) => e.seq));
  const prefix = `outage-${process.pid}`;
  try {
    const scenario = await startScenario(forkflow, prefix);
    // The outage schedule is the test's input; nothing waits on it for synchronisation.
    for (const [at, outage] of [[5_000, 3_000], [4_000, 30_000]] as const) {
      await delay(at);
      await server.stop();
      await delay(outage);
      server = await serve();
    }
    const results = await scenario.results;
    expect(results.map((r) => r.status)).toEqual(results.map(() => 'completed'));
    expect(await transcripts(forkflow, scenario.agentIds, prefix)).toEqual(reference);
    const served = model.served().filter((e) => e.seq > before);
    const kept = keptRequestIds(journal);
    const twice = servedTwice(served, kept);
    console.log(
      `outages 3 s + 30 s: ${served.filter((e) => e.outcome === 'completed').length} responses served, ${served.filter((e) => e.outcome !== 'completed').length} not completed, ` +
        `${twice.lostInFlight.length} lost in flight, ${twice.keptThenAskedAgain.length} kept and asked again`,
    );
    // No worker died here: every response reached one, and none was asked for twice.
    expect(twice).toEqual({ keptThenAskedAgain: [], lostInFlight: [] });
    expect(served.filter((e) => e.outcome === 'completed' && !kept.has(requestIdOf(e.seq)))).toEqual([]);
  } finally {
    await w.kill();
    await connection.close();
    await server.stop();
  }
});
