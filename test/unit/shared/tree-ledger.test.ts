/**
 * The tree ledger's rules, on plain data: admission under the running and total-spawn
 * limits, grants capped by every ancestor's remainder, reservations that keep the tree's
 * charged tokens under its root's budget, and idempotence of every operation (they arrive
 * by activity retries).
 */
import { ZERO_USAGE, type Usage } from '../../../src/shared/messages-api/anthropic';
import { tokensCharged } from '../../../src/shared/tree/budget';
import { newLedger, type TreeLedger } from '../../../src/shared/tree/tree-ledger';
import { agentEndedSchema } from '../../../src/shared/tree/tree-ledger-requests';
import { admit, charge, ended, leftFor, ledgerTotals, reserve, runningCount, withdraw, WITHDRAWN_KEPT } from '../../../src/shared/tree/tree-ledger-rules';

const usage = (inputTokens: number, outputTokens: number, cacheReadInputTokens = 0): Usage => ({ ...ZERO_USAGE, inputTokens, outputTokens, cacheReadInputTokens });
const tree = (budget = 1000, maxTreeRunning = 5, maxTreeSpawns = 100): TreeLedger => newLedger({ agentId: 'r', model: 'claude-sonnet-4-5', budget }, { maxTreeRunning, maxTreeSpawns });
const spawn = (l: TreeLedger, agentId: string, parentId = 'r', want = 400) => admit(l, { agentId, parentId, model: 'claude-haiku-4-5', kind: 'spawn', want });

test('admission counts the root among running agents and refuses past the limit; a retry returns the same grant', () => {
  const l = tree(10_000, 3);
  expect(spawn(l, 'r.a')).toEqual({ ok: true, budget: 400 });
  expect(spawn(l, 'r.a')).toEqual({ ok: true, budget: 400 });
  expect(spawn(l, 'r.b')).toEqual({ ok: true, budget: 400 });
  expect(spawn(l, 'r.c')).toMatchObject({ ok: false, reason: expect.stringContaining('already runs 3 agents') as string });
  expect(runningCount(l)).toBe(3);
  ended(l, 'r.a');
  ended(l, 'r.a');
  expect(spawn(l, 'r.c')).toMatchObject({ ok: true });
  expect(l.spawned).toBe(3);
});

test('total spawns are limited; a resume is not a spawn and keeps its budget', () => {
  const l = tree(10_000, 10, 2);
  spawn(l, 'r.a', 'r', 300);
  spawn(l, 'r.b');
  expect(spawn(l, 'r.c')).toMatchObject({ ok: false, reason: expect.stringContaining('the most it may start') as string });
  ended(l, 'r.a');
  expect(admit(l, { agentId: 'r.a', parentId: 'r', model: 'm', kind: 'resume', want: 9999 })).toEqual({ ok: true, budget: 300 });
  expect(l.nodes['r.a']!.runs).toBe(2);
  expect(admit(l, { agentId: 'r.zz', parentId: 'r', model: 'm', kind: 'resume', want: 1 })).toMatchObject({ ok: false });
});

test('an admitted agent that never started is withdrawn without a trace; one that ran, or a resume, only ends', () => {
  const l = tree(10_000, 3, 2);
  spawn(l, 'r.a');
  spawn(l, 'r.b');
  expect(spawn(l, 'r.c')).toMatchObject({ ok: false });
  withdraw(l, 'r.a');
  withdraw(l, 'r.a');
  expect(l.nodes['r.a']).toBeUndefined();
  expect(l.spawned).toBe(1);
  expect(runningCount(l)).toBe(2);
  // Its place is free again for another agent; its own id stays spent (ids are never reused,
  // so an admission of it arriving now is a late attempt of the one taken back).
  expect(JSON.stringify(spawn(l, 'r.a'))).toMatch(/"ok":false.*already used/);
  expect(spawn(l, 'r.a2')).toMatchObject({ ok: true });
  withdraw(l, 'r.a2');
  // One that reserved (it started) stays in the totals and ends.
  expect(reserve(l, { agentId: 'r.b', turn: 1, want: 100, need: 10, toolUses: 0 })).toMatchObject({ ok: true });
  withdraw(l, 'r.b');
  expect(l.nodes['r.b']).toMatchObject({ state: 'ended' });
  // A resume that did not happen: it keeps its first run.
  expect(spawn(l, 'r.d')).toMatchObject({ ok: true });
  charge(l, { agentId: 'r.d', turn: 1, model: 'm', usage: usage(50, 5), toolUses: 0 });
  ended(l, 'r.d');
  admit(l, { agentId: 'r.d', parentId: 'r', model: 'm', kind: 'resume', want: 1 });
  withdraw(l, 'r.d');
  expect(l.nodes['r.d']).toMatchObject({ state: 'ended', runs: 2, turns: 1 });
  // …and it can be resumed again later (only never-started ids are spent).
  expect(admit(l, { agentId: 'r.d', parentId: 'r', model: 'm', kind: 'resume', want: 1 })).toMatchObject({ ok: true });
  // The root is never withdrawn; the signal says "never started" with a literal false only.
  withdraw(l, 'r');
  expect(l.nodes.r).toBeDefined();
  expect(agentEndedSchema.safeParse({ agentId: 'r.a', started: false }).success).toBe(true);
  expect(agentEndedSchema.safeParse({ agentId: 'r.a', started: true }).success).toBe(false);
});

test('a withdrawal that arrives before its admission (a timed-out attempt landing late) leaves no phantom agent', () => {
  const l = tree(10_000, 5);
  withdraw(l, 'r.late');
  expect(JSON.stringify(spawn(l, 'r.late'))).toMatch(/"ok":false.*already used/);
  expect(l.nodes['r.late']).toBeUndefined();
  expect(l.spawned).toBe(0);
  // The list of spent ids is bounded.
  for (let i = 0; i < WITHDRAWN_KEPT + 5; i++) withdraw(l, `r.w${i}`);
  expect(l.withdrawn).toHaveLength(WITHDRAWN_KEPT);
  expect(l.withdrawn![WITHDRAWN_KEPT - 1]).toBe(`r.w${WITHDRAWN_KEPT + 4}`);
});

test('a grant is at most what every ancestor has left, spent and reserved tokens counted', () => {
  const l = tree(1000);
  expect(spawn(l, 'r.a', 'r', 600)).toEqual({ ok: true, budget: 600 });
  expect(reserve(l, { agentId: 'r', turn: 1, need: 100, want: 300, toolUses: 0 })).toEqual({ ok: true, tokens: 300 });
  // A grant is a cap, not a reservation: the 300 held by a call in flight does not shrink it;
  // the grandchild is capped by its parent's 600.
  expect(spawn(l, 'r.a.x', 'r.a', 5000)).toEqual({ ok: true, budget: 600 });
  expect(charge(l, { agentId: 'r.a.x', turn: 1, model: 'm', usage: usage(350, 50), toolUses: 2 })).toBe(true);
  expect(leftFor(l, 'r.a')).toBe(200);
  expect(spawn(l, 'r.a.y', 'r.a', 5000)).toEqual({ ok: true, budget: 200 });
  expect(leftFor(l, 'r')).toBe(1000 - 300 - 400);
  expect(leftFor(l, 'r', false)).toBe(1000 - 400);
  expect(spawn(l, 'r.b', 'r', 5000)).toEqual({ ok: true, budget: 600 });
});

test('reservations keep the charged total under the root budget, whatever the order of the calls', () => {
  const l = tree(1000, 10);
  for (const id of ['r.a', 'r.b', 'r.c']) spawn(l, id, 'r', 1000);
  const calls = [
    { agentId: 'r.a', turn: 1, need: 200, want: 500 },
    { agentId: 'r.b', turn: 1, need: 200, want: 500 },
    { agentId: 'r.c', turn: 1, need: 200, want: 500 },
  ];
  const granted = calls.map((c) => reserve(l, { ...c, toolUses: 0 }));
  expect(granted).toEqual([
    { ok: true, tokens: 500 },
    { ok: true, tokens: 500 },
    // Refused for now, not for good: once the calls in flight are charged there is room again.
    { ok: false, left: 0, reason: expect.stringContaining('0 tokens left') as string, wait: true },
  ]);
  // Each call charges at most what was reserved; the reservation is released at the charge.
  charge(l, { agentId: 'r.a', turn: 1, model: 'm', usage: usage(200, 100, 50), toolUses: 0 });
  expect(leftFor(l, 'r.c')).toBe(1000 - 500 - tokensCharged(usage(200, 100, 50)));
  expect(reserve(l, { agentId: 'r.c', turn: 1, need: 200, want: 500, toolUses: 0 })).toMatchObject({ ok: false, left: 195, wait: true });
  expect(reserve(l, { agentId: 'r.c', turn: 1, need: 150, want: 500, toolUses: 0 })).toEqual({ ok: true, tokens: 195 });
  // Spent for good: no waiting helps.
  charge(l, { agentId: 'r.b', turn: 1, model: 'm', usage: usage(400, 100), toolUses: 0 });
  charge(l, { agentId: 'r.c', turn: 1, model: 'm', usage: usage(100, 50), toolUses: 0 });
  expect(reserve(l, { agentId: 'r.a', turn: 2, need: 200, want: 500, toolUses: 0 })).toMatchObject({ ok: false, left: 45, wait: false });
});

test('reserve and charge are idempotent by agent and turn; a lapsed reservation is dropped', () => {
  const l = tree(1000);
  expect(reserve(l, { agentId: 'r', turn: 1, need: 10, want: 100, toolUses: 0 })).toEqual({ ok: true, tokens: 100 });
  expect(reserve(l, { agentId: 'r', turn: 1, need: 10, want: 900, toolUses: 0 })).toEqual({ ok: true, tokens: 100 });
  expect(charge(l, { agentId: 'r', turn: 1, model: 'm', usage: usage(40, 10), toolUses: 1 })).toBe(true);
  expect(charge(l, { agentId: 'r', turn: 1, model: 'm', usage: usage(40, 10), toolUses: 1 })).toBe(false);
  expect(ledgerTotals(l)).toMatchObject({ usage: usage(40, 10), charged: 50, turns: 1, toolUses: 1, agents: 1 });
  // Turn 2's call failed for good: its reservation lapses when turn 3 reserves.
  reserve(l, { agentId: 'r', turn: 2, need: 10, want: 400, toolUses: 1 });
  expect(reserve(l, { agentId: 'r', turn: 3, need: 10, want: 900, toolUses: 1 })).toEqual({ ok: true, tokens: 900 });
  expect(reserve(l, { agentId: 'nobody', turn: 1, need: 1, want: 1, toolUses: 0 })).toMatchObject({ ok: false });
});

test('an ended agent keeps its facts; the ledger is plain JSON (it crosses continue-as-new)', () => {
  const l = tree(1000);
  spawn(l, 'r.a');
  charge(l, { agentId: 'r.a', turn: 1, model: 'claude-haiku-4-5', usage: usage(100, 20), toolUses: 3 });
  ended(l, 'r.a');
  const copy = JSON.parse(JSON.stringify(l)) as TreeLedger;
  expect(copy).toEqual(l);
  expect(ledgerTotals(copy)).toMatchObject({ usage: usage(100, 20), agents: 2, toolUses: 3 });
  expect(ledgerTotals(copy).costUsd).toBeGreaterThan(0);
});

test('a compaction call is charged once by its number, apart from turns, and shows in the agent view', () => {
  const l = tree(100_000);
  spawn(l, 'r.a', 'r', 50_000);
  expect(reserve(l, { agentId: 'r.a', turn: 3, need: 10, want: 100, toolUses: 0 })).toMatchObject({ ok: true });
  expect(charge(l, { agentId: 'r.a', turn: 3, model: 'm', usage: usage(500, 50), toolUses: 0, compaction: 1 })).toBe(true);
  // A retried charge of the same compaction is a repeat; the turn's own call still charges, once.
  expect(charge(l, { agentId: 'r.a', turn: 3, model: 'm', usage: usage(500, 50), toolUses: 0, compaction: 1 })).toBe(false);
  expect(charge(l, { agentId: 'r.a', turn: 3, model: 'm', usage: usage(100, 10), toolUses: 0 })).toBe(true);
  expect(charge(l, { agentId: 'r.a', turn: 9, model: 'm', usage: usage(400, 40), toolUses: 0, compaction: 2 })).toBe(true);
  const node = l.nodes['r.a']!;
  expect(node).toMatchObject({ turns: 1, lastTurn: 3, compactions: 2, usage: usage(1000, 100) });
  expect(node.charged).toBe(tokensCharged(usage(1000, 100)));
  expect(node.reserved).toBeUndefined();
  expect(ledgerTotals(l).usage).toEqual(usage(1000, 100));
});
