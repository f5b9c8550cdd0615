/**
 * The false-denial rate under the sandbox: the whole everyday corpus (test/kit/everyday.ts
 * says how each command runs) through the real Bash tool of a read-only fork with the OS
 * sandbox on; at most 1% may be refused (about 30 s here). `npm run bench:everyday` runs the
 * same and prints what the sandbox added per command.
 */
import { describeEveryday, readEverydayCorpus, runEveryday, startEverydayWorld, type EverydayWorld } from '../../kit/everyday';

let world: EverydayWorld;

beforeAll(async () => {
  world = await startEverydayWorld();
  expect(world.availability.available).toBe(true);
}, 300_000);
afterAll(() => world?.close());

test('the corpus is well formed: at least 300 distinct commands in every category the issue named', () => {
  const corpus = readEverydayCorpus();
  expect(corpus.length).toBeGreaterThanOrEqual(300);
  expect(new Set(corpus.map((c) => c.cmd)).size).toBe(corpus.length);
  const categories = new Set(corpus.map((c) => c.category));
  for (const c of ['syntax-check', 'versions', 'hashing', 'archives', 'processes', 'shell-functions', 'git']) expect(categories).toContain(c);
});

test('everyday commands in a read-only fork with the sandbox on: at most 1% refused', async () => {
  const corpus = readEverydayCorpus();
  const result = await runEveryday(world, corpus);
  console.log(describeEveryday(result, corpus.length));
  // The corpus is honest: every line works, and writes nothing, without the sandbox.
  expect(result.broken).toEqual([]);
  expect(result.refused.length / corpus.length).toBeLessThanOrEqual(0.01);
}, 300_000);
