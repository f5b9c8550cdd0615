/**
 * Fair shares per tree on the self-hosted stack (fairness on in its dynamic config). One worker
 * with two activity slots; the offline model takes 400 ms per call. A big tree (40 agents of
 * one root, one call each) makes a backlog of about 8 s; a small tree's agents, started into
 * it, are served at the next free slot rather than after the backlog. Every model call carries
 * `priority.fairnessKey` = its tree's root; the big tree's agents name their root by
 * `rootAgentId`, as a tree's sub-agents do.
 */
import type { ForkflowClient } from '../../src/client';
import type { OfflineModel, RequestLogEntry } from '../../src/offline';
import { bodyOf, messageRequests } from '../kit/requests';
import { startStackHarness, type StackHarness } from '../kit/stack';

jest.setTimeout(900_000);

const SLOTS = 2;
const BIG = 40;
const SMALL = 3;
const CALL_MS = 400;

let h: StackHarness;
let model: OfflineModel;
let forkflow: ForkflowClient;

beforeAll(async () => {
  h = await startStackHarness('fair');
  ({ model, forkflow } = h);
  await h.withWorker({ tuning: { maxConcurrentActivityTaskExecutions: SLOTS } });
});

afterAll(() => h?.close());

const isBig = (e: RequestLogEntry) => JSON.stringify(bodyOf(e).messages).includes('Big fork');
const isSmall = (id: string) => (e: RequestLogEntry) => JSON.stringify(bodyOf(e).messages).includes(`Small fork ${id}.`);

/** Starts one agent of the small tree and waits for it: its latency, and the big tree's calls the model received meanwhile. */
async function small(id: string): Promise<{ ms: number; bigBefore: number }> {
  const t0 = Date.now();
  await forkflow.start({ agentId: `small-${id}`, prompt: `Small fork ${id}.\n@sleep ${CALL_MS} @reply small ${id} done` });
  const result = await forkflow.result(`small-${id}`);
  expect(result).toMatchObject({ status: 'completed', text: `small ${id} done` });
  const own = messageRequests(model).find(isSmall(id))!;
  const bigBefore = messageRequests(model).filter((e) => isBig(e) && e.receivedAt >= t0 && e.receivedAt < own.receivedAt).length;
  return { ms: Date.now() - t0, bigBefore };
}

test('a small tree is served at the next free slot while a big tree has a backlog', async () => {
  const alone = await small('alone');

  const bigIds = Array.from({ length: BIG }, (_, i) => `big-${i}`);
  for (const [i, id] of bigIds.entries()) await forkflow.start({ agentId: id, rootAgentId: 'big-root', prompt: `Big fork ${i}.\n@sleep ${CALL_MS} @reply big ${i} done` });
  // The backlog is there: the slots are busy with the big tree.
  await model.log.waitFor((e) => e.path === '/v1/messages' && JSON.stringify(e.body ?? '').includes('Big fork'), { timeoutMs: 60_000 });

  const contended: { ms: number; bigBefore: number }[] = [];
  for (let i = 0; i < SMALL; i++) contended.push(await small(String(i)));
  const bigServedBeforeSmallEnded = messageRequests(model).filter(isBig).length;

  const results = await Promise.all(bigIds.map((id) => forkflow.result(id)));
  for (const r of results) expect(r).toMatchObject({ status: 'completed' });

  // The small tree did not wait for the backlog: when its last agent was done, most of the big
  // tree's calls had not even reached the model.
  expect(bigServedBeforeSmallEnded).toBeLessThan(BIG / 2);
  // Each small agent's call came after at most the calls already in the slots (and one each
  // being handed to the worker), not after the big tree's queue (FIFO: dozens).
  for (const c of contended) expect(c.bigBefore).toBeLessThanOrEqual(2 * SLOTS);
  console.log(
    `fairness: small agent alone ${alone.ms} ms; with the big tree's backlog (${BIG} calls of ${CALL_MS} ms, ${SLOTS} slots) ${contended.map((c) => `${c.ms} ms (${c.bigBefore} big calls before it)`).join(', ')}; ` +
      `big tree: ${bigServedBeforeSmallEnded} of ${BIG} calls served when the small tree was done`,
  );
});
