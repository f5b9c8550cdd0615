/**
 * Time travel's pure parts: finding the run of a continue-as-new chain that holds a turn
 * (reading only first events on the way, a closed run's end from its result, a query only
 * where needed), the errors for points that cannot be had, what a counterfactual changed,
 * the fork-input rules, and a retried root's ledger.
 */
import { ZERO_USAGE, type Usage } from '../../../src/shared/messages-api/anthropic';
import { forkInputJsonSchema, validateForkInput } from '../../../src/shared/wire/fork-input-validation';
import type { PrefixRef, RunRef } from '../../../src/shared/prefix/prefix';
import { changedParts, ForkPointError, resolveTurnPoint, resumable, usageSince, type PointReader, type RunEnd, type TurnPointAnswer } from '../../../src/shared/prefix/time-travel';
import { newLedger } from '../../../src/shared/tree/tree-ledger';
import { charge, reserve, retryRoot } from '../../../src/shared/tree/tree-ledger-rules';

const FORK = 'forkWorkflow';
const ref = (runId: string, count: number): PrefixRef => ({
  run: { workflowId: 'a', runId },
  count,
  digest: `d${count}`,
  lastRole: 'user',
  pendingToolUseIds: [],
  context: { from: { workflowId: 'a', runId: 'r1' }, contextKey: 'k', model: 'm', cacheKeyHash: 'c', toolNames: [], maxTokens: 100 },
});

/** Agent `a` in three runs: turns 1–4 in r1, 5–8 in r2, 9–12 in r3 (the latest, closed at turn 12). */
function chain(opts: { running?: boolean } = {}) {
  const calls: string[] = [];
  const starts: Record<string, unknown> = {
    r1: { prompt: 'p' },
    r2: { continuation: { state: { turns: 4 }, ref: { run: { workflowId: 'a', runId: 'r1' } } } },
    r3: { continuation: { state: { turns: 8 }, ref: { run: { workflowId: 'a', runId: 'r2' } } } },
  };
  const reader: PointReader = {
    describe(workflowId, runId) {
      calls.push(`describe ${workflowId}/${runId ?? 'latest'}`);
      if (workflowId === 'snap') return Promise.resolve({ runId: 's1', workflowType: 'snapshotWorkflow', running: false });
      if (workflowId !== 'a' || (runId && !starts[runId])) return Promise.resolve(undefined);
      return Promise.resolve({ runId: runId ?? 'r3', workflowType: FORK, running: opts.running === true });
    },
    startInput(run: RunRef) {
      calls.push(`start ${run.runId}`);
      return Promise.resolve(starts[run.runId]);
    },
    ask(run, turn): Promise<TurnPointAnswer> {
      calls.push(`ask ${run.runId} ${turn}`);
      return Promise.resolve({ kind: 'point', point: { agentId: 'a', runId: run.runId, turn: turn ?? 12, ref: ref(run.runId, 2 * (turn ?? 12) + 1), usage: ZERO_USAGE, toolUses: 0 } });
    },
    ended(run): Promise<RunEnd | undefined> {
      calls.push(`ended ${run.runId}`);
      return Promise.resolve(run.runId === 'r3' && !opts.running ? { turns: 12, ref: ref('r3', 24), usage: ZERO_USAGE, toolUses: 11 } : undefined);
    },
  };
  return { reader, calls };
}

const resolve = (reader: PointReader, agentId: string, turn?: number, runId?: string) =>
  resolveTurnPoint(reader, agentId, { ...(turn !== undefined ? { turn } : {}), ...(runId ? { runId } : {}), forkWorkflowType: FORK });

test('a turn of an earlier run: first events on the way back, one query of the run that holds it', async () => {
  const { reader, calls } = chain();
  const point = await resolve(reader, 'a', 6);
  expect(point).toMatchObject({ runId: 'r2', turn: 6, ref: { count: 13 } });
  expect(calls).toEqual(['describe a/latest', 'start r3', 'start r2', 'ended r2', 'ask r2 6']);
});

test("a closed agent's end, or its conversation as it stands, comes from its result: no query", async () => {
  for (const turn of [12, undefined]) {
    const { reader, calls } = chain();
    await expect(resolve(reader, 'a', turn)).resolves.toMatchObject({ runId: 'r3', turn: 12, toolUses: 11, ref: { count: 24 } });
    expect(calls.filter((c) => c.startsWith('ask'))).toEqual([]);
  }
  // As it stands, the run's first event is not even read.
  const { reader, calls } = chain();
  await resolve(reader, 'a');
  expect(calls).toEqual(['describe a/latest', 'ended r3']);
});

test('a running agent is asked; a turn of its current run needs no walk back', async () => {
  const { reader, calls } = chain({ running: true });
  await expect(resolve(reader, 'a', 10)).resolves.toMatchObject({ runId: 'r3', turn: 10 });
  expect(calls).toEqual(['describe a/latest', 'start r3', 'ask r3 10']);
});

test('points that cannot be had: clear errors, and what each asked', async () => {
  const fails = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ForkPointError);
    return err as ForkPointError;
  };
  let c = chain();
  expect(await fails(resolve(c.reader, 'a', 13))).toMatchObject({ problem: 'past_end', message: 'Agent a has taken 12 turns: turn 13 is past its end (fork from turns 0–12).' });
  expect(c.calls.filter((x) => x.startsWith('ask'))).toEqual([]);
  for (const bad of [-1, 1.5, Number.NaN]) {
    c = chain();
    expect(await fails(resolve(c.reader, 'a', bad))).toMatchObject({ problem: 'bad_turn' });
    expect(c.calls).toEqual([]);
  }
  c = chain();
  expect(await fails(resolve(c.reader, 'ghost', 1))).toMatchObject({ problem: 'unknown_agent', message: 'No agent ghost (check the id with `forkflow list`).' });
  expect(await fails(resolve(c.reader, 'a', 1, 'r9'))).toMatchObject({ problem: 'foreign_run', message: 'Run r9 is not a run of agent a.' });
  expect(await fails(resolve(c.reader, 'snap', 0))).toMatchObject({ problem: 'not_an_agent' });
});

test('a run that names an earlier run for the turn is followed; runs naming each other in a loop are an error', async () => {
  const { reader } = chain({ running: true });
  const redirecting: PointReader = {
    ...reader,
    ask: async (run, turn) => (run.runId === 'r3' ? { kind: 'earlier', run: { workflowId: 'a', runId: 'r2' }, turn: turn ?? 0 } : reader.ask(run, turn)),
  };
  await expect(resolve(redirecting, 'a', 9)).resolves.toMatchObject({ runId: 'r2', turn: 9 });
  const looping: PointReader = { ...reader, startInput: () => Promise.resolve({ continuation: { state: { turns: 100 }, ref: { run: { workflowId: 'a', runId: 'r3' } } } }) };
  await expect(resolve(looping, 'a', 1)).rejects.toMatchObject({ problem: 'unreadable' });
  const foreign: PointReader = { ...reader, startInput: () => Promise.resolve({ continuation: { state: { turns: 5 }, ref: { run: { workflowId: 'other', runId: 'x' } } } }) };
  await expect(resolve(foreign, 'a', 1)).rejects.toMatchObject({ problem: 'unreadable' });
});

test('what a counterfactual changed; usage since a point; which points an agent went on from', () => {
  const parts = { system: 's', tools: 't', model: 'm', thinking: 'n' };
  expect(changedParts(parts, { ...parts, model: 'm2', tools: 't2' })).toEqual(['tools', 'model']);
  expect(changedParts(parts, parts)).toEqual([]);
  const u = (n: number): Usage => ({ inputTokens: n, outputTokens: n, cacheReadInputTokens: n, cacheCreationInputTokens: n });
  expect(usageSince(u(10), u(4))).toEqual(u(6));
  expect(resumable({ lastRole: 'user' })).toBe(true);
  expect(resumable({ lastRole: 'assistant' })).toBe(false);
});

test('fork input: `from` or a reference, not both; a replay needs a point; the JSON Schema names the fields', () => {
  const point = ref('r1', 3);
  expect(validateForkInput({ prompt: 'x', from: { agentId: 'a', turn: 2 } })).toMatchObject({ ok: true });
  expect(validateForkInput({ prompt: 'x', from: { agentId: 'a', turn: -1 } })).toMatchObject({ ok: false, issues: [expect.stringContaining('from.turn') as string] });
  expect(validateForkInput({ prompt: 'x', from: { agentId: 'a' }, parentRef: point })).toEqual({ ok: false, issues: ['from: give from (a point to resolve) or parent/parentRef, not both'] });
  expect(validateForkInput({ prompt: 'x', replay: true })).toEqual({ ok: false, issues: ['replay: replay needs a point to go on from: from, or parentRef'] });
  expect(validateForkInput({ prompt: 'x', replay: true, parentRef: point, origin: { agentId: 'a', runId: 'r1', turn: 1 }, counterfactual: true, model: 'other' })).toMatchObject({ ok: true });
  const schema = forkInputJsonSchema() as { properties: Record<string, unknown> };
  for (const field of ['from', 'origin', 'counterfactual', 'replay', 'retry']) expect(schema.properties).toHaveProperty(field);
});

test('a retried root keeps what its tree charged, charges its next turns as new ones, and may spend its new budget', () => {
  const ledger = newLedger({ agentId: 'r', model: 'claude-sonnet-4-5', budget: 1000 }, { maxTreeRunning: 5, maxTreeSpawns: 10 });
  for (const turn of [1, 2, 3, 4]) {
    expect(reserve(ledger, { agentId: 'r', turn, need: 10, want: 100, toolUses: 0 })).toMatchObject({ ok: true });
    charge(ledger, { agentId: 'r', turn, model: 'claude-sonnet-4-5', usage: { ...ZERO_USAGE, inputTokens: 200 }, toolUses: 0 });
  }
  expect(reserve(ledger, { agentId: 'r', turn: 5, need: 300, want: 300, toolUses: 0 })).toMatchObject({ ok: false });
  retryRoot(ledger, 2, 500);
  expect(ledger.nodes.r).toMatchObject({ lastTurn: 2, budget: 1300, runs: 2, charged: 800, turns: 4 });
  // Turn 3 again is a new call, not a repeat.
  expect(reserve(ledger, { agentId: 'r', turn: 3, need: 300, want: 300, toolUses: 0 })).toEqual({ ok: true, tokens: 300 });
  expect(charge(ledger, { agentId: 'r', turn: 3, model: 'claude-sonnet-4-5', usage: { ...ZERO_USAGE, inputTokens: 100 }, toolUses: 0 })).toBe(true);
  expect(ledger.nodes.r).toMatchObject({ charged: 900, turns: 5, lastTurn: 3 });
});
