/**
 * The self-hosted stack (scripts/stack/) under loss: the Temporal server SIGKILLed mid-run
 * and started again on the same PostgreSQL; PostgreSQL restarted under a running server;
 * and both at once. Every fork finishes with every tool call made once, and no model call
 * that completed is made again. Recovery times are printed for the closing figures.
 */
import type { Stack } from '../../scripts/stack/stack';
import type { ForkflowClient } from '../../src/client';
import type { OfflineModel } from '../../src/offline';
import { messageRequests } from '../kit/requests';
import { startStackHarness, type StackHarness } from '../kit/stack';

jest.setTimeout(900_000);

const TURNS = 6;
const FORKS = 6;
/** Each turn holds its model call 400 ms, so a loss always lands mid-run with calls in flight. */
const script = (i: number) => [`Stack fork ${i}.`, `@repeat ${TURNS} @sleep 400 @tool Read {"file_path":"notes.txt"}`, `@reply fork ${i} done`].join('\n');

let h: StackHarness;
let stack: Stack;
let model: OfflineModel;
let forkflow: ForkflowClient;

beforeAll(async () => {
  h = await startStackHarness('stack');
  ({ stack, model, forkflow } = h);
  await h.withWorker();
  console.log(`stack start: ${JSON.stringify(stack.timings)}`);
});

afterAll(() => h?.close());

/** Starts the forks and waits until every one has made a call (the loss lands mid-run, calls in flight). */
async function startForks(prefix: string): Promise<string[]> {
  const ids = Array.from({ length: FORKS }, (_, i) => `${prefix}-${i}`);
  for (const [i, id] of ids.entries()) await forkflow.start({ agentId: id, prompt: script(i) });
  await model.log.waitFor(() => ids.every((_, i) => requestsOf(i) >= 2), { timeoutMs: 120_000 });
  return ids;
}

/** Model requests of fork `i` of the current phase (the log is cleared between phases). */
function requestsOf(i: number): number {
  return messageRequests(model).filter((e) => e.rawBody.includes(`Stack fork ${i}.`)).length;
}

/** Every fork completed with its own reply after all its tool calls, and no completed call repeated. */
async function expectAllFinished(ids: string[]): Promise<void> {
  const results = await Promise.all(ids.map((id) => forkflow.result(id)));
  // Every Read ran once: the transcript holds exactly one result per tool call.
  for (const id of ids) {
    const transcript = await forkflow.transcript(id);
    const results = transcript.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_result');
    expect(results).toHaveLength(TURNS);
  }
  for (const [i, result] of results.entries()) {
    expect(result).toMatchObject({ status: 'completed', text: `fork ${i} done`, turns: TURNS + 1 });
  }
  const counts = new Map<string, number>();
  for (const e of messageRequests(model).filter((r) => r.outcome === 'completed')) counts.set(e.rawBody, (counts.get(e.rawBody) ?? 0) + 1);
  expect([...counts.entries()].filter(([, n]) => n > 1)).toEqual([]);
}

test('the Temporal server SIGKILLed mid-run and started again on the same database: every fork finishes', async () => {
  model.log.clear();
  const ids = await startForks('server-loss');
  await stack.killServer();
  const t0 = Date.now();
  await stack.startServer();
  const serving = Date.now() - t0;
  const before = messageRequests(model).filter((e) => e.outcome === 'completed').length;
  await model.log.waitFor(() => messageRequests(model).filter((e) => e.outcome === 'completed').length > before, { timeoutMs: 120_000 });
  const firstProgress = Date.now() - t0;
  await expectAllFinished(ids);
  console.log(`server loss: serving again after ${serving} ms, first completed model call after ${firstProgress} ms, all ${FORKS} forks done after ${Date.now() - t0} ms`);
});

test('PostgreSQL restarted under a running server: every fork finishes', async () => {
  model.log.clear();
  const ids = await startForks('postgres-restart');
  const t0 = Date.now();
  await stack.restartPostgres();
  const restarted = Date.now() - t0;
  await expectAllFinished(ids);
  console.log(`postgres restart: ${restarted} ms down, all ${FORKS} forks done after ${Date.now() - t0} ms`);
});

test('the server killed, PostgreSQL restarted, the server started again: every fork finishes', async () => {
  model.log.clear();
  const ids = await startForks('both');
  const t0 = Date.now();
  await stack.killServer();
  await stack.restartPostgres();
  await stack.startServer();
  await expectAllFinished(ids);
  console.log(`server and postgres: all ${FORKS} forks done ${Date.now() - t0} ms after the kill`);
});
