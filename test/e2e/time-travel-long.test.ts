/**
 * Forks from points of a long agent (issue 33): what a fork records does not depend on the turn
 * it starts from — a reference to the point, never the prefix — whether the point lies in the
 * agent's first run or at the end of its last. Prints each fork's history size and how long
 * resolving its point took. Under `npm run bench:soak`: a 1,000-turn agent (~200K tokens by
 * its end, continued as new at the server's suggestion). In `npm test`: 40 turns that each add
 * ~1,000 tokens, continued as new every 10 turns.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startHarness, type Harness } from '../kit/env';
import { soakOr } from '../kit/soak';
import { historyBytes, historyPayloadBytes } from '../kit/time-travel';
import { script, toolStep } from '../kit/tree';

// A guard against a hang, not a speed target (the 1,000-turn agent alone takes minutes).
jest.setTimeout(1_200_000);

const TURNS = soakOr(40, 1_000);
/** Lines of ~60 characters in the file each turn reads: ~1,000 or ~200 tokens a read. */
const LINES = soakOr(53, 9);

let h: Harness;
const suffix = Math.random().toString(36).slice(2, 8);
const AGENT = `tt-long-${suffix}`;

beforeAll(async () => {
  // Only the newest requests are kept: the long agent's would fill memory.
  h = await startHarness({ name: 'tt-long', model: { maxLogEntries: 20 } });
  writeFileSync(join(h.workspaceRoot, 'notes.txt'), Array.from({ length: LINES }, (_, i) => `line ${i}: ${'x'.repeat(52)}`).join('\n'));
  const prompt = script(`Read it ${TURNS - 1} times.`, `@repeat ${TURNS - 1} ${toolStep('Read', { file_path: 'notes.txt' })}`, '@reply done');
  const agent = await h.forkflow.start({
    agentId: AGENT,
    prompt,
    querySource: 'agent:main',
    maxTurns: TURNS,
    budget: { maxTokens: 1_000_000_000 },
    ...soakOr({ continueAsNew: { turnsPerRun: 10 } }, {}),
  });
  await expect(agent.result()).resolves.toMatchObject({ status: 'completed', turns: TURNS });
});
afterAll(() => h.close());

test(`forks from turn 1 and turn ${TURNS} of a ${TURNS}-turn agent record the same few KB`, async () => {
  const runs: string[] = [];
  for await (const run of h.client.workflow.list({ query: `WorkflowId = '${AGENT}'` })) runs.push(run.runId);
  expect(runs.length).toBeGreaterThan(1);

  const figures: { turn: number; runId: string; resolveMs: number; bytes: number; payloadBytes: number; messages: number }[] = [];
  for (const turn of [1, Math.floor(TURNS / 2), TURNS]) {
    const started = Date.now();
    const point = await h.forkflow.turnPoint(AGENT, { atTurn: turn });
    const resolveMs = Date.now() - started;
    const fork = await h.forkflow.start({ agentId: `tt-long-fork-${turn}-${suffix}`, prompt: `From turn ${turn}.\n@reply at ${turn}`, maxTurns: 1, parentRef: point.ref, origin: { agentId: AGENT, runId: point.runId, turn } });
    await expect(fork.result()).resolves.toMatchObject({ status: 'completed', text: `at ${turn}` });
    figures.push({ turn, runId: point.runId, resolveMs, bytes: await historyBytes(h.client, fork.agentId), payloadBytes: await historyPayloadBytes(h.client, fork.agentId), messages: point.ref.count });
  }
  console.log(`time travel, ${TURNS}-turn agent in ${runs.length} runs: ${figures.map((f) => `turn ${f.turn} (${f.messages} messages behind it): fork history ${f.bytes} B (payloads ${f.payloadBytes} B), point resolved in ${f.resolveMs} ms`).join('; ')}`);
  // What a fork records (its payloads) does not grow with the prefix behind its point. The whole
  // history's size is printed but not compared: a busy machine adds events (a workflow task
  // timed out and scheduled again) that say nothing of the prefix.
  const sizes = figures.map((f) => f.payloadBytes);
  expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThan(200);
  for (const bytes of sizes) expect(bytes).toBeLessThan(8 * 1024);
  // The first and last points lie in different runs of the chain.
  expect(figures[0]!.runId).not.toBe(figures.at(-1)!.runId);
});
