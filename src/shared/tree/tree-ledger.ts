/**
 * The tree ledger: what a whole agent tree has spent and may still spend, kept by its root
 * (the one authority; see SEMANTICS "Limits and budgets" and src/workflows/fork/tree-authority.ts).
 *
 * - Admission: a sub-agent starts only when the root admits it — under the tree's running
 *   and total-spawn limits, counted here and nowhere else (no visibility lag) — and is
 *   granted at most what every one of its ancestors has left.
 * - Spend: before each model call an agent reserves an upper bound of that call's charge
 *   (its input counted in full plus the `max_tokens` it is allowed); after the call the
 *   actual usage is charged and the reservation released. A reservation is granted only
 *   when it fits under every ancestor's budget, so the tree's charged tokens never pass
 *   the root's budget, and each subtree stays inside what its root was granted.
 * - Facts: per-agent usage, turns, tool calls and cost, kept for every agent the tree ever
 *   ran (never trimmed), carried across continue-as-new and a resumed agent's runs.
 *
 * Every operation is idempotent (admission by agent id, reserve and charge by agent and
 * turn), because they arrive by activity retries and replays. Pure functions of plain data:
 * the root's workflow owns the only copy.
 */
import { z } from 'zod';
import { addUsage, ZERO_USAGE, type Usage } from '../messages-api/anthropic';
import { tokensCharged } from './budget';
import { estimateCostUsd, type Price } from '../providers/pricing';
import { schemaOnce } from '../base/schema-once';
import { shareNodeSchema, sharesStateSchema } from './tree-share-state';

export const TREE_LEDGER_VERSION = 1;

/** The failure type of a model call the budget cannot pay for: the agent stops `budget_exhausted`, it does not fail. */
export const BUDGET_EXHAUSTED_FAILURE = 'BudgetExhausted';

const count = schemaOnce('tree/tree-ledger#count', () => z.number().int().min(0));

/** A Usage as carried in workflow state (also the carried state's). */
const usageFields = {
  inputTokens: count,
  outputTokens: count,
  cacheReadInputTokens: count,
  cacheCreationInputTokens: count,
  cacheCreation1hInputTokens: count.optional(),
};

export const usageSchema = schemaOnce('tree/tree-ledger#usageSchema', () => z.object({
  ...usageFields,
  /** The part served by the Message Batches API (half price). */
  batch: z.object(usageFields).optional(),
}) satisfies z.ZodType<Usage>);

const nodeSchema = schemaOnce('tree/tree-ledger#nodeSchema', () => z.object({
  agentId: z.string().min(1),
  parentId: z.string().min(1).optional(),
  model: z.string(),
  /** Tokens this agent and its subtree may charge (its grant). */
  budget: count,
  state: z.enum(['running', 'ended']),
  usage: usageSchema,
  /** `tokensCharged(usage)`, kept so subtree sums need no recomputation. */
  charged: count,
  costUsd: z.number().min(0),
  turns: count,
  toolUses: count,
  /** The newest turn charged (a charge or reservation for it or an older one is a repeat). */
  lastTurn: count,
  /** The reservation of a model call in flight (one at a time: an agent's calls are sequential). */
  reserved: z.object({ turn: count, tokens: count }).optional(),
  /** Runs of this agent (1 + times it was resumed). */
  runs: z.number().int().min(1),
  /** Keep-alive calls charged (cacheWhileWaiting `keep-alive`): the newest one's number; absent before the first. */
  keepAlives: count.optional(),
  /** forkflow compaction calls charged (src/shared/context/): the newest one's number; absent before the first. */
  compactions: count.optional(),
  /** Its name in the tree (the Agent call's `name`), for peer messages by name (src/shared/tree/team-ledger.ts). */
  name: z.string().min(1).max(64).optional(),
  /** A teammate: the team it joined (its lead is its parent). */
  team: z.string().min(1).max(64).optional(),
  /** Peer messages it sent and received, counted when routed (team-ledger.ts); `lastKey`: the newest sent, so a retry counts once. */
  messages: z.object({ sent: count, received: count, lastKey: z.string().optional() }).optional(),
  /** Its budget share, in a tree that lends shares (src/shared/tree/tree-shares.ts). */
  ...shareNodeSchema.shape,
}));
export type LedgerNode = z.output<typeof nodeSchema>;

export const treeLimitsSchema = schemaOnce('tree/tree-ledger#treeLimitsSchema', () => z.object({
  /** Agents of the tree running at once, the root included. */
  maxTreeRunning: z.number().int().min(1),
  /** Sub-agents the tree may start in all (resumes are not new spawns). */
  maxTreeSpawns: z.number().int().min(0),
}));
export type TreeLimits = z.output<typeof treeLimitsSchema>;

/**
 * A tree's capability: a random id the root draws at its start (the SDK's seeded `uuid4`) and
 * passes down in every sub-agent's input (`treeToken`). Child reports and ledger requests carry
 * it; the receiver drops or rejects what does not. Trees started before it existed have none
 * and accept requests without one.
 */
export const treeTokenSchema = schemaOnce('tree/tree-ledger#treeTokenSchema', () => z.string().min(16).max(200));

export const treeLedgerSchema = schemaOnce('tree/tree-ledger#treeLedgerSchema', () => z.object({
  v: z.literal(TREE_LEDGER_VERSION),
  rootId: z.string().min(1),
  /** The tree's capability (absent in ledgers of trees started before it). */
  token: treeTokenSchema.optional(),
  limits: treeLimitsSchema,
  spawned: count,
  /** By agent id (a plain object: it crosses continue-as-new). */
  nodes: z.record(z.string(), nodeSchema),
  /**
   * Ids whose admission was taken back before their agent started (newest last, at most
   * WITHDRAWN_KEPT): an admission that arrives after its withdrawal (a timed-out attempt's
   * update landing late) is refused, so the ledger never lists an agent that never ran.
   */
  withdrawn: z.array(z.string()).optional(),
  /** Present when the tree lends budget shares instead of reserving per call (src/shared/tree/tree-shares.ts). */
  shares: sharesStateSchema.optional(),
}));
export type TreeLedger = z.output<typeof treeLedgerSchema>;

/** A new ledger holding its root; `token`: the tree's capability, when it has one. */
export function newLedger(root: { agentId: string; model: string; budget: number; name?: string }, limits: TreeLimits, token?: string): TreeLedger {
  const node = { ...freshNode(root.agentId, undefined, root.model, root.budget), ...(root.name ? { name: root.name } : {}) };
  return { v: TREE_LEDGER_VERSION, rootId: root.agentId, ...(token ? { token } : {}), limits, spawned: 0, nodes: { [root.agentId]: node } };
}

/** Why a request is refused for its capability, if it is: a ledger with a token takes only requests that carry it. */
export function capabilityIssue(ledger: Pick<TreeLedger, 'token' | 'rootId'>, token: string | undefined): string | undefined {
  if (ledger.token === undefined || token === ledger.token) return undefined;
  return `it does not carry the capability of tree ${ledger.rootId} (only the tree's own agents may send it)`;
}

/** Whether `agentId` ever ran in this tree. */
export function isMember(ledger: TreeLedger, agentId: string): boolean {
  return Object.hasOwn(ledger.nodes, agentId);
}

/** The ledger as results show it: without the tree's capability. */
export function publicLedger(ledger: TreeLedger): TreeLedger {
  const { token: _secret, ...rest } = ledger;
  return rest;
}

function freshNode(agentId: string, parentId: string | undefined, model: string, budget: number): LedgerNode {
  return { agentId, ...(parentId ? { parentId } : {}), model, budget, state: 'running', usage: ZERO_USAGE, charged: 0, costUsd: 0, turns: 0, toolUses: 0, lastTurn: 0, runs: 1 };
}

/**
 * Why a teammate cannot join `team` under `leadId`, if it cannot: a team has one lead, a lead
 * leads one team, and names are unique in a team (the lead's own name included).
 */
export function teamClash(ledger: TreeLedger, leadId: string, team: string, name: string | undefined): string | undefined {
  const nodes = Object.values(ledger.nodes);
  const other = nodes.find((n) => n.team === team && n.parentId !== leadId);
  if (other) return `Team "${team}" is led by ${other.parentId}, not by you: pick another team_name.`;
  const own = nodes.find((n) => n.team !== undefined && n.team !== team && n.parentId === leadId);
  if (own) return `You lead team "${own.team}" already (an agent leads one team): use team_name "${own.team}".`;
  if (!name) return 'A teammate needs a name (unique in its team).';
  const lead = ledger.nodes[leadId];
  if (lead?.name === name) return `"${name}" is your own name in team "${team}": pick another name.`;
  const taken = nodes.find((n) => n.team === team && n.name === name);
  if (taken) return `Team "${team}" already has a member called "${name}" (${taken.agentId}): names are unique in a team, pick another.`;
  return undefined;
}

// ---- requests (they arrive from other workflows' activities: validated at the handler) ----

export const admitRequestSchema = schemaOnce('tree/tree-ledger#admitRequestSchema', () => z.strictObject({
  agentId: z.string().min(1).max(1000),
  parentId: z.string().min(1).max(1000),
  model: z.string().min(1).max(200),
  kind: z.enum(['spawn', 'resume']),
  /** The budget the parent's policy would give it; the grant is at most this. */
  want: z.number().int().min(1),
  /** The tree's capability (`treeTokenSchema`). */
  token: treeTokenSchema.optional(),
  /** Its name (Agent `name`), registered for peer messages. */
  name: z.string().min(1).max(64).optional(),
  /** A teammate: the team it joins (names are unique in a team; a parent leads at most one team). */
  team: z.string().min(1).max(64).optional(),
  /** In a tree that lends shares: about what one call of the child could charge (its parent's estimate), which sizes its first share. */
  callTokens: z.number().int().min(1).optional(),
}));
export type AdmitRequest = z.output<typeof admitRequestSchema>;
/** `share`: in a tree that lends shares, the tokens lent with the admission (src/shared/tree/tree-shares.ts). */
export type AdmitResult = { ok: true; budget: number; share?: number } | { ok: false; reason: string };

export const reserveRequestSchema = schemaOnce('tree/tree-ledger#reserveRequestSchema', () => z.strictObject({
  agentId: z.string().min(1).max(1000),
  turn: z.number().int().min(1),
  /** Tokens the call charges at the least (its input in full, plus one output token). */
  need: z.number().int().min(1),
  /** Tokens it could charge at the most (input plus its `max_tokens`). */
  want: z.number().int().min(1),
  /** The agent's tool calls so far (a fact recorded with its spend). */
  toolUses: z.number().int().min(0),
  /** The tree's capability (`treeTokenSchema`). */
  token: treeTokenSchema.optional(),
}));
export type ReserveRequest = z.output<typeof reserveRequestSchema>;
/**
 * `tokens`: the most the call may charge (≥ need). Refused when even `need` does not fit;
 * `wait` when it would fit once the reservations of calls in flight are charged (they charge
 * at most what they reserved, usually much less): ask again shortly.
 */
export type ReserveResult = { ok: true; tokens: number } | { ok: false; left: number; reason: string; wait: boolean };

export const chargeRequestSchema = schemaOnce('tree/tree-ledger#chargeRequestSchema', () => z.strictObject({
  agentId: z.string().min(1).max(1000),
  turn: z.number().int().min(1),
  model: z.string().min(1).max(200),
  usage: usageSchema,
  toolUses: z.number().int().min(0),
  /** The provider that served the call, when not the tree's own (a fallback, an agent elsewhere): priced as it configures `model`. */
  provider: z.string().min(1).max(64).optional(),
  /**
   * A keep-alive call (cacheWhileWaiting): the agent's n-th, counted over all its runs. It is
   * charged once per number, counts no turn, and was not reserved (it repeats a request the
   * agent already paid for, and reads it at a tenth).
   */
  keepAlive: z.number().int().min(1).optional(),
  /** The tree's capability (`treeTokenSchema`). */
  token: treeTokenSchema.optional(),
  /**
   * A forkflow compaction call (a summary of the agent's older turns): the agent's n-th, over
   * all its runs. Charged once per number, apart from turns, and not reserved (it comes before
   * the turn's own call, which reserves as usual).
   */
  compaction: z.number().int().min(1).optional(),
}));
export type ChargeRequest = z.output<typeof chargeRequestSchema>;

export const agentEndedSchema = schemaOnce('tree/tree-ledger#agentEndedSchema', () => z.strictObject({
  agentId: z.string().min(1).max(1000),
  /** False: admitted, but its parent never started it (see `withdraw`). */
  started: z.literal(false).optional(),
  /** The tree's capability (`treeTokenSchema`). */
  token: treeTokenSchema.optional(),
}));

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

/** An agent's facts as status and results show them. */
export interface LedgerAgentView {
  agentId: string;
  parentId?: string;
  model: string;
  state: 'running' | 'ended';
  budget: number;
  charged: number;
  usage: Usage;
  costUsd: number;
  turns: number;
  toolUses: number;
  runs: number;
  /** Keep-alive calls charged (absent before the first). */
  keepAlives?: number;
  /** forkflow compaction calls charged (absent before the first). */
  compactions?: number;
  /** Its name in the tree, and a teammate's team. */
  name?: string;
  team?: string;
  /** Peer messages it sent and received (absent before the first). */
  messages?: { sent: number; received: number };
  /** In a tree that lends budget shares: tokens lent to it and not given back (what it holds, and what it spent but has not reported yet). */
  lent?: number;
}

export function ledgerView(ledger: TreeLedger): LedgerAgentView[] {
  return Object.values(ledger.nodes).map(({ agentId, parentId, model, state, budget, charged, usage, costUsd, turns, toolUses, runs, keepAlives, compactions, name, team, messages, lent }) => ({
    agentId,
    ...(parentId ? { parentId } : {}),
    model,
    state,
    budget,
    charged,
    usage,
    costUsd,
    turns,
    toolUses,
    runs,
    ...(keepAlives ? { keepAlives } : {}),
    ...(compactions ? { compactions } : {}),
    ...(name ? { name } : {}),
    ...(team ? { team } : {}),
    ...(messages ? { messages: { sent: messages.sent, received: messages.received } } : {}),
    ...(lent !== undefined && lent > charged ? { lent } : {}),
  }));
}
