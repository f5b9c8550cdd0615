/**
 * The false-denial rate under the sandbox, as a smoke: a sample of the everyday corpus (the
 * first three commands of each category, test/kit/everyday.ts says how each runs) through
 * the real Bash tool of a read-only fork with the OS sandbox on. None may be refused. The
 * whole corpus (411 commands, both ways) is `npm run bench:everyday`, which prints the rate
 * and fails above 1%: it takes minutes, too long for every CI run.
 */
import { describeEveryday, readEverydayCorpus, runEveryday, startEverydayWorld, type EverydayEntry, type EverydayWorld } from '../../kit/everyday';

let world: EverydayWorld;

beforeAll(async () => {
  world = await startEverydayWorld();
  expect(world.availability.available).toBe(true);
}, 300_000);
afterAll(() => world?.close());

/** The first `n` commands of each category, in corpus order. */
function sample(corpus: readonly EverydayEntry[], n: number): EverydayEntry[] {
  const taken = new Map<string, number>();
  return corpus.filter((e) => {
    const k = taken.get(e.category) ?? 0;
    taken.set(e.category, k + 1);
    return k < n;
  });
}

test('the corpus is well formed: at least 300 distinct commands in every category the issue named', () => {
  const corpus = readEverydayCorpus();
  expect(corpus.length).toBeGreaterThanOrEqual(300);
  expect(new Set(corpus.map((c) => c.cmd)).size).toBe(corpus.length);
  const categories = new Set(corpus.map((c) => c.category));
  for (const c of ['syntax-check', 'versions', 'hashing', 'archives', 'processes', 'shell-functions', 'git']) expect(categories).toContain(c);
});

test('everyday commands in a read-only fork with the sandbox on: a sample of each category, none refused', async () => {
  const picked = sample(readEverydayCorpus(), 3);
  const result = await runEveryday(world, picked);
  console.log(describeEveryday(result, picked.length));
  // The corpus is honest: every line works, and writes nothing, without the sandbox.
  expect(result.broken).toEqual([]);
  expect(result.refused).toEqual([]);
}, 300_000);
