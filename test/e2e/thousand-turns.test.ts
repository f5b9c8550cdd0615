/**
 * Long-lived agents: an agent whose context grows to about 200K tokens completes across
 * continue-as-new runs on a dev server with its default limits, and the server never warns
 * about a history's size or length: every run stays under the warnings (10 MiB, 10,240
 * events), read from the server, and the server's own log (at `warn`) has no history-limit
 * warning. Under `npm run bench:soak`: 1,000 turns that each add ~200 tokens, continued as new
 * at the server's own suggestion. In `npm test`: 200 turns that each add ~1,000 tokens, with a
 * per-run turn limit so that it continues as new too.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { totalInputTokens } from '../../src/shared/anthropic';
import { tempDir } from '../kit/env';
import { startOwnServer } from '../kit/own-server';
import { script, toolStep } from '../kit/tree';
import { SOAK, soakOr } from '../kit/soak';

// A guard against a hang, not a speed target: the 1,000-turn agent alone took 128–530 s on the 2-core machine.
jest.setTimeout(900_000);

const TURNS = soakOr(200, 1_000);
/** Lines of ~60 characters in the file each turn reads: ~1,000 or ~200 tokens a read. */
const LINES = soakOr(53, 9);
/** Server defaults (TEMPORAL-NOTES.md): a history past either is warned about. */
const WARN_BYTES = 10 * 1024 * 1024;
const WARN_EVENTS = 10_240;

test(`${TURNS} turns with a 200K-token context: continued as new, no history warning`, async () => {
  const workspace = tempDir('thousand');
  // Each read adds LINES × ~20 tokens to the conversation: about 200K by the last turn.
  writeFileSync(join(workspace, 'notes.txt'), Array.from({ length: LINES }, (_, i) => `line ${i}: ${'x'.repeat(52)}`).join('\n'));
  const warnings: string[] = [];
  const own = await startOwnServer({
    name: 'thousand',
    workspaceRoot: workspace,
    server: { logLevel: 'warn', onLine: (line) => (/history (size|count|length)/i.test(line) && /exceed|warn/i.test(line) ? warnings.push(line) : undefined) },
    model: { maxLogEntries: 2 },
  });
  const { client, forkflow, model, worker } = own;
  try {
    const prompt = script('Read it a thousand times.', `@repeat ${TURNS - 1} ${toolStep('Read', { file_path: 'notes.txt' })}`, '@reply done');
    const started = Date.now();
    const result = await worker.runUntil(forkflow.startAgent({ agentId: 'thousand', prompt, maxTurns: TURNS, budget: { maxTokens: 1_000_000_000 }, ...(SOAK ? {} : { continueAsNew: { turnsPerRun: 70 } }) }).then((a) => a.result()));
    const seconds = (Date.now() - started) / 1000;
    expect(result).toMatchObject({ status: 'completed', text: 'done', turns: TURNS, toolUses: TURNS - 1 });
    const last = model.log.entries().at(-1)!;
    const context = totalInputTokens({ inputTokens: last.usage!.input_tokens, cacheReadInputTokens: last.usage!.cache_read_input_tokens, cacheCreationInputTokens: last.usage!.cache_creation_input_tokens, outputTokens: 0 });
    expect(context).toBeGreaterThan(190_000);

    const runs: { runId: string; bytes: number; events: number }[] = [];
    for await (const run of client.workflow.list({ query: "WorkflowId = 'thousand'" })) {
      const d = await client.workflow.getHandle('thousand', run.runId).describe();
      runs.push({ runId: run.runId, bytes: Number(d.historySize), events: Number(d.historyLength) });
    }
    console.log(
      `thousand turns: ${seconds.toFixed(1)} s, context ${context} tokens, ${runs.length} runs; history per run (bytes/events): ${runs.map((r) => `${r.bytes}/${r.events}`).join(', ')}`,
    );
    expect(runs.length).toBeGreaterThan(1);
    for (const r of runs) {
      expect(r.bytes).toBeLessThan(WARN_BYTES);
      expect(r.events).toBeLessThan(WARN_EVENTS);
    }
    expect(warnings).toEqual([]);
  } finally {
    await own.close();
  }
});
