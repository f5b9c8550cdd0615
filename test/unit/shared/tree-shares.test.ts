/**
 * Budget shares on plain data (src/shared/tree/tree-shares.ts): a share is budget nobody else is
 * lent, so whatever members spend of theirs the tree stays inside its budget; asks are granted,
 * queued or refused; returns serve waiters first come first served; recalls go to the biggest
 * holders under the budget that binds; a budget smaller than one call's bound is split between
 * several agents; and every message's amounts are deltas, so the sums hold in any order.
 */
import { ZERO_USAGE, type Usage } from '../../../src/shared/messages-api/anthropic';
import { newLedger, type TreeLedger } from '../../../src/shared/tree/tree-ledger';
import { admit, leftFor, ledgerTotals } from '../../../src/shared/tree/tree-ledger-rules';
import {
  addCall,
  admissionShare,
  endedShare,
  holding,
  NO_SPEND,
  SHARE_MIN_OUTPUT,
  SHARE_TARGET_CALLS,
  shareMessageSchema,
  startLending,
  takeShareMessage,
  withdrawShare,
  type ShareEffect,
  type ShareMessage,
  type Spend,
} from '../../../src/shared/tree/tree-shares';

const usage = (inputTokens: number, outputTokens: number): Usage => ({ ...ZERO_USAGE, inputTokens, outputTokens });

function tree(budget: number): TreeLedger {
  const l = newLedger({ agentId: 'r', model: 'claude-sonnet-4-5', budget }, { maxTreeRunning: 100, maxTreeSpawns: 100 });
  startLending(l);
  return l;
}

/** Admits `id` under `parent` with a grant of at most `want`, and lends its admission share (calls of `callTokens`: by default more than any budget here). */
function join(l: TreeLedger, id: string, want: number, parent = 'r', callTokens = 1_000_000_000): number {
  expect(admit(l, { agentId: id, parentId: parent, model: 'claude-haiku-4-5', kind: 'spawn', want })).toMatchObject({ ok: true });
  return admissionShare(l, id, callTokens);
}

const spent = (charged: number): Spend => addCall(NO_SPEND, { model: 'claude-haiku-4-5', usage: usage(charged - 10, 10), charged, kind: 'turn', toolUses: 0 });
const ask = (agentId: string, id: string, need: number, want: number, returned = 0, spend: Spend = NO_SPEND): ShareMessage => ({ agentId, kind: 'ask', id, need, want, returned, spend });
const give = (agentId: string, returned: number, spend: Spend = NO_SPEND, kind: 'return' | 'end' = 'return'): ShareMessage => ({ agentId, kind, returned, spend });

const grants = (effects: ShareEffect[]) => effects.filter((e) => e.answer.kind === 'share' && 'tokens' in e.answer).map((e) => [e.to, (e.answer as { tokens: number }).tokens]);
const recalls = (effects: ShareEffect[]) => effects.filter((e) => e.answer.kind === 'recall').map((e) => e.to);

test('a plentiful tree lends each admitted agent a few calls of the size its parent expects, within its grant', () => {
  const l = tree(1_000_000);
  expect(join(l, 'r.a', 50_000, 'r', 10_000)).toBe(SHARE_TARGET_CALLS * 10_000);
  expect(join(l, 'r.b', 50_000, 'r', 20_000)).toBe(50_000);
  // What is lent is gone for everyone else, though nothing was spent yet.
  expect(leftFor(l, 'r')).toBe(1_000_000 - SHARE_TARGET_CALLS * 10_000 - 50_000);
  expect(ledgerTotals(l).charged).toBe(0);
  // Without an expected size nothing is lent: the agent asks when it calls.
  expect(join(l, 'r.c', 50_000, 'r', 0)).toBe(0);
});

test('spend reported with a return enters the ledger once per message, priced by model, and the share comes back', () => {
  const l = tree(100_000);
  join(l, 'r.a', 40_000);
  const spend = addCall(spent(1200), { model: 'claude-haiku-4-5', usage: usage(800, 50), charged: 850, kind: 'turn', toolUses: 2 });
  takeShareMessage(l, give('r.a', 40_000 - 2050, spend, 'end'));
  const a = l.nodes['r.a']!;
  expect(a).toMatchObject({ charged: 2050, turns: 2, toolUses: 2, lent: 2050, usage: { inputTokens: 1990, outputTokens: 60 } });
  expect(a.costUsd).toBeGreaterThan(0);
  expect(holding(a)).toBe(0);
  expect(leftFor(l, 'r')).toBe(100_000 - 2050);
});

test('an ask the tree cannot pay now waits, the biggest holder is recalled, and its return serves the waiter at once', () => {
  const l = tree(20_000);
  // An even split of what is left between the agents holding nothing (the root, which has not asked yet, among them).
  expect(join(l, 'r.a', 20_000)).toBe(10_000);
  expect(join(l, 'r.b', 20_000)).toBe(5000);
  // b spent most of its share and asks for more: 5,500 is free, a holds 10,000 unspent.
  const first = takeShareMessage(l, ask('r.b', 'b-1', 6000, 8000, 500, spent(4500)));
  expect(grants(first)).toEqual([]);
  expect(recalls(first)).toEqual(['r.a']);
  expect(l.shares!.waiters).toEqual([{ agentId: 'r.b', id: 'b-1', need: 6000, want: 8000 }]);
  expect(l.nodes['r.a']!.recalled).toBe(true);
  // a answers the recall with what it holds; b is granted in the same step: its need and room
  // for a reply, since 14,500 split between the three agents holding nothing is less than its 8,000.
  const back = takeShareMessage(l, give('r.a', 9000, spent(1000)));
  expect(grants(back)).toEqual([['r.b', 6000 + SHARE_MIN_OUTPUT]]);
  expect(l.shares!.waiters).toEqual([]);
  expect(l.nodes['r.a']!.recalled).toBeUndefined();
  expect(ledgerTotals(l).charged).toBe(5500);
  expect(leftFor(l, 'r')).toBe(20_000 - 1000 - 4500 - 6000 - SHARE_MIN_OUTPUT);
});

test('an ask that even every share coming back could not pay is refused with what is left', () => {
  const l = tree(10_000);
  join(l, 'r.a', 10_000);
  const out = takeShareMessage(l, ask('r.a', 'a-1', 4000, 4000, 0, spent(8000)));
  expect(out).toEqual([{ to: 'r.a', answer: { kind: 'share', id: 'a-1', refused: expect.stringContaining('2000 tokens left') as string } }]);
});

test('a budget smaller than one call\'s bound is split: several agents go on at once with smaller replies', () => {
  const l = tree(6000);
  join(l, 'r.a', 6000);
  join(l, 'r.b', 6000);
  join(l, 'r.c', 6000);
  // Each gave back what it held and asks for a call of need 1,001 and bound 9,192 (max_tokens 8,192).
  const effects = [...takeShareMessage(l, ask('r.a', 'a', 1001, 9192, holding(l.nodes['r.a']!))), ...takeShareMessage(l, ask('r.b', 'b', 1001, 9192, holding(l.nodes['r.b']!))), ...takeShareMessage(l, ask('r.c', 'c', 1001, 9192, holding(l.nodes['r.c']!)))];
  const granted = grants(effects);
  expect(granted.length).toBeGreaterThanOrEqual(2);
  for (const [, tokens] of granted) expect(tokens).toBeGreaterThanOrEqual(1001);
  expect(granted.reduce((n, [, t]) => n + (t as number), 0)).toBeLessThanOrEqual(6000);
  expect(granted[0]![1]).toBe(1001 + SHARE_MIN_OUTPUT);
});

test('waiters are served first come first served, and a later ask waits behind them', () => {
  const l = tree(20_000);
  expect([join(l, 'r.a', 20_000), join(l, 'r.b', 20_000), join(l, 'r.c', 20_000)]).toEqual([10_000, 5000, 2500]);
  // a and b spent all they held and ask for 5,000 each: 2,500 is free.
  takeShareMessage(l, ask('r.a', 'a', 5000, 5000, 0, spent(10_000)));
  takeShareMessage(l, ask('r.b', 'b', 5000, 5000, 0, spent(5000)));
  expect(l.shares!.waiters.map((w) => w.agentId)).toEqual(['r.a', 'r.b']);
  // c ends and gives back 2,500: a is served first; b waits on.
  expect(grants(takeShareMessage(l, give('r.c', 2500, NO_SPEND, 'end')))).toEqual([['r.a', 5000]]);
  expect(l.shares!.waiters.map((w) => w.agentId)).toEqual(['r.b']);
  // An ask that would fit now still queues behind b.
  expect(grants(takeShareMessage(l, ask('r.c', 'c2', 10, 10)))).toEqual([]);
  expect(l.shares!.waiters.map((w) => w.agentId)).toEqual(['r.b', 'r.c']);
});

test('messages are deltas: the same returns and spends in any order give the same ledger', () => {
  const run = (order: number[]) => {
    const l = tree(100_000);
    join(l, 'r.a', 30_000);
    const msgs = [give('r.a', 1000, spent(500)), give('r.a', 2000, spent(700)), give('r.a', 0, spent(300), 'end')];
    for (const i of order) takeShareMessage(l, msgs[i]!);
    const a = l.nodes['r.a']!;
    return { charged: a.charged, lent: a.lent, usage: a.usage, turns: a.turns };
  };
  expect(run([0, 1, 2])).toEqual(run([2, 0, 1]));
  expect(run([1, 2, 0])).toEqual({ charged: 1500, lent: 27_000, usage: { ...ZERO_USAGE, inputTokens: 1470, outputTokens: 30 }, turns: 3 });
});

test('a withdrawn admission gives its share back; an ended agent waits for nothing', () => {
  const l = tree(50_000);
  expect(join(l, 'r.a', 50_000)).toBe(25_000);
  expect(leftFor(l, 'r')).toBe(25_000);
  withdrawShare(l, 'r.a');
  expect(l.nodes['r.a']).toBeUndefined();
  expect(leftFor(l, 'r')).toBe(50_000);
  join(l, 'r.b', 50_000);
  join(l, 'r.c', 50_000);
  takeShareMessage(l, ask('r.c', 'c', 40_000, 40_000, holding(l.nodes['r.c']!)));
  expect(l.shares!.waiters).toHaveLength(1);
  endedShare(l, 'r.c');
  expect(l.shares!.waiters).toEqual([]);
});

test("a child's share stays inside its parent's grant: recalls go to holders under the budget that binds", () => {
  const l = tree(1_000_000);
  join(l, 'r.m', 10_000);
  // m gives its own share back (it waits for its children); its children share its grant.
  takeShareMessage(l, give('r.m', holding(l.nodes['r.m']!)));
  const a = join(l, 'r.m.a', 10_000, 'r.m');
  expect(a).toBe(3333);
  join(l, 'r.x', 50_000);
  const b = join(l, 'r.m.b', 10_000, 'r.m');
  expect(a + b).toBeLessThanOrEqual(10_000);
  const out = takeShareMessage(l, ask('r.m.b', 'b', 8000, 8000, b));
  // x holds more, but only a holds budget of m's.
  expect(recalls(out)).toEqual(['r.m.a']);
});

test('the message schema refuses negative amounts and asks without their figures', () => {
  expect(shareMessageSchema.safeParse(give('r.a', -1)).success).toBe(false);
  expect(shareMessageSchema.safeParse({ agentId: 'r.a', kind: 'ask', returned: 0, spend: NO_SPEND }).success).toBe(false);
  expect(shareMessageSchema.safeParse(ask('r.a', 'a', 10, 5)).success).toBe(false);
  expect(shareMessageSchema.safeParse(ask('r.a', 'a', 5, 10)).success).toBe(true);
});

test('a return that overtakes the ask sent after it leaves the ask waiting', () => {
  const l = tree(20_000);
  join(l, 'r.a', 20_000);
  join(l, 'r.b', 20_000);
  takeShareMessage(l, ask('r.b', 'b', 12_000, 12_000, 0, spent(5000)));
  expect(l.shares!.waiters.map((w) => w.id)).toEqual(['b']);
  takeShareMessage(l, give('r.b', 0));
  expect(l.shares!.waiters.map((w) => w.id)).toEqual(['b']);
  // Its end does drop it.
  takeShareMessage(l, give('r.b', 0, NO_SPEND, 'end'));
  expect(l.shares!.waiters).toEqual([]);
});
