/**
 * Context management in the turn loop, against the offline model with small windows: forkflow
 * compaction (its own activity, the summary message and kept turns, status, stream, transcript
 * whole), provider compaction (edit, beta header, requests from the block on), both clearings,
 * a forced `prompt is too long` answered by a compaction, `off` failing as before, a
 * `contextWindow` the model cannot have, a fork of a compacted parent, and forks from points
 * (time travel) before and after a compaction.
 */
import { isSummaryMessage } from '../../src/shared/context/summary';
import { COMPACT_BETA, CONTEXT_MANAGEMENT_BETA, CLEARED_TOOL_RESULT } from '../../src/shared/context/edits';
import { blocksOf, totalInputTokens, type MessageParam } from '../../src/shared/messages-api/anthropic';
import type { StreamEvent } from '../../src/shared/streams/stream-events';
import { startHarness, type Harness } from '../kit/env';
import { recordCarriedState, recordHistory, startInputOf } from '../kit/histories';
import { parseCarriedState } from '../../src/shared/wire/carried-state';
import type { ForkInputJson } from '../../src/shared/wire/fork-input';
import { bodyOf } from '../kit/requests';
import { FACT, inputTokensOf, longAgentScript, seedLongAgent, servedRequests, summaryIndexes } from '../kit/long-agent';

jest.setTimeout(180_000);

/** Models whose name says their window (the offline model enforces it; forks are told with `contextWindow`). */
const WINDOWS: Record<string, number> = { 'claude-ctx-20k': 20_000, 'claude-ctx-64k': 64_000 };

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'context', model: { contextWindow: (model) => WINDOWS[model] ?? 200_000 } });
  seedLongAgent(h.workspaceRoot, 2_000);
  seedLongAgent(h.workspaceRoot, 4_000, 'big.txt');
});
afterAll(() => h.close());

/** The requests of one agent (its directive names it, and every summary repeats the directive). */
const requestsOf = (marker: string) => servedRequests(h.model).filter((e) => JSON.stringify(bodyOf(e).messages).includes(marker));
const agentOf = (name: string) => `(agent ${name})`;
/** No budget stop in the way of a long run. */
const budget = { maxTokens: 100_000_000 };

async function streamOf(agentId: string): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const e of h.forkflow.stream(agentId)) events.push(e);
  return events;
}

/** The activities an agent scheduled, over all its runs. */
async function activityTypes(agentId: string): Promise<string[]> {
  const types: string[] = [];
  for await (const run of h.client.workflow.list({ query: `WorkflowId = '${agentId}'` })) {
    const history = await h.client.workflow.getHandle(agentId, run.runId).fetchHistory();
    for (const e of history.events ?? []) if (e.activityTaskScheduledEventAttributes?.activityType?.name) types.push(e.activityTaskScheduledEventAttributes.activityType.name);
  }
  return types;
}

test('forkflow compaction: a summary call of its own before the threshold, the agent goes on from summary and recent turns, the fact survives', async () => {
  const prompt = longAgentScript(60, 'fk-compact');
  const result = await h.forkflow.fork({ agentId: 'fk-compact', prompt, model: 'claude-ctx-20k', contextWindow: 20_000, maxTurns: 60, budget, continueAsNew: { turnsPerRun: 35 } }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', turns: 60 });
  expect(result.text).toBe(`Recalled: ${FACT}`);

  const context = result.context!;
  expect(context).toMatchObject({ policy: 'forkflow compaction', window: 20_000, threshold: 16_000 });
  expect(context.compactions).toBeGreaterThanOrEqual(2);
  expect(context.boundaries.every((b) => b.by === 'forkflow' && b.reason === 'threshold' && b.tokensBefore > 16_000 && b.tokensAfter! < b.tokensBefore / 2)).toBe(true);
  expect(context.summarising.usage.outputTokens).toBeGreaterThan(0);
  expect(context.tokensSaved).toBeGreaterThan(0);

  // Every request fit the window (none refused), and none passed the threshold by more than one turn's growth.
  const requests = requestsOf(agentOf('fk-compact'));
  expect(requests.filter((e) => e.status !== 200)).toEqual([]);
  expect(Math.max(...requests.map(inputTokensOf))).toBeLessThanOrEqual(16_000 + 2_000);
  // The summarising calls were model calls of their own, each read from the agent's cache.
  const summaries = requests.filter((e) => JSON.stringify(bodyOf(e).messages).includes('forkflow-compaction-request'));
  expect(summaries).toHaveLength(context.compactions);
  for (const s of summaries) expect(s.usage!.cache_read_input_tokens / inputTokensOf(s)).toBeGreaterThan(0.8);
  expect((await activityTypes('fk-compact')).filter((t) => t === 'compactContext')).toHaveLength(context.compactions);

  // After a compaction, requests start at the summary message (the cut), followed by the kept turns.
  const transcript = await h.forkflow.transcript('fk-compact');
  const boundaries = summaryIndexes(transcript);
  expect(boundaries).toEqual(context.boundaries.map((b) => b.at));
  const last = requests.at(-1)!;
  expect(JSON.stringify(bodyOf(last).messages[0])).toContain('forkflow-compacted');
  // The transcript is whole: the turn-3 fact is still in its tool result, before the first boundary.
  expect(JSON.stringify(transcript.slice(0, boundaries[0]))).toContain(FACT);
  expect(transcript.filter((m) => m.role === 'assistant').length).toBeGreaterThan(60);

  const events = await streamOf('fk-compact');
  const compactions = events.filter((e): e is Extract<StreamEvent, { type: 'compaction' }> => e.type === 'compaction');
  // A reader after the end reads the last run's stream (it continued as new after its first compaction).
  expect(compactions.length).toBeGreaterThanOrEqual(1);
  expect(compactions.map((e) => e.at)).toEqual(boundaries.slice(-compactions.length));
  expect(compactions.at(-1)).toMatchObject({ by: 'forkflow', reason: 'threshold', compaction: context.compactions });
  // The first request after each compaction missed the cache on purpose: named so.
  expect(result.cacheBreak?.reason).toBe('compacted');

  // It continued as new after its first compaction: the next run took the boundary over.
  const input = await startInputOf<ForkInputJson>(h.client.workflow.getHandle('fk-compact'));
  const carried = parseCarriedState(input.continuation?.state);
  expect(carried.ok && carried.state.context).toMatchObject({ from: context.boundaries[0]!.at, compactions: 1 });
  recordCarriedState(input.continuation?.state, 'v2-context-continue-as-new');
  await recordHistory(h.client.workflow.getHandle('fk-compact'), 'context-forkflow-compaction');
});

test('provider compaction: the edit and its beta header on every request, the block recorded, later requests start at it', async () => {
  const prompt = longAgentScript(70, 'pv-compact', 'big.txt');
  const result = await h.forkflow.fork({ agentId: 'pv-compact', prompt, model: 'claude-ctx-64k', contextWindow: 64_000, contextManagement: 'provider', maxTurns: 70, budget }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', turns: 70, text: `Recalled: ${FACT}` });
  const requests = requestsOf(agentOf('pv-compact'));
  expect(requests.filter((e) => e.status !== 200)).toEqual([]);
  for (const e of requests) {
    expect(e.headers['anthropic-beta']).toContain(COMPACT_BETA);
    expect(bodyOf(e)).toMatchObject({ context_management: { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 51_200 } }] } });
  }
  const compacting = requests.filter((e) => e.response?.content[0]?.type === 'compaction');
  expect(compacting.length).toBeGreaterThanOrEqual(1);
  expect(result.context).toMatchObject({ policy: 'provider compaction', compactions: compacting.length });
  expect(result.context!.boundaries[0]).toMatchObject({ by: 'provider', reason: 'provider' });
  expect(totalInputTokens(result.context!.summarising.usage)).toBeGreaterThan(51_200);
  // The request after the compacting one starts with the reply that holds the block.
  const next = requests[requests.indexOf(compacting[0]!) + 1]!;
  const first = bodyOf(next).messages[0] as MessageParam;
  expect(first.role).toBe('assistant');
  expect(blocksOf(first)[0]).toMatchObject({ type: 'compaction' });
  expect(inputTokensOf(next)).toBeLessThan(10_000);
});

test('clear-tool-results by the provider: its edit and header; by forkflow: older results sent as a placeholder', async () => {
  const byProvider = await h.forkflow.fork({ agentId: 'clear-pv', prompt: longAgentScript(40, 'clear-pv'), model: 'claude-ctx-20k', contextWindow: 20_000, contextManagement: 'clear-tool-results', maxTurns: 40, budget }, { mode: 'sync' });
  expect(byProvider).toMatchObject({ status: 'completed', turns: 40 });
  const pv = requestsOf(agentOf('clear-pv'));
  expect(pv.every((e) => e.headers['anthropic-beta']?.includes(CONTEXT_MANAGEMENT_BETA))).toBe(true);
  expect(byProvider.context!.cleared!.toolUses).toBeGreaterThan(0);
  expect(Math.max(...pv.map(inputTokensOf))).toBeLessThanOrEqual(20_000);

  const byForkflow = await h.forkflow.fork({ agentId: 'clear-ff', prompt: longAgentScript(40, 'clear-ff'), model: 'claude-ctx-20k', contextWindow: 20_000, contextManagement: { strategy: 'clear-tool-results', by: 'forkflow', keepToolUses: 2 }, maxTurns: 40, budget }, { mode: 'sync' });
  expect(byForkflow).toMatchObject({ status: 'completed', turns: 40 });
  const ff = requestsOf(agentOf('clear-ff'));
  const lastBody = bodyOf(ff.at(-1)!);
  const results = lastBody.messages.flatMap((m) => blocksOf(m)).filter((b) => b.type === 'tool_result');
  expect(results.filter((b) => b.type === 'tool_result' && b.content === CLEARED_TOOL_RESULT).length).toBeGreaterThan(10);
  expect(results.slice(-2).every((b) => b.type === 'tool_result' && b.content !== CLEARED_TOOL_RESULT)).toBe(true);
  expect(ff.every((e) => !e.headers['anthropic-beta'])).toBe(true);
  expect(Math.max(...ff.map(inputTokensOf))).toBeLessThanOrEqual(20_000);
});

test('a forced prompt is too long mid-run: the agent compacts and goes on; under `off` it fails as before', async () => {
  let n = 0;
  h.model.faults.add({ kind: 'prompt_too_long', match: (e) => JSON.stringify(e.body ?? '').includes(agentOf('ptl-on')) && ++n === 6 });
  const on = await h.forkflow.fork({ agentId: 'ptl-on', prompt: longAgentScript(12, 'ptl-on'), maxTurns: 12, budget }, { mode: 'sync' });
  expect(on).toMatchObject({ status: 'completed', turns: 12, text: `Recalled: ${FACT}` });
  expect(on.context!.boundaries).toEqual([expect.objectContaining({ by: 'forkflow', reason: 'prompt-too-long' })]);
  const refused = requestsOf(agentOf('ptl-on')).filter((e) => e.status === 400);
  expect(refused).toHaveLength(1);
  expect(refused[0]!.error?.message).toMatch(/^prompt is too long: \d+ tokens > 200000 maximum$/);
  await recordHistory(h.client.workflow.getHandle('ptl-on'), 'context-prompt-too-long');

  h.model.faults.add({ kind: 'prompt_too_long', match: (e) => JSON.stringify(e.body ?? '').includes(agentOf('ptl-off')) });
  const off = await h.forkflow.fork({ agentId: 'ptl-off', prompt: longAgentScript(12, 'ptl-off'), contextManagement: 'off', maxTurns: 12 }, { mode: 'sync' });
  expect(off).toMatchObject({ status: 'failed', error: 'prompt is too long: 200001 tokens > 200000 maximum' });
  const status = await h.forkflow.status('ptl-off');
  expect(status).toMatchObject({ state: 'failed', context: { policy: 'off', compactions: 0 } });
});

test('a contextWindow the model cannot have fails the fork at once, saying why', async () => {
  const handle = await h.forkflow.start({ agentId: 'too-wide', prompt: '@reply hi', model: 'claude-haiku-4-5', contextWindow: 1_000_000 });
  await expect(handle.result()).rejects.toThrow(/contextWindow 1000000 is more than claude-haiku-4-5 takes: 200000 tokens \(it has no 1M-token window\)/);
});

test('a fork of a compacted parent starts from the summary, by reference; its siblings send that prefix byte for byte and read it from the cache', async () => {
  const parent = await h.forkflow.fork({ agentId: 'cp-parent', prompt: longAgentScript(40, 'cp-parent'), model: 'claude-ctx-20k', contextWindow: 20_000, maxTurns: 40, budget }, { mode: 'sync' });
  expect(parent.context!.compactions).toBeGreaterThanOrEqual(1);
  const ref = parent.conversation!;
  expect(ref.window).toMatchObject({ from: parent.context!.from, compactions: parent.context!.compactions });
  const siblings = await h.forkflow.forkMany({ agentId: 'cp-parent' }, [0, 1, 2].map((i) => ({ agentId: `cp-sibling-${i}`, prompt: `Sibling ${i}.\n@reply sibling ${i} done`, model: 'claude-ctx-20k', contextWindow: 20_000 })));
  const results = await Promise.all(siblings.map((s) => s.result()));
  expect(results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
  const firsts = [0, 1, 2].map((i) => requestsOf(`Sibling ${i}.`)[0]!);
  const bodies = firsts.map((e) => bodyOf(e).messages);
  // Each starts at the parent's summary message, and they differ only in their directive.
  for (const messages of bodies) expect(isSummaryMessage(messages[0]!)).toBe(true);
  const shared = (m: MessageParam[]) => JSON.stringify(m.slice(0, -1));
  expect(new Set(bodies.map(shared)).size).toBe(1);
  // Zero-copy: the forks' histories hold no summary (it lives in the parent's).
  for (let i = 0; i < 3; i++) {
    const history = JSON.stringify(await h.client.workflow.getHandle(`cp-sibling-${i}`).fetchHistory());
    expect(history).not.toContain('forkflow-compacted');
  }
  // The siblings after the first read the shared prefix from the cache.
  const share = firsts.map((e) => e.usage!.cache_read_input_tokens / inputTokensOf(e));
  expect(Math.max(...share.slice(1))).toBeGreaterThan(0.8);
  await recordHistory(h.client.workflow.getHandle('cp-sibling-0'), 'context-fork-of-compacted-parent');
});

test('forks from points of a compacted agent (time travel): before its compaction the whole conversation, after it the summary on', async () => {
  const parent = await h.forkflow.fork({ agentId: 'tp-parent', prompt: longAgentScript(40, 'tp-parent'), model: 'claude-ctx-20k', contextWindow: 20_000, maxTurns: 40, budget }, { mode: 'sync' });
  const first = parent.context!.boundaries[0]!;
  // The compaction came before the call of turn `first.turn`: the point of the turn before it is that call's conversation.
  const after = await h.forkflow.turnPoint('tp-parent', { atTurn: first.turn - 1 });
  // Well before it, so that the fork's own directive cannot take it over the threshold (two
  // turns before was once used: the margin was one turn, and a longer Read description ate it).
  const before = await h.forkflow.turnPoint('tp-parent', { atTurn: Math.floor(first.turn / 2) });
  expect(after.ref.window).toMatchObject({ from: first.at, compactions: 1 });
  expect(before.ref.window).toBeUndefined();
  expect(before.ref.count).toBeLessThan(first.at);
  const [late, early] = await Promise.all(
    [after, before].map(async (point, i) => {
      const fork = await h.forkflow.forkFrom('tp-parent', { agentId: `tp-fork-${i}`, prompt: `Point fork ${i}.\n@reply point fork ${i} done`, model: 'claude-ctx-20k', contextWindow: 20_000 }, { atTurn: point.turn });
      return fork.result();
    }),
  );
  expect([late!.status, early!.status]).toEqual(['completed', 'completed']);
  const lateFirst = bodyOf(requestsOf('Point fork 0.')[0]!).messages;
  const earlyFirst = bodyOf(requestsOf('Point fork 1.')[0]!).messages;
  // After: the fork sends what the parent sent at that turn, from its summary message (compacted once, as the parent was).
  expect(isSummaryMessage(lateFirst[0]!)).toBe(true);
  expect(late!.context).toMatchObject({ from: first.at, compactions: 1 });
  // Before: the whole conversation up to the point, with no summary in it.
  expect(earlyFirst.length).toBeGreaterThanOrEqual(before.ref.count);
  expect(earlyFirst.length).toBeLessThanOrEqual(before.ref.count + 1);
  expect(earlyFirst.some((m) => isSummaryMessage(m))).toBe(false);
  expect(early!.context).toMatchObject({ from: 0, compactions: 0 });
});
