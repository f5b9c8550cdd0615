/**
 * An agent tree as a graph (the web view's picture): every member with its live counters, and
 * for each one how its parent started it — the edge's label. Nothing here is guessed by a
 * page; each fact has one source:
 *
 * - members, states, task queues, lineage: visibility (the tree's rows, as `tree()` lists them);
 * - fork, named agent type or general-purpose: the start's query source (`ForkQuerySource`:
 *   `agent:builtin:fork`, `agent:custom:<type>`, `agent:builtin:general-purpose`);
 * - teammate: the team the root's ledger records for it;
 * - remote: it runs on another task queue than its parent (a remote sub-agent is started on the
 *   tree's remote queue, src/workflows/fork/agent-launch.ts);
 * - from a past turn: `ForkParentTurn` (a fork from a point, found as `forksOf` finds it);
 * - counters: the root's ledger where the tree keeps one (a finished root's from its result) (exact while agents run, where
 *   visibility has numbers only from an agent's end), else the agent's own status while it is
 *   open, else visibility.
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { totalTokens, type Usage } from '../shared/messages-api/anthropic';
import { FORK_QUERY_SOURCE, WORKFLOW_TYPES } from '../shared/wire/constants';
import { estimateCostUsd } from '../shared/providers/pricing';
import { statusQuery } from '../shared/wire/messages';
import { SA } from '../shared/wire/search-attributes';
import type { ForkResult, ForkStatus } from '../shared/wire/status';
import { ledgerTotals, leftFor } from '../shared/tree/tree-ledger-rules';
import { ledgerView, type LedgerAgentView } from '../shared/tree/tree-ledger-view';
import { AgentNotFoundError } from './errors';
import { forksByPoint } from './lineage';
import { toAgentRow, type AgentRow } from './rows';
import { membersOf, visibilityLiteral, type TreeView } from './tree';

/** How an agent was started, as the edge from its parent says. */
export type StartKind = 'root' | 'fork' | 'named' | 'general' | 'teammate' | 'from-turn' | 'other';

/** The edge from a parent to its child: how the child was started, and the words drawn on it. */
export interface StartEdge {
  /** fork, named, general (general-purpose), teammate, from-turn, root, or other (a start forkflow does not name). */
  kind: StartKind;
  /** A named agent's type (its definition's name). */
  type?: string;
  /** A teammate's team. */
  team?: string;
  /** A fork from a point: the turn of its parent it started from. */
  turn?: number;
  /** It runs on another task queue than its parent (remote workers). */
  remote?: boolean;
  /** The words on the edge: `fork`, `named: reviewer`, `teammate: crew`, `from turn 3`, `… · remote`. */
  label: string;
}

/** An agent's counters and where they were read. */
export interface NodeCounters {
  /** `ledger`: the root's tree ledger; `status`: its own status query; `visibility`: search attributes (set at its end). */
  source: 'ledger' | 'status' | 'visibility';
  /** Model turns so far. */
  turns?: number;
  /** Tool calls so far. */
  toolUses?: number;
  /** Every token: input of every kind and output. */
  totalTokens?: number;
  /** By kind (absent when only visibility's total is known). */
  usage?: Usage;
  /** Its estimated cost in USD (src/shared/providers/pricing.ts): the ledger's, or its own usage priced. */
  costUsd?: number;
  /** The model its calls go to. */
  model?: string;
}

/** One agent of the picture. */
export interface GraphNode {
  agentId: string;
  /** Its parent in the picture (the agent that started it, or the agent whose point it forked). */
  parentId?: string;
  /** How its parent started it (`root` for the tree's root). */
  start: StartEdge;
  /** Its name in the tree (the Agent call's `name`), from the ledger. */
  name?: string;
  /** Its fork label. */
  label?: string;
  /** forkflow's state (`ForkState`), else Temporal's status in lower case. */
  state: string;
  /** Temporal's status of its newest run (RUNNING, COMPLETED, …). */
  temporalStatus: string;
  /** ISO times of its newest run's start and close. */
  startTime: string;
  closeTime?: string;
  /** The task queue its workflow runs on. */
  taskQueue?: string;
  /** Its display colour (a definition's `color`). */
  color?: string;
  /** Turns, tool calls, tokens and cost, live where they can be. */
  counters: NodeCounters;
  /** A fork from a point of a member, not a member itself (`forkflow tree` lists these apart). */
  pointFork?: true;
}

/** A tree as `ForkflowClient.graph` returns it. */
export interface TreeGraph {
  rootId: string;
  /** Its members (one per agent: the newest run), then the forks from points of them. */
  nodes: GraphNode[];
  /** Members by state, as `tree()` counts them. */
  counts: Record<string, number>;
  /** From the root's ledger, when the tree keeps one: the tree's usage, cost and agents counted. */
  total?: NonNullable<TreeView['usage']>['total'];
  /** From the root's ledger: the tree's budget, what was charged and what is left. */
  budget?: NonNullable<TreeView['usage']>['budget'];
}

/** Open agents without a ledger entry asked for their own status, at most (a large forest of plain forks stays cheap). */
export const MAX_STATUS_READS = 50;
const STATUS_CONCURRENCY = 4;

const CUSTOM_PREFIX = 'agent:custom:';

/**
 * How `row` was started, from what visibility and the ledger say of it and of its parent.
 * Pure: the rules above, one place.
 */
export function startEdgeOf(row: Pick<AgentRow, 'agentId' | 'querySource' | 'parentTurn' | 'taskQueue' | 'parentId'>, parent: Pick<AgentRow, 'taskQueue'> | undefined, ledger: Pick<LedgerAgentView, 'team'> | undefined, rootId: string): StartEdge {
  const remote = parent?.taskQueue !== undefined && row.taskQueue !== undefined && parent.taskQueue !== row.taskQueue;
  const source = row.querySource ?? '';
  const type = source.startsWith(CUSTOM_PREFIX) ? source.slice(CUSTOM_PREFIX.length) : undefined;
  let edge: Omit<StartEdge, 'label'>;
  if (row.parentTurn !== undefined && row.parentTurn !== null) edge = { kind: 'from-turn', turn: row.parentTurn };
  else if (row.agentId === rootId || !row.parentId) edge = { kind: 'root' };
  else if (ledger?.team) edge = { kind: 'teammate', team: ledger.team, ...(type ? { type } : {}) };
  else if (source === FORK_QUERY_SOURCE) edge = { kind: 'fork' };
  else if (type) edge = { kind: 'named', type };
  else if (source.startsWith('agent:builtin:')) edge = { kind: 'general' };
  else edge = { kind: 'other' };
  const words = edge.kind === 'from-turn' ? `from turn ${edge.turn}` : edge.kind === 'named' ? `named: ${edge.type}` : edge.kind === 'teammate' ? `teammate: ${edge.team}` : edge.kind;
  return { ...edge, ...(remote ? { remote: true } : {}), label: remote ? `${words} · remote` : words };
}

function ledgerCounters(n: LedgerAgentView): NodeCounters {
  return { source: 'ledger', turns: n.turns, toolUses: n.toolUses, totalTokens: totalTokens(n.usage), usage: n.usage, costUsd: n.costUsd, model: n.model };
}

function statusCounters(s: ForkStatus): NodeCounters {
  return { source: 'status', turns: s.turns, toolUses: s.toolUses, totalTokens: totalTokens(s.usage), usage: s.usage, costUsd: estimateCostUsd(s.model, s.usage), model: s.model };
}

function visibilityCounters(row: Pick<AgentRow, 'turns' | 'totalTokens'>): NodeCounters {
  return { source: 'visibility', ...(row.turns !== undefined ? { turns: row.turns } : {}), ...(row.totalTokens !== undefined ? { totalTokens: row.totalTokens } : {}) };
}

/** Runs `fn` over `items`, `limit` at a time. */
async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

/**
 * Live counters for open agents the ledger does not cover: each one's status query (a worker
 * answers it; one that cannot leaves visibility's numbers). At most MAX_STATUS_READS.
 */
async function statusCountersOf(client: Client, agentIds: string[]): Promise<Map<string, NodeCounters>> {
  const out = new Map<string, NodeCounters>();
  await eachLimited(agentIds.slice(0, MAX_STATUS_READS), STATUS_CONCURRENCY, async (id) => {
    const status = await client.workflow.getHandle(id).query(statusQuery).catch(() => undefined);
    if (status) out.set(id, statusCounters(status));
  });
  return out;
}

/**
 * The root's ledger as `tree()` reports it. A finished root's is in its result, read without
 * asking a worker (its status query would replay the whole run); an open root's status has it.
 */
export async function ledgerOf(client: Client, rootId: string): Promise<TreeView['usage']> {
  const handle = client.workflow.getHandle(rootId);
  const closed = await handle.describe().then((d) => d.status.name === 'COMPLETED', () => false);
  const book = closed ? ((await handle.result().catch(() => undefined)) as ForkResult | undefined)?.ledger : undefined;
  if (book) {
    const t = ledgerTotals(book);
    const root = book.nodes[rootId];
    return { perAgent: ledgerView(book), total: { usage: t.usage, costUsd: t.costUsd, agents: t.agents }, ...(root ? { budget: { max: root.budget, charged: t.charged, left: leftFor(book, rootId), turns: t.turns, toolUses: t.toolUses } } : {}) };
  }
  const status = await handle.query(statusQuery).catch(() => undefined);
  return status?.perAgent ? { perAgent: status.perAgent, total: status.tree, ...(status.treeBudget ? { budget: status.treeBudget } : {}) } : undefined;
}

/** The tree an agent belongs to: its root's id (`ForkRootId`), or its own for a root. */
export async function rootOf(client: Client, agentId: string): Promise<string> {
  try {
    return (await client.workflow.getHandle(agentId).describe()).typedSearchAttributes.get(SA.rootId) ?? agentId;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new AgentNotFoundError(agentId);
    throw err;
  }
}

/** One row per agent: visibility lists every run (continued, resumed), the newest stands for the agent. */
function newestRuns(rows: AgentRow[]): AgentRow[] {
  const newest = new Map<string, AgentRow>();
  for (const r of rows) {
    const seen = newest.get(r.agentId);
    if (!seen || r.startTime > seen.startTime) newest.set(r.agentId, r);
  }
  return [...newest.values()];
}

/** Visibility's rows of these agents (the forks from points: their lineage attributes found them, their rows say the rest). */
async function rowsOf(client: Client, ids: string[]): Promise<AgentRow[]> {
  const rows: AgentRow[] = [];
  for (let i = 0; i < ids.length; i += 100) {
    const query = `WorkflowType = '${WORKFLOW_TYPES.fork}' AND WorkflowId IN (${ids.slice(i, i + 100).map(visibilityLiteral).join(', ')})`;
    for await (const info of client.workflow.list({ query })) rows.push(toAgentRow(info));
  }
  return rows;
}

/** The tree of `rootId` as a graph: members and the forks from points of them, each with its edge and counters. */
export async function graphOf(client: Client, rootId: string): Promise<TreeGraph> {
  const [tree, usage] = await Promise.all([membersOf(client, rootId), ledgerOf(client, rootId)]);
  const members = newestRuns(tree.agents);
  const byId = new Map(members.map((r) => [r.agentId, r]));
  const ledger = new Map((usage?.perAgent ?? []).map((n) => [n.agentId, n]));
  const forks = (await forksByPoint(client, [rootId, ...members.map((a) => a.agentId)])).filter((f) => !byId.has(f.agentId));
  const rows: (AgentRow & { pointFork?: true })[] = [...members, ...newestRuns(await rowsOf(client, forks.map((f) => f.agentId))).map((r) => ({ ...r, pointFork: true as const }))];
  const open = rows.filter((r) => r.temporalStatus === 'RUNNING' && !ledger.has(r.agentId)).map((r) => r.agentId);
  const live = await statusCountersOf(client, open);
  const nodes = rows.map((r): GraphNode => {
    const parent = r.parentId ? (byId.get(r.parentId) ?? rows.find((o) => o.agentId === r.parentId)) : undefined;
    const own = ledger.get(r.agentId);
    return {
      agentId: r.agentId,
      ...(r.parentId ? { parentId: r.parentId } : {}),
      start: startEdgeOf(r, parent, own, rootId),
      ...(own?.name ? { name: own.name } : {}),
      ...(r.label ? { label: r.label } : {}),
      state: r.state ?? r.temporalStatus.toLowerCase(),
      temporalStatus: r.temporalStatus,
      startTime: r.startTime,
      ...(r.closeTime ? { closeTime: r.closeTime } : {}),
      ...(r.taskQueue ? { taskQueue: r.taskQueue } : {}),
      ...(r.color ? { color: r.color } : {}),
      counters: own ? ledgerCounters(own) : (live.get(r.agentId) ?? visibilityCounters(r)),
      ...(r.pointFork ? { pointFork: true as const } : {}),
    };
  });
  return { rootId, nodes, counts: tree.counts, ...(usage ? { total: usage.total, ...(usage.budget ? { budget: usage.budget } : {}) } : {}) };
}
