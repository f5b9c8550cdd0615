/**
 * Client operations on agents as members of a tree: addressing by name, messaging (a
 * finished agent resumes from its durable history, a new run under the same agent id),
 * approvals, the tree's members with counts, and a status stream.
 */
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { ZERO_USAGE } from '../shared/messages-api/anthropic';
import { WORKFLOW_TYPES } from '../shared/wire/constants';
import type { ForkInputJson } from '../shared/wire/fork-input';
import { decideApprovalUpdate, prefixRefQuery, sendMessageSignal, statusQuery, type SendMessageArgs } from '../shared/wire/messages';
import type { ForkResult, ForkStatus } from '../shared/wire/status';
import { CARRIED_STATE_VERSION, type CarriedStateInput } from '../shared/wire/carried-state';
import { carriedPrefixRef } from './conversation';
import { startInputOf } from '../payloads/stored';
import { AgentNotFoundError, ForkflowError } from './errors';
import { toAgentRow, type AgentRow } from './rows';

/** A string literal of a visibility query: backslashes first, so an id ending in `\` cannot escape the closing quote. */
export const visibilityLiteral = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const quote = visibilityLiteral;

/** An agent id for a name (within a tree when `rootId` is given) or the id itself. */
export async function resolveAgent(client: Client, target: string, rootId?: string): Promise<string> {
  const query = `WorkflowType = '${WORKFLOW_TYPES.fork}' AND ForkName = ${quote(target)}${rootId ? ` AND ForkRootId = ${quote(rootId)}` : ''}`;
  const ids = new Set<string>();
  for await (const info of client.workflow.list({ query })) ids.add(info.workflowId);
  if (ids.size > 1) throw new ForkflowError(`"${target}" names ${ids.size} agents (${[...ids].join(', ')}): address one by its id, or pass the tree's root.`);
  return [...ids][0] ?? target;
}

/**
 * The input the agent's current run was started with, read as the client's own converter
 * would: fetched when it is in external storage, decrypted when encrypted.
 */
async function startInput(client: Client, agentId: string): Promise<ForkInputJson> {
  const input = await startInputOf(client, { workflowId: agentId });
  if (input === undefined) throw new ForkflowError(`${agentId}: its start input is not in its history.`);
  return input as ForkInputJson;
}

/**
 * Delivers a message: a running (or idle) agent queues it for its next turn boundary; a
 * finished one resumes — a new run of the same agent id continuing from its durable
 * history, with the message as its next turn. Returns what happened.
 */
export async function deliverMessage(client: Client, agentId: string, message: SendMessageArgs): Promise<'queued' | 'resumed'> {
  const handle = client.workflow.getHandle(agentId);
  let status: string;
  try {
    status = (await handle.describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new AgentNotFoundError(agentId);
    throw err;
  }
  if (status === 'RUNNING') {
    await handle.signal(sendMessageSignal, message);
    return 'queued';
  }
  const [input, previous] = await Promise.all([startInput(client, agentId), handle.result().catch(() => undefined) as Promise<ForkResult | undefined>]);
  const ref = carriedPrefixRef(previous) ?? (await handle.query(prefixRefQuery));
  // What only a fork's first run reads (its point, its set-up, a retry) stays behind; its lineage is carried.
  // A share of its tree's budget is lent by its root at an admission; a run started here had none (it reserves per call).
  const { parent: _snapshot, parentRef: _ref, continuation: _old, from: _point, counterfactual: _cf, replay: _replay, retry: _retry, treeShare: _share, ...config } = input;
  const state: CarriedStateInput = {
    v: CARRIED_STATE_VERSION,
    turns: previous?.turns ?? 0,
    toolUses: previous?.toolUses ?? 0,
    usage: previous?.usage ?? ZERO_USAGE,
    // The budget is kept (the same grant, what was charged against it); a tree's root keeps its ledger.
    budgetUsage: previous?.budgetUsage ?? ZERO_USAGE,
    freshBudget: false,
    ...(previous?.ledger ? { ledger: previous.ledger } : {}),
    ...(previous?.text ? { lastText: previous.text } : {}),
    startedAt: new Date().toISOString(),
    inbox: [],
    inboxSeq: 0,
    children: [],
    childCounter: previous?.childCounter ?? previous?.children?.length ?? 0,
    touched: [],
    maxTurnsReached: false,
    // Breaks counted on, and the first call judged against the last request (src/shared/prefix/cache-break.ts).
    ...(previous?.cache ? { cache: previous.cache } : {}),
    // Where its calls go while a provider is out, and what fallbacks served (src/shared/providers/failover.ts).
    ...(previous?.failover ? { failover: previous.failover } : {}),
    // Its output file still starts after what it inherited as a fork.
    ...withOwnFrom(previous?.ownMessagesFrom ?? (previous ? undefined : await handle.query(statusQuery).then((s) => s.ownMessagesFrom, () => undefined))),
    ...carriedLineage(previous),
  };
  await client.workflow.start(WORKFLOW_TYPES.fork, {
    workflowId: agentId,
    taskQueue: (await handle.describe()).taskQueue,
    args: [{ ...config, continuation: { ref, state: { ...state }, message: { message: message.message, ...(message.summary ? { summary: message.summary } : {}), ...(message.from ? { from: message.from } : {}) } } }],
    staticSummary: `resumed: ${message.summary ?? message.message.split('\n')[0]!.slice(0, 100)}`,
  });
  return 'resumed';
}

/** What a continuing run keeps saying of where the agent came from (its origin stays in its input). */
export function carriedLineage(previous: ForkResult | undefined): Pick<CarriedStateInput, 'lineage'> {
  const lineage = { ...(previous?.counterfactual ? { counterfactual: previous.counterfactual } : {}), ...(previous?.replay ? { replay: true } : {}), ...(previous?.retry ? { retry: previous.retry } : {}) };
  return Object.keys(lineage).length > 0 ? { lineage } : {};
}

export async function decideApproval(client: Client, agentId: string, requestId: string, decision: 'approve' | 'deny', opts: { reason?: string; by?: string } = {}): Promise<'approved' | 'denied'> {
  const handle = client.workflow.getHandle(agentId);
  try {
    const out = await handle.executeUpdate(decideApprovalUpdate, { args: [{ requestId, decision, by: opts.by ?? 'operator', ...(opts.reason ? { reason: opts.reason } : {}) }] });
    return out.outcome;
  } catch (err) {
    // The validator's words (e.g. no such pending request), not the SDK's generic wrapper.
    if (err instanceof WorkflowUpdateFailedError && err.cause) throw new ForkflowError(`${agentId}: ${err.cause.message}`);
    throw err;
  }
}

export interface TreeView {
  rootId: string;
  agents: AgentRow[];
  counts: Record<string, number>;
  /** From the root's ledger (absent for a tree without one): every agent's usage and cost, and the totals. */
  usage?: { perAgent: NonNullable<ForkStatus['perAgent']>; total: ForkStatus['tree']; budget?: ForkStatus['treeBudget'] };
}

/** Every agent of a tree (from visibility) with counts by state. */
export async function membersOf(client: Client, rootId: string): Promise<Pick<TreeView, 'agents' | 'counts'>> {
  const agents: AgentRow[] = [];
  for await (const info of client.workflow.list({ query: `WorkflowType = '${WORKFLOW_TYPES.fork}' AND ForkRootId = ${quote(rootId)}` })) agents.push(toAgentRow(info));
  const counts: Record<string, number> = { running: 0, completed: 0, failed: 0, killed: 0, timeout: 0, idle: 0, awaiting_approval: 0 };
  for (const a of agents) counts[a.state ?? 'unknown'] = (counts[a.state ?? 'unknown'] ?? 0) + 1;
  return { agents, counts };
}

/** Every agent of a tree (from visibility) with counts by state, and its usage from the root's ledger. */
export async function treeOf(client: Client, rootId: string): Promise<TreeView> {
  const { agents, counts } = await membersOf(client, rootId);
  // The ledger is exact where visibility lags; a root that cannot answer (no worker) leaves it out.
  const status = await client.workflow
    .getHandle(rootId)
    .query(statusQuery)
    .catch(() => undefined);
  const usage = status?.perAgent ? { perAgent: status.perAgent, total: status.tree, ...(status.treeBudget ? { budget: status.treeBudget } : {}) } : undefined;
  return { rootId, agents, counts, ...(usage ? { usage } : {}) };
}

/**
 * Yields an agent's status each time it changes, until the agent is closed. The library
 * polls the `status` query (no history cost), so callers need no loop of their own.
 */
export async function* watchStatus(
  client: Client,
  agentId: string,
  opts: { intervalMs?: number; signal?: AbortSignal; read?: <T>(operation: string, fn: () => Promise<T>) => Promise<T> } = {},
): AsyncGenerator<ForkStatus> {
  const handle = client.workflow.getHandle(agentId);
  // Each look goes through `read` (the client's outage guard), so a watch outlasts a restart.
  const read = opts.read ?? (<T>(_operation: string, fn: () => Promise<T>) => fn());
  let last = '';
  for (;;) {
    if (opts.signal?.aborted) return;
    const status = await read('watch', () => handle.query(statusQuery));
    const key = JSON.stringify([status.state, status.turns, status.toolUses, status.activity, status.pendingMessages, status.usage, status.children]);
    if (key !== last) {
      last = key;
      yield status;
    }
    if ((await read('watch', () => handle.describe())).status.name !== 'RUNNING') return;
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 500));
  }
}

function withOwnFrom(ownFrom: number | undefined): { ownFrom?: number } {
  return ownFrom === undefined ? {} : { ownFrom };
}
