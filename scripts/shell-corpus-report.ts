/**
 * Prints the read-only shell classifier's figures on the labelled corpus:
 *   npx tsx scripts/shell-corpus-report.ts [corpus.jsonl]
 * Exits 1 if any adversarial command is allowed or the false-denial rate exceeds 2%.
 */
import { resolve } from 'node:path';
import { corpusReport } from '../src/activities/tools/shell/corpus-report';

const MAX_FALSE_DENIAL_RATE = 0.02;

async function main(): Promise<void> {
  const path = process.argv[2] ?? resolve(__dirname, '..', 'test', 'data', 'shell-corpus.jsonl');
  const r = await corpusReport(path);
  const pct = (r.falseDenialRate * 100).toFixed(1);
  console.log(`corpus:         ${path}`);
  console.log(`adversarial:    ${r.adversarial} (labelled deny)`);
  console.log(`bypasses:       ${r.bypasses}`);
  console.log(`everyday:       ${r.everyday} (labelled allow)`);
  console.log(`false denials:  ${r.falseDenials} (${pct}%)`);
  console.log('by category:');
  for (const [name, c] of Object.entries(r.categories)) {
    console.log(`  ${name.padEnd(20)} deny ${String(c.deny).padStart(3)}  allow ${String(c.allow).padStart(3)}`);
  }
  for (const miss of r.list) {
    console.log(`${miss.kind.toUpperCase()} [${miss.category}] ${JSON.stringify(miss.cmd)}${miss.reason ? ` -- ${miss.reason}` : ''}`);
  }
  if (r.bypasses > 0 || r.falseDenialRate > MAX_FALSE_DENIAL_RATE) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
