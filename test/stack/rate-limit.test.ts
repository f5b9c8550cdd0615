/**
 * One provider rate limit, hit hard: the offline model admits 4 Messages requests per 2 s
 * and answers the rest 429 with `retry-after`. Ten forks of four turns each on the
 * self-hosted stack all complete; every refused call was retried no sooner than the
 * provider said.
 */
import type { ForkflowClient } from '../../src/client';
import type { OfflineModel } from '../../src/offline';
import { messageRequests } from '../kit/requests';
import { startStackHarness, type StackHarness } from '../kit/stack';

jest.setTimeout(900_000);

const FORKS = 10;
const TURNS = 3;

let h: StackHarness;
let model: OfflineModel;
let forkflow: ForkflowClient;

beforeAll(async () => {
  h = await startStackHarness('rate', { model: { rateLimit: { requests: 4, perMs: 2000 } } });
  ({ model, forkflow } = h);
  await h.withWorker();
});

afterAll(() => h?.close());

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
