/**
 * Differential fuzzing of the classifier's two bash parsers, more than the unit test runs:
 *   npm run fuzz:shell -- --count 200000 --seed 7
 * Prints how many commands were generated, parsed by both parsers, agreed and disagreed,
 * and whether every command the agreement check refused was denied by the classifier
 * (exit code 1 if not), then a few of the disagreements.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseCorpus } from '../src/activities/tools/shell/corpus-report';
import { runAgreementFuzz } from '../test/kit/shell-fuzz';

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`--${name} needs a whole number`);
  return value;
}

async function main(): Promise<void> {
  const count = option('count', 200_000);
  const seed = option('seed', 1);
  const corpus = parseCorpus(readFileSync(resolve(__dirname, '..', 'test', 'data', 'shell-corpus.jsonl'), 'utf8')).map((e) => e.cmd);
  const f = await runAgreementFuzz(count, seed, corpus);
  console.log(`seed ${seed}: generated ${f.generated}, parsed by both ${f.parsedByBoth}, agreed ${f.agreed}, disagreed ${f.disagreed}, not modelled ${f.unsupported}`);
  console.log(`refused by the agreement check and denied by classifyShellCommand: ${f.refusedAndDenied}; refused but allowed: ${f.refusedButAllowed.length}`);
  console.log(`agreeing commands the classifier allowed: ${f.allowed.length}; ${(f.ms / 1000).toFixed(1)} s (${((f.ms / f.generated) * 1000).toFixed(0)} µs a command)`);
  for (const d of f.disagreements.slice(0, 15)) console.log(`DISAGREE ${JSON.stringify(d.command)} -- ${d.detail}`);
  for (const c of f.refusedButAllowed) console.log(`ALLOWED DESPITE REFUSAL ${JSON.stringify(c)}`);
  if (f.refusedButAllowed.length > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
