/**
 * The tree ledger's rules (see tree-ledger.ts for the ledger itself): reading what an agent's
 * subtree spent and may still spend, and the writes the root's workflow makes — admit a
 * sub-agent, reserve a call's most, charge its usage, end or withdraw an agent, retry the
 * root. Each is idempotent (activity retries and replays repeat them) and a pure function of
 * plain data.
 */
import { addUsage, ZERO_USAGE, type Usage } from '../messages-api/anthropic';
import { tokensCharged } from './budget';
import { estimateCostUsd, type Price } from '../providers/pricing';
import { freshNode, teamClash, type LedgerNode, type TreeLedger } from './tree-ledger';
import type { AdmitRequest, AdmitResult, ChargeRequest, ReserveRequest, ReserveResult } from './tree-ledger-requests';

// ---- reading ----

/** The agent and its ancestors, nearest first (stops at a missing link or a cycle). */
export function chain(ledger: TreeLedger, agentId: string): LedgerNode[] {
  const out: LedgerNode[] = [];
  const seen = new Set<string>();
  let id: string | undefined = agentId;
  while (id && !seen.has(id)) {
    seen.add(id);
    const node: LedgerNode | undefined = ledger.nodes[id];
    if (!node) break;
    out.push(node);
    id = node.parentId;
  }
  return out;
}

/**
 * What a node holds against the budgets above it: its charged tokens, and with reservations
 * also what a call in flight reserved and what it was lent as a share (the larger of lent and
 * charged: a share's spent part is in both).
 */
function committed(node: LedgerNode, withReservations: boolean): number {
  if (!withReservations) return node.charged;
  return Math.max(node.charged, node.lent ?? 0) + (node.reserved?.tokens ?? 0);
}

/** Charged (and reserved or lent) tokens of every agent's subtree (one pass per node up its chain). */
export function subtreeSpend(ledger: TreeLedger, withReservations = true): Map<string, number> {
  const spend = new Map<string, number>();
  for (const node of Object.values(ledger.nodes)) {
    const own = committed(node, withReservations);
    if (own === 0) continue;
    for (const a of chain(ledger, node.agentId)) spend.set(a.agentId, (spend.get(a.agentId) ?? 0) + own);
  }
  return spend;
}

/** What `agentId` may still spend: the least any of it and its ancestors has left (never negative). */
export function leftFor(ledger: TreeLedger, agentId: string, withReservations = true): number {
  const spend = subtreeSpend(ledger, withReservations);
  const nodes = chain(ledger, agentId);
  if (nodes.length === 0) return 0;
  return Math.max(0, Math.min(...nodes.map((n) => n.budget - (spend.get(n.agentId) ?? 0))));
}

export function runningCount(ledger: TreeLedger): number {
  return Object.values(ledger.nodes).filter((n) => n.state === 'running').length;
}

export interface LedgerTotals {
  usage: Usage;
  /** Tokens charged against budgets (cache reads weighted, see tokensCharged). */
  charged: number;
  costUsd: number;
  turns: number;
  toolUses: number;
  agents: number;
}

export function ledgerTotals(ledger: TreeLedger): LedgerTotals {
  let t: LedgerTotals = { usage: ZERO_USAGE, charged: 0, costUsd: 0, turns: 0, toolUses: 0, agents: 0 };
  for (const n of Object.values(ledger.nodes)) {
    t = { usage: addUsage(t.usage, n.usage), charged: t.charged + n.charged, costUsd: t.costUsd + n.costUsd, turns: t.turns + n.turns, toolUses: t.toolUses + n.toolUses, agents: t.agents + 1 };
  }
  return { ...t, costUsd: Math.round(t.costUsd * 1_000_000) / 1_000_000 };
}

// ---- writing (the root's workflow is the only caller) ----

/**
 * Admits a sub-agent, or says why not. A spawn counts against the running and total-spawn
 * limits; a resume against the running limit only, and keeps the budget it had. Asking again
 * for an agent already running returns its grant (an activity retry).
 */
export function admit(ledger: TreeLedger, req: AdmitRequest): AdmitResult {
  const existing = ledger.nodes[req.agentId];
  if (existing?.state === 'running') return { ok: true, budget: existing.budget };
  if (!ledger.nodes[req.parentId]) return { ok: false, reason: `Agent ${req.parentId} is not part of tree ${ledger.rootId}.` };
  const running = runningCount(ledger);
  if (running >= ledger.limits.maxTreeRunning) {
    return { ok: false, reason: `This agent tree already runs ${running} agents, its limit: wait for sub-agents to finish before starting more.` };
  }
  if (req.kind === 'resume') {
    if (!existing) return { ok: false, reason: `Agent ${req.agentId} never ran in this tree: it cannot be resumed.` };
    existing.state = 'running';
    existing.runs += 1;
    return { ok: true, budget: existing.budget };
  }
  if (existing || ledger.withdrawn?.includes(req.agentId)) return { ok: false, reason: `Agent id ${req.agentId} was already used in this tree.` };
  const clash = req.team ? teamClash(ledger, req.parentId, req.team, req.name) : undefined;
  if (clash) return { ok: false, reason: clash };
  if (ledger.spawned >= ledger.limits.maxTreeSpawns) {
    return { ok: false, reason: `This agent tree has started ${ledger.spawned} sub-agents, the most it may start: finish the work with the agents you have.` };
  }
  // A grant caps what the child may spend; it reserves nothing (each call reserves), so
  // tokens held by calls in flight — an upper bound, mostly released at their charge — do not count here.
  const budget = Math.min(req.want, leftFor(ledger, req.parentId, false));
  if (budget < 1) return { ok: false, reason: 'No token budget is left for another sub-agent in this tree: finish the work yourself with what you have.' };
  ledger.spawned += 1;
  ledger.nodes[req.agentId] = { ...freshNode(req.agentId, req.parentId, req.model, budget), ...(req.name ? { name: req.name } : {}), ...(req.team ? { team: req.team } : {}) };
  return { ok: true, budget };
}

/** Reserves the most a model call may charge, under every ancestor's budget. */
export function reserve(ledger: TreeLedger, req: ReserveRequest): ReserveResult {
  const node = ledger.nodes[req.agentId];
  if (!node) return { ok: false, left: 0, reason: `Agent ${req.agentId} is not part of tree ${ledger.rootId}.`, wait: false };
  node.toolUses = Math.max(node.toolUses, req.toolUses);
  // A retried call: the same answer (a call already charged is being handed back from the response store).
  if (req.turn <= node.lastTurn) return { ok: true, tokens: req.want };
  if (node.reserved?.turn === req.turn) return { ok: true, tokens: node.reserved.tokens };
  // A reservation of an earlier turn that was never charged (its call failed for good) lapses.
  delete node.reserved;
  const left = leftFor(ledger, req.agentId);
  if (left < req.need) {
    const wait = leftFor(ledger, req.agentId, false) >= req.need;
    return { ok: false, left, reason: `the tree's token budget has ${left} tokens left, and this call needs at least ${req.need}`, wait };
  }
  const tokens = Math.min(req.want, left);
  node.reserved = { turn: req.turn, tokens };
  return { ok: true, tokens };
}

/** A model's configured price on a provider (absent provider: the tree's own), or undefined for the built-in table. */
export type PriceLookup = (provider: string | undefined, model: string) => Price | undefined;

/**
 * Charges a finished call's usage (once per agent and turn) and releases its reservation, at
 * the price `prices` gives the serving provider and model.
 */
export function charge(ledger: TreeLedger, req: ChargeRequest, prices?: PriceLookup): boolean {
  const node = ledger.nodes[req.agentId];
  const price = prices?.(req.provider, req.model);
  if (req.keepAlive !== undefined) return node ? chargeNumbered(node, req, 'keepAlives', req.keepAlive, price) : false;
  if (req.compaction !== undefined) return node ? chargeNumbered(node, req, 'compactions', req.compaction, price) : false;
  if (!node || req.turn <= node.lastTurn) return false;
  node.usage = addUsage(node.usage, req.usage);
  node.charged += tokensCharged(req.usage);
  node.costUsd = Math.round((node.costUsd + estimateCostUsd(req.model, req.usage, price)) * 1_000_000) / 1_000_000;
  node.turns += 1;
  node.lastTurn = req.turn;
  node.toolUses = Math.max(node.toolUses, req.toolUses);
  if (req.model) node.model = req.model;
  if (node.reserved && node.reserved.turn <= req.turn) delete node.reserved;
  return true;
}

/**
 * A call that is not a turn — a keep-alive or a compaction — charged its usage and cost once
 * per number (a retried charge is a repeat); no turn, no reservation.
 */
function chargeNumbered(node: LedgerNode, req: ChargeRequest, counter: 'keepAlives' | 'compactions', n: number, price: Price | undefined): boolean {
  if (n <= (node[counter] ?? 0)) return false;
  node.usage = addUsage(node.usage, req.usage);
  node.charged += tokensCharged(req.usage);
  node.costUsd = Math.round((node.costUsd + estimateCostUsd(req.model, req.usage, price)) * 1_000_000) / 1_000_000;
  node[counter] = n;
  return true;
}

/** A sub-agent ended: it no longer counts as running, and nothing it reserved stays reserved. */
export function ended(ledger: TreeLedger, agentId: string): void {
  const node = ledger.nodes[agentId];
  if (!node || agentId === ledger.rootId) return;
  node.state = 'ended';
  delete node.reserved;
}

/**
 * An admitted agent its parent never started (the start failed, the admission's answer was
 * lost, or the parent was stopped in between). A first run that never reserved leaves no
 * trace, so every agent in the ledger is one that ran; a resume that did not happen ends.
 */
export function withdraw(ledger: TreeLedger, agentId: string): void {
  const node = ledger.nodes[agentId];
  if (agentId === ledger.rootId) return;
  if (!node || (node.runs === 1 && node.state === 'running')) remember(ledger, agentId);
  if (!node) return;
  if (node.runs === 1 && node.lastTurn === 0 && node.turns === 0 && node.charged === 0 && !node.reserved) {
    delete ledger.nodes[agentId];
    ledger.spawned = Math.max(0, ledger.spawned - 1);
    return;
  }
  ended(ledger, agentId);
}

/**
 * A tree's root retried from turn `fromTurn` (src/shared/prefix/time-travel.ts): what it spent stays
 * charged, its next turns (numbered from `fromTurn` + 1 again) are charged as new ones, and it
 * may spend `budget` more tokens from here (its grant becomes what its subtree has charged plus
 * that). Any reservation of the run that ended lapses.
 */
export function retryRoot(ledger: TreeLedger, fromTurn: number, budget: number): void {
  const root = ledger.nodes[ledger.rootId];
  if (!root) return;
  const spent = subtreeSpend(ledger, false).get(root.agentId) ?? 0;
  root.lastTurn = Math.min(root.lastTurn, fromTurn);
  root.budget = spent + budget;
  root.state = 'running';
  root.runs += 1;
  delete root.reserved;
}

/** Withdrawn ids kept to refuse late admissions; child ids are never reused, so older ones only cost memory. */
export const WITHDRAWN_KEPT = 1000;

function remember(ledger: TreeLedger, agentId: string): void {
  const ids = (ledger.withdrawn ??= []);
  if (ids.includes(agentId)) return;
  ids.push(agentId);
  if (ids.length > WITHDRAWN_KEPT) ids.splice(0, ids.length - WITHDRAWN_KEPT);
}
