/**
 * Long-lived agents that never outgrow the model. The agent of issue 13 — a thousand turns,
 * each adding to its context — runs against a context window the offline model enforces as
 * the API does, once with each compaction policy (forkflow's, the provider's): no request is
 * over the window, the agent completes, and its last answer still knows the fact it read in
 * turn 3 (every summary carried it). Its runs continue as new, and the server never warns
 * about a history's size or length: every run stays under the warnings (10 MiB, 10,240
 * events), read from the server, and the server's own log (at `warn`) has no such warning.
 *
 * Under `npm run bench:soak`: 1,000 turns adding ~200 tokens each against a 200K window
 * (continued as new at the server's own suggestion). In `npm test`: 100 turns against a small
 * window (20K for forkflow compaction; 64K for the provider's, whose trigger cannot be below
 * 50K), with a per-run turn limit so that it continues as new too.
 */
import { totalInputTokens } from '../../src/shared/messages-api/anthropic';
import { tempDir } from '../kit/env';
import { startOwnServer } from '../kit/own-server';
import { FACT, inputTokensOf, longAgentScript, seedLongAgent } from '../kit/long-agent';
import { SOAK, soakOr } from '../kit/soak';

// A guard against a hang, not a speed target: the 1,000-turn agent alone took 128–530 s on the 2-core machine.
jest.setTimeout(1_800_000);

const TURNS = soakOr(100, 1_000);
/** Server defaults (TEMPORAL-NOTES.md): a history past either is warned about. */
const WARN_BYTES = 10 * 1024 * 1024;
const WARN_EVENTS = 10_240;

const POLICIES = [
  // Each read adds ~200 tokens (soak: about 200K over the run) or ~520 / ~1,040 (smoke).
  { policy: 'forkflow' as const, window: soakOr(20_000, 200_000), bytesPerRead: soakOr(2_000, 800) },
  { policy: 'provider' as const, window: soakOr(64_000, 200_000), bytesPerRead: soakOr(4_000, 800) },
];

test.each(POLICIES)(`${TURNS} turns against a $window-token window, $policy compaction: none over the window, the fact of turn 3 kept, no history warning`, async ({ policy, window, bytesPerRead }) => {
  const workspace = tempDir('thousand');
  seedLongAgent(workspace, bytesPerRead);
  const warnings: string[] = [];
  const model = 'claude-ctx-thousand';
  const own = await startOwnServer({
    name: 'thousand',
    workspaceRoot: workspace,
    server: { logLevel: 'warn', onLine: (line) => (/history (size|count|length)/i.test(line) && /exceed|warn/i.test(line) ? warnings.push(line) : undefined) },
    model: { maxLogEntries: 20, contextWindow: (m) => (m === model ? window : 200_000) },
  });
  const { client, forkflow, worker } = own;
  // The model's own record, request by request (its log keeps only the newest).
  const served = new Map<number, { status?: number; input: number; compacted: boolean }>();
  own.model.log.on('update', (e) => {
    if (e.outcome !== 'pending' && e.path === '/v1/messages') served.set(e.seq, { status: e.status, input: inputTokensOf(e), compacted: e.response?.content[0]?.type === 'compaction' });
  });
  try {
    const agentId = `thousand-${policy}`;
    const started = Date.now();
    const result = await worker.runUntil(
      forkflow
        .startAgent({ agentId, prompt: longAgentScript(TURNS, agentId), model, contextWindow: window, contextManagement: policy, maxTurns: TURNS, budget: { maxTokens: 1_000_000_000 }, ...(SOAK ? {} : { continueAsNew: { turnsPerRun: 35 } }) })
        .then((a) => a.result()),
    );
    const seconds = (Date.now() - started) / 1000;
    expect(result).toMatchObject({ status: 'completed', turns: TURNS, toolUses: TURNS - 1, text: `Recalled: ${FACT}` });

    const requests = [...served.values()];
    expect(requests.filter((r) => r.status !== 200)).toEqual([]);
    const largest = Math.max(...requests.map((r) => r.input));
    expect(largest).toBeLessThanOrEqual(window);
    // It did live near its window: compacted, at least once.
    const context = result.context!;
    expect(context.compactions).toBeGreaterThanOrEqual(1);
    if (policy === 'provider') expect(requests.filter((r) => r.compacted)).toHaveLength(context.compactions);
    expect(largest).toBeGreaterThan(window * 0.75);

    const runs: { runId: string; bytes: number; events: number }[] = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = '${agentId}'` })) {
      const d = await client.workflow.getHandle(agentId, run.runId).describe();
      runs.push({ runId: run.runId, bytes: Number(d.historySize), events: Number(d.historyLength) });
    }
    console.log(
      `${TURNS} turns, ${policy} compaction, window ${window}: ${seconds.toFixed(1)} s, ${context.compactions} compactions (before turns ${context.boundaries.map((b) => b.turn).join(', ')}), ` +
        `largest request ${largest} tokens, billed ${totalInputTokens(result.usage) + result.usage.outputTokens} tokens (summarising ${totalInputTokens(context.summarising.usage) + context.summarising.usage.outputTokens}, saved ${context.tokensSaved}); ` +
        `${runs.length} runs; history per run (bytes/events): ${runs.map((r) => `${r.bytes}/${r.events}`).join(', ')}`,
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
