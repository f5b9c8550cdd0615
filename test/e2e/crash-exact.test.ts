/**
 * Crash-exact, end to end: worker, server, model gateway and offline model are separate
 * processes. Fourteen forks of every shape (two of them on an OpenAI-compatible provider,
 * whose Chat Completions calls go through the gateway's provider path) run while the worker is SIGKILLed six times at
 * seeded random moments 1–6 s apart; one seed in `npm test`, three in a row under
 * `npm run bench:soak`. Every fork completes with the
 * transcript of an uninterrupted run, and the model's own log shows every request served
 * once: none asked again, none cut short. A response that reached a worker is handed to the
 * retry by the workers' response store; one still on its way when the worker died (cut
 * short, or written but unread) is finished by the gateway and replayed to the retry. Then
 * the same forks against a server of their own that is stopped for 3 s and later for 30 s:
 * the worker and the driving client ride out both outages.
 */
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { ForkflowClient } from '../../src/client';
import type { GatewayCounts } from '../../src/gateway/gateway';
import { freePort, startDevServer, type DevServer } from '../../src/worker/dev-server';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { comparable, crashProviders, keptRequests, requestIdOf, seeded, seedWorkspace, servedTwice, startScenario } from '../kit/crash-scenario';
import { toolResultsIn } from '../kit/tree';
import { soakOr } from '../kit/soak';
import { startGatewayProcess, startModelProcess, startWorkerProcess, type GatewayProcess, type ModelProcess, type WorkerProcess } from '../kit/processes';
import { forkflowConnectionOptions } from '../../src/client/connection-options';

jest.setTimeout(300_000);

let h: Harness;
let model: ModelProcess;
let workspace: string;
let reference: Map<string, string>;
const responses = tempDir('responses');
const gatewayDir = tempDir('gateway');
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

function worker(gateway: GatewayProcess, address = h.env.address): Promise<WorkerProcess> {
  return startWorkerProcess({
    address,
    taskQueue,
    modelUrl: model.url,
    workspace,
    bundlePath: h.env.bundlePath,
    extraEnv: { FORKFLOW_RESPONSE_DIR: responses, FORKFLOW_RESPONSE_JOURNAL: journal, FORKFLOW_MODEL_GATEWAY: gateway.url, ...crashProviders(model.url) },
  });
}

/** Requests the model completed more than once, and those it never finished, since `after`. */
function modelRecord(after: number) {
  const served = model.served().filter((e) => e.seq > after);
  const completed = served.filter((e) => e.outcome === 'completed');
  const kept = keptRequests(journal);
  return {
    served,
    completed: completed.length,
    notCompleted: served.filter((e) => e.outcome !== 'completed').map((e) => `#${e.seq} ${e.outcome}`),
    twice: servedTwice(served, kept),
    // Every response the model finished reached a worker's store, first-hand or by replay.
    unkept: completed.filter((e) => !kept.has(requestIdOf(e.seq))).map((e) => e.seq),
    kept,
  };
}

/** Where each agent's transcript departs from the reference's, with a little of both around it (the maps whole are too long to read in a CI log). */
function differences(expected: Map<string, string>, actual: Map<string, string>): string[] {
  const out: string[] = [];
  for (const key of new Set([...expected.keys(), ...actual.keys()])) {
    const want = expected.get(key) ?? '<none>';
    const got = actual.get(key) ?? '<none>';
    if (want === got) continue;
    let at = 0;
    while (at < want.length && want[at] === got[at]) at++;
    const around = (text: string) => text.slice(Math.max(0, at - 160), at + 240);
    out.push(`${key}: differs at character ${at} of ${want.length}/${got.length}\n  expected …${around(want)}…\n  received …${around(got)}…`);
  }
  return out;
}

async function transcripts(forkflow: ForkflowClient, agentIds: string[], prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const agentId of agentIds) out.set(agentId.slice(prefix.length), comparable(await forkflow.transcript(agentId), prefix));
  return out;
}

test('the fourteen forks run uninterrupted: the reference', async () => {
  const forkflow = new ForkflowClient(h.client, { taskQueue });
  const gateway = await startGatewayProcess(model.url, gatewayDir, crashProviders(model.url));
  const w = await worker(gateway);
  try {
    const prefix = `ref-${process.pid}`;
    const scenario = await startScenario(forkflow, prefix);
    const results = await scenario.results;
    expect(results.filter((r) => r.status !== 'completed')).toEqual([]);
    const yardstick = await transcripts(forkflow, scenario.agentIds, prefix);
    expect(yardstick.size).toBe(17);
    // The yardstick itself is clean: every tool call in it worked. (Only a clean one is kept:
    // a broken reference would fail the tests after it for a reason that is not theirs.)
    for (const agentId of scenario.agentIds) expect({ agentId, errors: toolResultsIn(await forkflow.transcript(agentId)).filter((r) => r.isError) }).toEqual({ agentId, errors: [] });
    reference = yardstick;
  } finally {
    await w.kill();
    await gateway.stop();
  }
});

test.each(soakOr([20261123], [20261123, 7, 4242]))('seed %i: six SIGKILLs 1–6 s apart; every fork completes as uninterrupted, every model request served once', async (seed) => {
  expect(reference).toBeDefined();
  const forkflow = new ForkflowClient(h.client, { taskQueue });
  const before = Math.max(0, ...model.served().map((e) => e.seq));
  const gateway = await startGatewayProcess(model.url, gatewayDir, crashProviders(model.url));
  let w = await worker(gateway);
  const prefix = `crash-${seed}-${process.pid}`;
  let counts: GatewayCounts | undefined;
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
      w = await worker(gateway);
    }
    const results = await scenario.results;
    expect(kills).toBe(6);
    // A failure names its agent and error (the CI log is all there is to read).
    expect(results.map((r) => (r.status === 'completed' ? r.status : `${r.agentId} ${r.status}: ${r.error}`))).toEqual(results.map(() => 'completed'));
    expect(differences(reference, await transcripts(forkflow, scenario.agentIds, prefix))).toEqual([]);
    await w.kill();
    counts = await gateway.stop();
    const record = modelRecord(before);
    console.log(
      `crash seed ${seed}: ${kills} kills; the model served ${record.completed} responses, ${record.notCompleted.length} not completed, ` +
        `${record.twice.keptThenAskedAgain.length + record.twice.lostInFlight.length} twice; the gateway finished ${counts.finishedForNobody} for a dead worker, ` +
        `replayed ${counts.replayed} (${counts.attached} still running when the retry came); ${record.served.filter((e) => e.path === '/v1/chat/completions').length} of the exchanges were Chat Completions`,
    );
    // Counted from the model's own log: every request answered once, to its end.
    expect(record.twice).toEqual({ keptThenAskedAgain: [], lostInFlight: [] });
    expect(record.notCompleted).toEqual([]);
    expect(record.unkept).toEqual([]);
    // The kills did land mid-call: the gateway had calls to finish for dead workers.
    expect(counts.finishedForNobody + counts.attached).toBeGreaterThan(0);
    // The OpenAI-compatible agents' calls are in that record: Chat Completions, each served once too.
    expect(record.served.filter((e) => e.path === '/v1/chat/completions' && e.outcome === 'completed').length).toBe(18);
  } finally {
    await w.kill();
    if (!counts) await gateway.stop().catch(() => undefined);
  }
});

test('the server stopped for 3 s and later for 30 s mid-run: every fork completes as uninterrupted, no response served twice, the client survives', async () => {
  expect(reference).toBeDefined();
  const dbFile = join(tempDir('outage-db'), 'temporal.db');
  const port = await freePort();
  const serve = () => startDevServer({ dbFile, port, headless: true, logLevel: 'error' });
  let server: DevServer = await serve();
  const connection = await Connection.connect(forkflowConnectionOptions({ address: server.address }));
  const forkflow = new ForkflowClient(new Client({ connection, namespace: server.namespace }), { taskQueue });
  const gateway = await startGatewayProcess(model.url, gatewayDir, crashProviders(model.url));
  const w = await worker(gateway, server.address);
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
    expect(differences(reference, await transcripts(forkflow, scenario.agentIds, prefix))).toEqual([]);
    const record = modelRecord(before);
    console.log(`outages 3 s + 30 s: the model served ${record.completed} responses, ${record.notCompleted.length} not completed, ${record.twice.keptThenAskedAgain.length + record.twice.lostInFlight.length} twice`);
    // No worker died here: every response reached one, and none was asked for twice.
    expect(record.twice).toEqual({ keptThenAskedAgain: [], lostInFlight: [] });
    expect(record.notCompleted).toEqual([]);
    expect(record.unkept).toEqual([]);
  } finally {
    await w.kill();
    await gateway.stop();
    await connection.close();
    await server.stop();
  }
});
