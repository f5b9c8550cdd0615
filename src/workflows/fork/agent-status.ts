/**
 * What an agent's `status` query answers (src/shared/wire/status.ts): its state and counters, its
 * tree (the ledger at a root), what it is doing and waiting for. Read from the agent's parts;
 * writes nothing.
 */
import { cacheHitRatio } from '../../shared/messages-api/anthropic';
import { tokensCharged } from '../../shared/tree/budget';
import { failoverStatus } from '../../shared/providers/failover';
import { isTerminal, type ForkStatus } from '../../shared/wire/status';
import type { ChildRecord } from '../../shared/tree/tree-input';
import { leftFor, ledgerTotals } from '../../shared/tree/tree-ledger-rules';
import { ledgerView } from '../../shared/tree/tree-ledger-view';
import { workflowNow } from '../clock';
import type { ForkAgent } from './agent';
import { failoverChainOf } from './failover-routes';
import { providerUsageStatus } from './provider-usage';

/** The tree's budget and every agent's facts, at a tree's root. */
function treeLedgerStatus(agent: ForkAgent): Pick<ForkStatus, 'treeBudget' | 'perAgent'> {
  if (!agent.book) return {};
  const t = ledgerTotals(agent.book);
  return {
    treeBudget: { max: agent.input.budget.maxTokens, charged: t.charged, left: leftFor(agent.book, agent.agentId), turns: t.turns, toolUses: t.toolUses, ...(agent.book.shares?.waiters.length ? { waiting: agent.book.shares.waiters.length } : {}) },
    // The root's own row is written as it starts and its runs end; a root that has finished
    // (its result taken, or a query of its closed run) says so in its row too.
    perAgent: ledgerView(agent.book).map((row) => (row.agentId === agent.agentId && row.state === 'running' && isTerminal(agent.state) ? { ...row, state: 'ended' as const } : row)),
  };
}

/** What the `status` query answers: the agent's state, counters, tree and what it waits for. */
export function statusOf(agent: ForkAgent): ForkStatus {
  return {
    agentId: agent.agentId,
    state: agent.state,
    turns: agent.turns,
    toolUses: agent.toolUses,
    usage: agent.usage,
    cacheHitRatio: cacheHitRatio(agent.usage),
    pendingMessages: agent.inbox.length,
    // A reply is transcript: not served under skipTranscript (the result still carries it, for the caller).
    lastText: agent.input.skipTranscript ? undefined : agent.lastText,
    error: agent.error,
    forkLabel: agent.input.forkLabel,
    querySource: agent.input.querySource,
    parentAgentId: agent.input.parentAgentId,
    rootAgentId: agent.rootAgentId,
    model: agent.model,
    // Empty while the agent is being set up: the hash is computed with its request context.
    cacheKeyHash: agent.opened ? agent.setup.summary.cacheKeyHash : '',
    usedParentSnapshot: agent.opened && agent.setup.usedParentSnapshot,
    maxTurns: agent.input.maxTurns,
    maxTurnsReached: agent.maxTurnsReached,
    ...(agent.cacheBreak ? { cacheBreak: agent.cacheBreak } : {}),
    cacheBreaks: agent.cache.breaks,
    ...agent.keepAliveFields(),
    budgetUsed: tokensCharged(agent.budgetUsage),
    budgetMax: agent.input.budget.maxTokens,
    ...(agent.input.name ? { name: agent.input.name } : {}),
    ...(agent.input.color ? { color: agent.input.color } : {}),
    ...(agent.input.effort ? { effort: agent.input.effort } : {}),
    depth: agent.input.depth,
    children: childCounts(agent.children.all),
    tree: agent.treeTotals(),
    ...treeLedgerStatus(agent),
    ...(agent.workArea.containment ? { containment: agent.workArea.containment } : {}),
    permissionMode: agent.input.permissionMode,
    ...(agent.opened ? { context: agent.window.status(agent.model) } : {}),
    approvals: agent.approvals.pending().map(({ requestId, tool, summary, requestedAt }) => ({ requestId, tool, summary, requestedAt })),
    activity: agent.activity,
    messages: agent.messageCount,
    ...(agent.ownFrom !== undefined ? { ownMessagesFrom: agent.ownFrom } : {}),
    ...agent.lineage,
    rejectedSignals: agent.rejectedSignals,
    startedAt: agent.startedAt,
    ...(agent.mcp.size ? { mcpServers: agent.mcp.status(agent.input.mcpServers) } : {}),
    ...(agent.toolNotices.length ? { toolNotices: [...agent.toolNotices] } : {}),
    ...withInterrupts(agent.turnControl.status()),
    ...failoverFields(agent),
    ...withProviders(providerUsageStatus(agent.tally.providers)),
  };
}

function withProviders(providers: ForkStatus['providers']): Pick<ForkStatus, 'providers'> {
  return providers ? { providers } : {};
}

/** Failover, for an agent whose provider has fallbacks (after set-up: the chain needs its model). */
function failoverFields(agent: ForkAgent): Pick<ForkStatus, 'failover'> {
  if (!agent.opened) return {};
  const chain = failoverChainOf(agent);
  return chain.length > 1 ? { failover: failoverStatus(agent.failover, chain, workflowNow()) } : {};
}

function withInterrupts(interrupts: ForkStatus['interrupts']): Pick<ForkStatus, 'interrupts'> {
  return interrupts ? { interrupts } : {};
}

function childCounts(children: readonly ChildRecord[]): ForkStatus['children'] {
  const counts = { running: 0, completed: 0, failed: 0, killed: 0, timeout: 0, total: children.length };
  for (const c of children) counts[c.state] += 1;
  return counts;
}
