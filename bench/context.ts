/**
 * `npm run bench:context`: what keeping a long-lived agent inside its context window costs.
 * The 1,000-turn agent of test/e2e/thousand-turns.test.ts (each turn reads ~200 tokens more
 * into its context, a fact in turn 3, the fact recalled last) runs on a dev server with the
 * offline model, once per policy against a 200K window — forkflow compaction, provider
 * compaction, and provider tool-result clearing — and once with no window at all (the floor:
 * `off` on a 1M window, nothing ever dropped). For each: tokens billed, as the provider counts
 * them (input of every kind plus output) and weighted by price (cache writes 1.25×, reads 0.1×:
 * what caching makes of them); what summarising cost; turns between compactions; and the
 * share of the first request after each compaction that was read from the cache.
 *
 * Environment: BENCH_TURNS (default 1000), BENCH_WINDOW (200000), BENCH_BYTES_PER_READ (800).
 */
import { totalInputTokens, type Usage } from '../src/shared/messages-api/anthropic';
import { CACHE_PRICE } from '../src/shared/providers/pricing';
import { isSummaryRequest } from '../src/offline';
import type { ContextManagementInput } from '../src/shared/context/policy';
import type { ContextStatus } from '../src/shared/context/state';
import { STANDARD_WINDOW } from '../src/shared/context/windows';
import { startDevStack } from '../src/testing/dev-stack';
import { FACT, longAgentScript, seedLongAgent } from '../test/kit/long-agent';
import { printTable } from './kit';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TURNS = Number(process.env.BENCH_TURNS ?? 1000);
const WINDOW = Number(process.env.BENCH_WINDOW ?? 200_000);
const BYTES_PER_READ = Number(process.env.BENCH_BYTES_PER_READ ?? 800);
const MODEL = 'claude-bench-context';
/** The floor's model: one with a 1M-token window (a fork may not ask a model for more than it has). */
const FLOOR_MODEL = 'claude-sonnet-4-6';
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

interface Served {
  input: number;
  read: number;
  summary: boolean;
  compacted: boolean;
}

interface Run {
  name: string;
  seconds: number;
  usage: Usage;
  context: ContextStatus;
  served: Served[];
  text: string;
}

/** Tokens as billed, each kind at its price relative to uncached input. */
function weighted(u: Usage): number {
  const hour = u.cacheCreation1hInputTokens ?? 0;
  return u.inputTokens + (u.cacheCreationInputTokens - hour) * CACHE_PRICE.write5m + hour * CACHE_PRICE.write1h + u.cacheReadInputTokens * CACHE_PRICE.read + u.outputTokens;
}

async function runOnce(name: string, contextManagement: ContextManagementInput, window: number): Promise<Run> {
  const model = window > STANDARD_WINDOW ? FLOOR_MODEL : MODEL;
  const workspace = mkdtempSync(join(tmpdir(), 'forkflow-bench-context-'));
  seedLongAgent(workspace, BYTES_PER_READ);
  const stack = await startDevStack({ workspaceRoot: workspace, server: { headless: true, logLevel: 'error' }, offlineModel: { maxLogEntries: 20, contextWindow: (m) => (m === model ? window : STANDARD_WINDOW) }, logLevel: 'ERROR' });
  const served: Served[] = [];
  const seen = new Set<number>();
  stack.offlineModel!.log.on('update', (e) => {
    if (e.outcome !== 'completed' || e.path !== '/v1/messages' || seen.has(e.seq)) return;
    seen.add(e.seq);
    const u = e.usage!;
    served.push({ input: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens, read: u.cache_read_input_tokens, summary: isSummaryRequest((e.body as { messages: never[] }).messages), compacted: e.response?.content[0]?.type === 'compaction' });
  });
  try {
    const agentId = `bench-context-${name.replace(/\W+/g, '-')}`;
    const started = Date.now();
    const handle = await stack.client.startAgent({ agentId, prompt: longAgentScript(TURNS, agentId), model, contextWindow: window, contextManagement, maxTurns: TURNS, budget: { maxTokens: 1_000_000_000_000 } });
    const result = await handle.result();
    if (result.status !== 'completed' || result.turns !== TURNS) throw new Error(`bench:context ${name}: ${result.status} after ${result.turns} turns: ${result.error ?? ''}`);
    return { name, seconds: (Date.now() - started) / 1000, usage: result.usage, context: result.context!, served, text: result.text };
  } finally {
    await stack.stop();
  }
}

/** The cache-read share of the first model request after each compaction. */
function firstAfterCompaction(run: Run): number[] {
  const shares: number[] = [];
  run.served.forEach((s, i) => {
    const next = s.summary ? run.served.slice(i + 1).find((n) => !n.summary) : s.compacted ? run.served[i + 1] : undefined;
    if (next) shares.push(next.read / next.input);
  });
  return shares;
}

function turnsBetween(context: ContextStatus): string {
  const turns = context.boundaries.map((b) => b.turn);
  if (turns.length === 0) return 'no compaction';
  return [turns[0], ...turns.slice(1).map((t, i) => t - turns[i]!)].join(', ');
}

async function main(): Promise<void> {
  process.stdout.write(`bench:context: ${TURNS} turns, ~${Math.round(BYTES_PER_READ / 4)} tokens more per turn, window ${fmt(WINDOW)}\n`);
  const runs: Run[] = [];
  for (const [name, policy, window] of [
    ['no window (floor)', 'off', 1_000_000],
    ['forkflow compaction', 'forkflow', WINDOW],
    ['provider compaction', 'provider', WINDOW],
    ['provider clear-tool-results', 'clear-tool-results', WINDOW],
  ] as const) {
    const run = await runOnce(name, policy, window);
    runs.push(run);
    process.stdout.write(`  ${name}: ${run.seconds.toFixed(0)} s, last answer ${run.text === `Recalled: ${FACT}` ? 'recalls the fact of turn 3' : `does not recall it: ${run.text.slice(0, 80)}`}\n`);
  }
  const floor = runs[0]!;
  for (const run of runs) {
    const billed = totalInputTokens(run.usage) + run.usage.outputTokens;
    const summarising = run.context.summarising.usage;
    const shares = firstAfterCompaction(run);
    printTable(run.name, [
      ['tokens billed (no caching)', `${fmt(billed)} (${((billed / (totalInputTokens(floor.usage) + floor.usage.outputTokens)) * 100).toFixed(1)}% of the floor)`],
      ['tokens billed, price-weighted (caching)', `${fmt(weighted(run.usage))} (${((weighted(run.usage) / weighted(floor.usage)) * 100).toFixed(1)}% of the floor)`],
      ['largest request', fmt(Math.max(...run.served.map((s) => s.input)))],
      ['compactions', String(run.context.compactions)],
      ['turns before / between compactions', turnsBetween(run.context)],
      ['summarising: tokens (weighted)', `${fmt(totalInputTokens(summarising) + summarising.outputTokens)} (${fmt(weighted(summarising))})`],
      ['tokens saved on later requests', fmt(run.context.tokensSaved)],
      ['tool results cleared (provider)', run.context.cleared ? `${run.context.cleared.toolUses} uses, ${fmt(run.context.cleared.tokens)} tokens` : '–'],
      ['cache-read share, first request after a compaction', shares.length ? shares.map((s) => s.toFixed(3)).join(', ') : '–'],
      ['time', `${run.seconds.toFixed(0)} s`],
    ]);
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
