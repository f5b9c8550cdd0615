/**
 * Budget shares: who owns which part of a tree's token budget, in a tree whose members charge
 * locally instead of reserving at the root before every model call. The root's ledger
 * (src/shared/tree/tree-ledger.ts) is the one place that says it: each node's `lent` is what the
 * root handed that agent and has not had back, and the budget checks count the larger of that
 * and what the agent reported spent. A share is budget the root lends to nobody else, so the
 * tree never spends past its budget while its members spend without asking.
 *
 * - An agent gets a share with its admission, spends it call by call (each call's upper bound
 *   must fit what it holds: src/activities/model/call-model.ts), and reports what it spent —
 *   usage by model and provider, charged tokens, turns — when it talks to the root next.
 * - When what it holds cannot pay for its next call it asks for more, giving back what it
 *   holds (no agent holds budget while it waits, so waiting never deadlocks). The root grants
 *   at once when it can; otherwise the ask waits, first come first served, and the root asks
 *   the biggest holders to give theirs back (`recall`). A member answers a recall as soon as
 *   no call of its own is in flight. Returns serve the waiters in the same step, and the root
 *   tells them by signal: nobody polls.
 * - It gives back what it still holds, with its last report, when it ends.
 *
 * How much: the call's own bound when the tree has it, and up to SHARE_TARGET_CALLS such calls
 * while that stays within an even split of what is left between the agents that hold nothing;
 * a budget smaller than one call's bound is split into calls with room for SHARE_MIN_OUTPUT
 * output tokens, so several agents go on at once instead of one after the other.
 *
 * Every message is a signal (exactly once in the receiver's history), and every amount in it a
 * delta: the root's sums are right in any order of arrival. Pure functions of plain data: the
 * root's workflow owns the only copy of the ledger; src/workflows/fork/tree-shares.ts sends
 * and receives the messages.
 */
import { z } from 'zod';
import { addUsage, ZERO_USAGE, type Usage } from '../messages-api/anthropic';
import { estimateCostUsd } from '../providers/pricing';
import { schemaOnce } from '../base/schema-once';
import { treeTokenSchema, usageSchema, type LedgerNode, type TreeLedger } from './tree-ledger';
import { chain, ended, subtreeSpend, withdraw, type PriceLookup } from './tree-ledger-rules';
import type { ShareWaiter } from './tree-share-state';

/** The failure type of a call whose bound does not fit the share its agent holds (details: `{ need, want }`): the agent asks for more. */
export const SHARE_SHORT_FAILURE = 'TreeShareShort';

/** A share aims at this many calls of the asker's current size. */
export const SHARE_TARGET_CALLS = 4;
/** Under a scarce budget, a share still pays for this much output (or the call's whole bound, if less). */
export const SHARE_MIN_OUTPUT = 1024;

const count = schemaOnce('tree/tree-shares#count', () => z.number().int().min(0));

/** Spend since the agent's previous message to the root (every figure a delta, but `toolUses`). */
export const spendSchema = schemaOnce('tree/tree-shares#spendSchema', () => z.strictObject({
  /** Usage by the model (and provider, when not the tree's own) that served it: the root prices each. */
  priced: z.array(z.strictObject({ provider: z.string().min(1).max(64).optional(), model: z.string().min(1).max(200), usage: usageSchema })).max(64),
  /** The calls' charged tokens (src/shared/tree/budget.ts `tokensCharged`, summed call by call). */
  charged: count,
  turns: count,
  keepAlives: count,
  compactions: count,
  /** The agent's tool calls so far (not a delta). */
  toolUses: count,
  /** The newest turn charged in this spend (a turn number, not a delta). */
  lastTurn: count.optional(),
}));
export type Spend = z.output<typeof spendSchema>;

export const NO_SPEND: Spend = { priced: [], charged: 0, turns: 0, keepAlives: 0, compactions: 0, toolUses: 0 };

/** One more call's usage added to a spend (`provider` absent: the tree's own). */
export function addCall(spend: Spend, call: { provider?: string; model: string; usage: Usage; charged: number; kind: 'turn' | 'keepAlive' | 'compaction'; toolUses: number; turn?: number }): Spend {
  const priced = [...spend.priced];
  const i = priced.findIndex((p) => p.model === call.model && p.provider === call.provider);
  if (i >= 0) priced[i] = { ...priced[i]!, usage: addUsage(priced[i]!.usage, call.usage) };
  else priced.push({ ...(call.provider ? { provider: call.provider } : {}), model: call.model, usage: call.usage });
  return {
    priced,
    charged: spend.charged + call.charged,
    turns: spend.turns + (call.kind === 'turn' ? 1 : 0),
    keepAlives: spend.keepAlives + (call.kind === 'keepAlive' ? 1 : 0),
    compactions: spend.compactions + (call.kind === 'compaction' ? 1 : 0),
    toolUses: Math.max(spend.toolUses, call.toolUses),
    ...(call.kind === 'turn' && call.turn !== undefined ? { lastTurn: Math.max(spend.lastTurn ?? 0, call.turn) } : spend.lastTurn !== undefined ? { lastTurn: spend.lastTurn } : {}),
  };
}

/** A member's message to its root (signal `treeShare`). */
export const shareMessageSchema = schemaOnce('tree/tree-shares#shareMessageSchema', () => z.strictObject({
  agentId: z.string().min(1).max(1000),
  /** `ask`: for a share (answered by id); `return`: what it holds, unasked or recalled; `end`: its run ends. */
  kind: z.enum(['ask', 'return', 'end']),
  id: z.string().min(1).max(200).optional(),
  /** An ask: the least its call needs, and the most it could use. */
  need: z.number().int().min(1).optional(),
  want: z.number().int().min(1).optional(),
  /** Tokens it gives back with this message. */
  returned: count,
  spend: spendSchema,
  token: treeTokenSchema.optional(),
}).refine((m) => m.kind !== 'ask' || (m.id !== undefined && m.need !== undefined && m.want !== undefined && m.want >= m.need), { message: 'an ask needs an id, and need ≤ want' }));
export type ShareMessage = z.output<typeof shareMessageSchema>;

/** What the root tells a member about its share (part of the `treeAnswer` signal). */
export type ShareAnswer = { kind: 'share'; id: string; tokens: number } | { kind: 'share'; id: string; refused: string } | { kind: 'recall' };

/** A share answer for one agent (the workflow sends it, or applies it at the root itself). */
export interface ShareEffect {
  to: string;
  answer: ShareAnswer;
}

/** Whether this ledger's tree lends shares. */
export function lendsShares(ledger: TreeLedger): boolean {
  return ledger.shares !== undefined;
}

/** A ledger starts lending shares (a new tree's root, under its patch). */
export function startLending(ledger: TreeLedger): void {
  ledger.shares ??= { v: 1, waiters: [] };
}

/** What the root believes an agent holds unspent: lent, less what it reported spent. */
export function holding(node: LedgerNode): number {
  return Math.max(0, (node.lent ?? 0) - node.charged);
}

/** Budget left for `agentId` under every budget above it, given the subtree spend map. */
function leftIn(ledger: TreeLedger, spend: Map<string, number>, agentId: string): number {
  const nodes = chain(ledger, agentId);
  if (nodes.length === 0) return 0;
  return Math.max(0, Math.min(...nodes.map((n) => n.budget - (spend.get(n.agentId) ?? 0))));
}

/** The node of `agentId`'s chain with the least left: the budget a recall must free. */
function bindingNode(ledger: TreeLedger, spend: Map<string, number>, agentId: string): LedgerNode | undefined {
  let best: LedgerNode | undefined;
  let least = Infinity;
  for (const n of chain(ledger, agentId)) {
    const left = n.budget - (spend.get(n.agentId) ?? 0);
    if (left < least) [best, least] = [n, left];
  }
  return best;
}

/** Running agents that hold nothing (the ones an even split is between). */
function unserved(ledger: TreeLedger): number {
  let n = 0;
  for (const node of Object.values(ledger.nodes)) if (node.state === 'running' && holding(node) === 0) n += 1;
  return Math.max(1, n);
}

type Decision = { tokens: number } | { wait: true } | { refused: string };

/**
 * What `agentId` may be lent now (`left`: under its own grant and every budget above it), and
 * its even part of the budget it shares with others (`fair`: what is left above it, split
 * between the agents that hold nothing).
 */
function room(ledger: TreeLedger, agentId: string): { left: number; fair: number } {
  const spend = subtreeSpend(ledger);
  const left = leftIn(ledger, spend, agentId);
  const parent = ledger.nodes[agentId]?.parentId;
  const pool = parent ? leftIn(ledger, spend, parent) : left;
  return { left, fair: Math.floor(pool / unserved(ledger)) };
}

/** How much to lend an ask of `need`..`want` now, whether it waits, or why it never will be paid. */
function decide(ledger: TreeLedger, agentId: string, need: number, want: number): Decision {
  const { left, fair } = room(ledger, agentId);
  if (left >= need) {
    // A whole call when its even part of the budget holds one; under less, a slice with room
    // for a reply, so that one call's bound never takes what several agents could go on with.
    const least = Math.min(want, Math.max(need + SHARE_MIN_OUTPUT, fair));
    return { tokens: Math.min(left, Math.max(least, Math.min(want * SHARE_TARGET_CALLS, fair))) };
  }
  // Shares out now come back, less what their holders spend: only what was charged is gone for good.
  const possible = leftIn(ledger, subtreeSpend(ledger, false), agentId);
  if (possible >= need) return { wait: true };
  return { refused: `the tree's token budget has ${possible} tokens left, and this call needs at least ${need}` };
}

/** Adds a member's reported spend to its node, each model's usage at the price `prices` gives it. */
export function applySpend(node: LedgerNode, spend: Spend, prices?: PriceLookup): void {
  let usage = node.usage;
  let cost = node.costUsd;
  for (const p of spend.priced) {
    usage = addUsage(usage, p.usage);
    cost += estimateCostUsd(p.model, p.usage, prices?.(p.provider, p.model));
    node.model = p.model;
  }
  node.usage = usage;
  node.costUsd = Math.round(cost * 1_000_000) / 1_000_000;
  node.charged += spend.charged;
  node.turns += spend.turns;
  node.toolUses = Math.max(node.toolUses, spend.toolUses);
  if (spend.lastTurn !== undefined) node.lastTurn = Math.max(node.lastTurn, spend.lastTurn);
  if (spend.keepAlives > 0) node.keepAlives = (node.keepAlives ?? 0) + spend.keepAlives;
  if (spend.compactions > 0) node.compactions = (node.compactions ?? 0) + spend.compactions;
}

function waiters(ledger: TreeLedger): ShareWaiter[] {
  return (ledger.shares ??= { v: 1, waiters: [] }).waiters;
}

function dropWaiter(ledger: TreeLedger, agentId: string): void {
  const list = waiters(ledger);
  for (let i = list.length - 1; i >= 0; i--) if (list[i]!.agentId === agentId) list.splice(i, 1);
}

function lend(node: LedgerNode, tokens: number): void {
  node.lent = (node.lent ?? 0) + tokens;
}

/**
 * Takes a member's message: what it gives back and what it spent, then its ask (granted,
 * refused, or queued). Returns every answer to send, to it and to waiters its return served.
 */
export function takeShareMessage(ledger: TreeLedger, msg: ShareMessage, prices?: PriceLookup): ShareEffect[] {
  const node = ledger.nodes[msg.agentId];
  if (!node) {
    return msg.kind === 'ask' ? [{ to: msg.agentId, answer: { kind: 'share', id: msg.id!, refused: `Agent ${msg.agentId} is not part of tree ${ledger.rootId}.` } }] : [];
  }
  node.lent = Math.max(0, (node.lent ?? 0) - msg.returned);
  applySpend(node, msg.spend, prices);
  delete node.recalled;
  // A new ask replaces an older one, and an ended run waits for nothing; a return (which may
  // overtake the ask sent after it) leaves a waiting ask alone.
  if (msg.kind !== 'return') dropWaiter(ledger, msg.agentId);
  const out: ShareEffect[] = [];
  if (msg.kind === 'ask') {
    // Behind others already waiting: first come, first served.
    const d: Decision = waiters(ledger).length > 0 ? { wait: true } : decide(ledger, msg.agentId, msg.need!, msg.want!);
    if ('tokens' in d) {
      lend(node, d.tokens);
      out.push({ to: msg.agentId, answer: { kind: 'share', id: msg.id!, tokens: d.tokens } });
    } else if ('refused' in d) out.push({ to: msg.agentId, answer: { kind: 'share', id: msg.id!, refused: d.refused } });
    else waiters(ledger).push({ agentId: msg.agentId, id: msg.id!, need: msg.need!, want: msg.want! });
  }
  return [...out, ...serveWaiters(ledger)];
}

/**
 * Serves waiting asks in order while they can be paid, refuses those that never will be, and
 * asks holders to give back enough for the first that must still wait.
 */
export function serveWaiters(ledger: TreeLedger): ShareEffect[] {
  const out: ShareEffect[] = [];
  const list = waiters(ledger);
  while (list.length > 0) {
    const w = list[0]!;
    const node = ledger.nodes[w.agentId];
    const d: Decision = node ? decide(ledger, w.agentId, w.need, w.want) : { refused: `Agent ${w.agentId} is not part of tree ${ledger.rootId}.` };
    if ('wait' in d) return [...out, ...recallFor(ledger, w)];
    list.shift();
    if ('tokens' in d) {
      lend(node!, d.tokens);
      out.push({ to: w.agentId, answer: { kind: 'share', id: w.id, tokens: d.tokens } });
    } else out.push({ to: w.agentId, answer: { kind: 'share', id: w.id, refused: d.refused } });
  }
  return out;
}

/**
 * Recalls shares, biggest first, from running agents under the budget that keeps `w` waiting,
 * until what they hold (with what earlier recalls will bring) covers its shortfall.
 */
function recallFor(ledger: TreeLedger, w: ShareWaiter): ShareEffect[] {
  const spend = subtreeSpend(ledger);
  const binding = bindingNode(ledger, spend, w.agentId);
  if (!binding) return [];
  let short = w.need - leftIn(ledger, spend, w.agentId);
  const under = (n: LedgerNode) => chain(ledger, n.agentId).some((a) => a.agentId === binding.agentId);
  const waiting = new Set(waiters(ledger).map((x) => x.agentId));
  const holders = Object.values(ledger.nodes).filter((n) => n.state === 'running' && !waiting.has(n.agentId) && holding(n) > 0 && under(n));
  for (const n of holders) if (n.recalled) short -= holding(n);
  const out: ShareEffect[] = [];
  const fresh = holders.filter((n) => !n.recalled).sort((a, b) => holding(b) - holding(a) || (a.agentId < b.agentId ? -1 : 1));
  for (const n of fresh) {
    if (short <= 0) break;
    n.recalled = true;
    short -= holding(n);
    out.push({ to: n.agentId, answer: { kind: 'recall' } });
  }
  return out;
}

/**
 * The share lent with an admission (the ledger's `admit` granted it already): SHARE_TARGET_CALLS
 * calls of the size its parent expects (`callTokens`; without it, nothing: it asks when it
 * calls), within an even split of what its budgets leave between the agents holding nothing;
 * nothing while others wait (they come first).
 */
export function admissionShare(ledger: TreeLedger, agentId: string, callTokens: number | undefined): number {
  const node = ledger.nodes[agentId];
  if (!node || !callTokens || waiters(ledger).length > 0) return 0;
  const { left, fair } = room(ledger, agentId);
  // Less than a reply's worth is no use to it: it asks when it calls.
  const tokens = fair < SHARE_MIN_OUTPUT ? 0 : Math.min(left, fair, callTokens * SHARE_TARGET_CALLS);
  lend(node, tokens);
  node.admitShare = tokens;
  return tokens;
}

/** An admitted agent that never started: the share its admission lent comes back with it. */
export function withdrawShare(ledger: TreeLedger, agentId: string): ShareEffect[] {
  const node = ledger.nodes[agentId];
  if (node) node.lent = Math.max(0, (node.lent ?? 0) - (node.admitShare ?? 0));
  if (node) delete node.admitShare;
  dropWaiter(ledger, agentId);
  withdraw(ledger, agentId);
  return serveWaiters(ledger);
}

/** An agent ended (its parent says so): it waits for nothing more; what it holds comes back with its own last report. */
export function endedShare(ledger: TreeLedger, agentId: string): ShareEffect[] {
  dropWaiter(ledger, agentId);
  ended(ledger, agentId);
  if (ledger.nodes[agentId]) delete ledger.nodes[agentId].recalled;
  return serveWaiters(ledger);
}

/** A retried root's earlier run ended with every agent it ran: what it held is free again, nobody waits. */
export function retrySharesOf(ledger: TreeLedger): void {
  const root = ledger.nodes[ledger.rootId];
  if (root) root.lent = root.charged;
  if (ledger.shares) ledger.shares.waiters = [];
  for (const n of Object.values(ledger.nodes)) delete n.recalled;
}

/** The usage a spend adds up to (its priced parts). */
export function spendUsage(spend: Spend): Usage {
  return spend.priced.reduce((u, p) => addUsage(u, p.usage), ZERO_USAGE);
}
