/**
 * Caches kept warm while a fork waits (cacheWhileWaiting): a fork asks for approval of a
 * FileWrite, the approval comes 20 emulated minutes later, and the first turn after the wait
 * reads its prefix from the cache — or does not:
 * - `off`: the 5-minute entries are gone; the turn writes the whole prefix again;
 * - `ttl-1h`: every breakpoint carries the 1-hour TTL; the turn reads the prefix;
 * - `keep-alive`: 5-minute entries, refreshed by keep-alive requests on a durable timer while
 *   the fork waits; the turn reads the prefix, and the keep-alives are counted in its usage
 *   (and its tree's ledger). The same holds for an idle fork waiting for a message.
 *
 * Time: `off` and `ttl-1h` need no timer during the wait, so their emulator's clock jumps 20
 * minutes (`clock.advance`). `keep-alive` needs its timer to fire before each expiry, which a
 * jump would skip: its emulator's clock runs 100× faster (5 minutes = 3 s) and its worker is
 * told the same scale (`modelClockScale`), so 20 emulated minutes pass in 12 s of real time,
 * keep-alives and all. The test waits on the emulator's log and clock, never on a sleep.
 */
import type { RequestLogEntry } from '../../src/offline';
import { totalInputTokens, type Usage } from '../../src/shared/messages-api/anthropic';
import { estimateCostUsd } from '../../src/shared/providers/pricing';
import type { ForkResult } from '../../src/shared/wire/status';
import { startHarness, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';
import { script, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

const MINUTE = 60_000;
const WAIT = 20 * MINUTE;
const SCALE = 100;
const MODEL = 'claude-sonnet-4-6';

/** About 12,000 tokens of system prompt: the prefix a wait would lose. */
const SYSTEM = Array.from({ length: 12_000 }, (_, i) => `rule${i % 89}`).join(' ');

let plain: Harness;
let scaled: Harness;
beforeAll(async () => {
  [plain, scaled] = await Promise.all([startHarness({ name: 'cache-wait' }), startHarness({ name: 'cache-wait-scaled', model: { clockScale: SCALE } })]);
});
afterAll(() => Promise.all([plain?.close(), scaled?.close()]));

type Policy = 'off' | 'ttl-1h' | 'keep-alive';

function usageOf(e: RequestLogEntry): Usage {
  const u = e.usage!;
  return {
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    cacheReadInputTokens: u.cache_read_input_tokens,
    cacheCreationInputTokens: u.cache_creation_input_tokens,
    ...(u.cache_creation.ephemeral_1h_input_tokens ? { cacheCreation1hInputTokens: u.cache_creation.ephemeral_1h_input_tokens } : {}),
  };
}

const isKeepAlive = (e: RequestLogEntry): boolean => (e.body as { max_tokens?: number }).max_tokens === 1;
const readShare = (u: Usage): number => u.cacheReadInputTokens / totalInputTokens(u);

interface Run {
  result: ForkResult;
  /** This fork's model requests, oldest first. */
  requests: RequestLogEntry[];
  turns: RequestLogEntry[];
  keepAlives: RequestLogEntry[];
}

/** A fork that waits for approval of a FileWrite; approved once 20 emulated minutes have passed. */
async function waitForApproval(h: Harness, policy: Policy): Promise<Run> {
  const agentId = `cache-wait-${policy}`;
  const prompt = script(`Write the file (${policy}).`, toolStep('FileWrite', { file_path: `${policy}.txt`, content: 'ok' }), '@reply wrote');
  // A system prompt of its own per policy: no fork reads what another wrote.
  // The keep-alive fork is a tree's root (it may start sub-agents), so its keep-alives are charged at its ledger too.
  const tree = policy === 'keep-alive' ? { subAgents: {}, budget: { maxTokens: 500_000 } } : {};
  const handle = await h.forkflow.start({ agentId, prompt, system: `(${policy}) ${SYSTEM}`, model: MODEL, permissionMode: 'bubble', cacheWhileWaiting: policy, ...tree });
  const pending = await waitFor(async () => (await handle.status()).approvals[0], 'the approval request');
  const mine = (e: RequestLogEntry): boolean => e.path === '/v1/messages' && e.rawBody.includes(`(${policy})`);
  const first = await h.model.log.waitFor((e) => mine(e) && e.outcome === 'completed');
  const approveAt = first.receivedAt + WAIT;
  if (policy === 'keep-alive') {
    // Real (scaled) time passes: keep-alives keep arriving until the emulated clock says 20 minutes.
    await h.model.log.waitFor((e) => mine(e) && isKeepAlive(e) && e.receivedAt >= approveAt - 5 * MINUTE && e.outcome === 'completed', { timeoutMs: 60_000 });
    await waitFor(() => h.model.clock.now() >= approveAt, 'twenty emulated minutes', 60_000);
  } else {
    h.model.clock.advance(approveAt - h.model.clock.now());
  }
  expect(await h.forkflow.approve(agentId, pending.requestId)).toBe('approved');
  const result = await handle.result();
  const requests = h.model.log.entries().filter(mine);
  if (policy !== 'off') await recordHistory(h.client.workflow.getHandle(agentId), `cache-while-waiting-${policy}`);
  return { result, requests, turns: requests.filter((e) => !isKeepAlive(e)), keepAlives: requests.filter(isKeepAlive) };
}

const runs: Partial<Record<Policy, Run>> = {};

test('off: after a 20-minute approval wait the first turn reads nothing and writes the whole prefix again', async () => {
  const run = (runs.off = await waitForApproval(plain, 'off'));
  expect(run.result).toMatchObject({ status: 'completed', text: 'wrote' });
  expect(run.keepAlives).toEqual([]);
  const [before, after] = run.turns.map(usageOf);
  expect(readShare(after!)).toBe(0);
  // Everything turn 1 had written is written again (1.25× input), plus the turn's own tail.
  expect(after!.cacheCreationInputTokens).toBeGreaterThanOrEqual(before!.cacheCreationInputTokens);
  expect(run.result.keepAlive).toBeUndefined();
});

test('ttl-1h: every breakpoint carries the 1-hour TTL; the first turn after the wait reads its prefix', async () => {
  const run = (runs['ttl-1h'] = await waitForApproval(plain, 'ttl-1h'));
  expect(run.result).toMatchObject({ status: 'completed', text: 'wrote' });
  for (const e of run.turns) {
    const marks = JSON.stringify(e.body).match(/"cache_control":\{[^}]*\}/g) ?? [];
    expect(marks.length).toBeGreaterThan(0);
    expect(new Set(marks)).toEqual(new Set(['"cache_control":{"type":"ephemeral","ttl":"1h"}']));
  }
  const [before, after] = run.turns.map(usageOf);
  expect(before!.cacheCreation1hInputTokens).toBe(before!.cacheCreationInputTokens);
  expect(after!.cacheReadInputTokens).toBe(before!.cacheCreationInputTokens);
  expect(readShare(after!)).toBeGreaterThan(0.95);
  // The fork's usage keeps the 1-hour writes apart (priced 2×).
  expect(run.result.usage.cacheCreation1hInputTokens).toBe(before!.cacheCreationInputTokens + after!.cacheCreationInputTokens);
});

test('keep-alive: keep-alives while the fork waits keep the 5-minute prefix; they are counted in usage', async () => {
  const run = (runs['keep-alive'] = await waitForApproval(scaled, 'keep-alive'));
  expect(run.result).toMatchObject({ status: 'completed', text: 'wrote', turns: 2 });
  const [before, after] = run.turns.map(usageOf);
  expect(before!.cacheCreation1hInputTokens).toBeUndefined();
  expect(readShare(after!)).toBeGreaterThan(0.95);
  expect(after!.cacheReadInputTokens).toBe(before!.cacheCreationInputTokens);

  // One keep-alive per 4 emulated minutes (80% of the TTL) of the 20-minute wait; each read the whole prefix and wrote nothing.
  expect(run.keepAlives.length).toBeGreaterThanOrEqual(4);
  for (const k of run.keepAlives) {
    expect(usageOf(k)).toMatchObject({ cacheCreationInputTokens: 0, cacheReadInputTokens: before!.cacheCreationInputTokens, outputTokens: 0 });
  }
  // Consecutive requests of this fork never leave the prefix unread for a whole TTL.
  const gaps = run.requests.slice(1).map((e, i) => e.receivedAt - run.requests[i]!.receivedAt);
  expect(Math.max(...gaps)).toBeLessThan(5 * MINUTE);

  // Counted apart in the result, and included in its usage: the sum of what the model served.
  const served = run.requests.map(usageOf).reduce((a, b) => ({
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
  }));
  expect(run.result.usage).toEqual(served);
  const keptUsage = run.keepAlives.map(usageOf).reduce((a, b) => ({ ...a, inputTokens: a.inputTokens + b.inputTokens, cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens }));
  expect(run.result.keepAlive).toEqual({ calls: run.keepAlives.length, usage: keptUsage, costUsd: estimateCostUsd(MODEL, keptUsage) });
  // Charged at the tree's ledger like any call (by number, no turn), and counted there.
  const node = run.result.ledger?.nodes['cache-wait-keep-alive'];
  expect(node).toMatchObject({ turns: 2, keepAlives: run.keepAlives.length, usage: served });
  // Visible in the history as keep-alive activities.
  const events = (await scaled.client.workflow.getHandle('cache-wait-keep-alive').fetchHistory()).events ?? [];
  const summaries = events.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.userMetadata?.summary?.data] : [])).map((d) => (d ? Buffer.from(d).toString() : ''));
  expect(summaries.filter((s) => s.includes('keep-alive'))).toHaveLength(run.keepAlives.length);
});

test('keep-alive: an idle fork waiting for a message is kept warm too, until the message comes', async () => {
  const agentId = 'cache-idle-keep-alive';
  const mine = (e: RequestLogEntry): boolean => e.path === '/v1/messages' && e.rawBody.includes('(idle)');
  const handle = await scaled.forkflow.start({ agentId, prompt: 'Answer.\n@reply first', system: `(idle) ${SYSTEM}`, model: MODEL, idleTimeout: '1h', cacheWhileWaiting: 'keep-alive' });
  await waitFor(async () => (await handle.status()).state === 'idle', 'the fork to go idle');
  // Two keep-alives: more than 8 emulated minutes without a turn, the prefix still warm.
  const second = await scaled.model.log.waitFor((e) => mine(e) && isKeepAlive(e) && e.outcome === 'completed' && (e.body as { messages: unknown[] }).messages.length === 1 && scaled.model.log.entries().filter((x) => mine(x) && isKeepAlive(x)).length >= 2, { timeoutMs: 60_000 });
  const first = scaled.model.log.entries().find(mine)!;
  expect(second.receivedAt - first.receivedAt).toBeGreaterThan(5 * MINUTE);
  expect(await scaled.forkflow.sendMessage(agentId, { message: '@reply second' })).toBe('queued');
  await waitFor(async () => (await handle.status()).lastText === 'second' || undefined, 'the woken turn');
  const turns = scaled.model.log.entries().filter((e) => mine(e) && !isKeepAlive(e));
  expect(turns).toHaveLength(2);
  const [before, after] = turns.map(usageOf);
  expect(after!.cacheReadInputTokens).toBe(before!.cacheCreationInputTokens);
  expect(readShare(after!)).toBeGreaterThan(0.95);
  const status = await handle.status();
  expect(status.keepAlive?.calls).toBe(scaled.model.log.entries().filter((e) => mine(e) && isKeepAlive(e) && e.outcome === 'completed').length);
  await handle.cancel();
  expect(await scaled.forkflow.result(agentId)).toMatchObject({ status: 'killed', text: 'second', turns: 2 });
});

afterAll(() => {
  // The figures the README quotes: read share of the first turn after the wait, and what the wait cost.
  const usd = (n: number): string => `$${n.toFixed(4)}`;
  const lines = (Object.entries(runs) as [Policy, Run][]).map(([policy, run]) => {
    const [before, after] = run.turns.map(usageOf);
    const kept = run.keepAlives.reduce((c, k) => c + estimateCostUsd(MODEL, usageOf(k)), 0);
    const [c1, c2] = [estimateCostUsd(MODEL, before!), estimateCostUsd(MODEL, after!)];
    return `${policy}: read share after the wait ${(readShare(after!) * 100).toFixed(1)}% of ${totalInputTokens(after!)} input tokens; turn 1 ${usd(c1)}, ${run.keepAlives.length} keep-alives ${usd(kept)}, turn 2 ${usd(c2)}, total ${usd(c1 + kept + c2)}`;
  });
  process.stdout.write(`cache while waiting (${MODEL}, ${SYSTEM.length} chars of system prompt):\n${lines.join('\n')}\n`);
});
