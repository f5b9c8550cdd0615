/**
 * `npm run bench:everyday`: the whole everyday corpus (test/data/everyday-corpus.jsonl)
 * through the real Bash tool of a read-only fork with the OS sandbox on, each command also
 * run with neither wall as its baseline (test/kit/everyday.ts). Prints how many were refused
 * (the issue allows at most 1%) and what the sandbox added per command; exits non-zero when
 * the corpus is broken or more than 1% were refused.
 */
import { describeEveryday, readEverydayCorpus, runEveryday, startEverydayWorld } from '../test/kit/everyday';
import { median, percentile, printTable } from './kit';

async function main(): Promise<void> {
  const world = await startEverydayWorld();
  try {
    if (!world.availability.available) throw new Error(`the sandbox is unavailable here: ${world.availability.reason}`);
    const corpus = readEverydayCorpus();
    const t0 = Date.now();
    const result = await runEveryday(world, corpus);
    const secs = (Date.now() - t0) / 1000;
    console.log(describeEveryday(result, corpus.length));
    const ms = (v: number) => `${v.toFixed(1)} ms`;
    printTable(`everyday corpus (${corpus.length} commands), read-only fork`, [
      ['refused with the sandbox on', `${result.refused.length} (${((result.refused.length / corpus.length) * 100).toFixed(1)}%)`],
      ['broken without any wall', String(result.broken.length)],
      ['added by the sandbox: median / p95', `${ms(median(result.addedMs))} / ${ms(percentile(result.addedMs, 95))}`],
      ['wall time, both runs of every command', `${secs.toFixed(0)} s`],
    ]);
    if (result.broken.length > 0) throw new Error(`the corpus is broken:\n${result.broken.join('\n')}`);
    if (result.refused.length / corpus.length > 0.01) throw new Error('more than 1% of the everyday corpus was refused');
  } finally {
    world.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
