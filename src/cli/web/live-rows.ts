/**
 * The agent list's counters, live. Visibility's `ForkTurns` and `ForkTotalTokens` are written
 * when an agent leaves `running` (src/workflows/fork/visibility.ts), so a running agent's row
 * would read `0 turns · 0 tokens` while it works. A running row's counters come instead from
 * where the detail pane reads them: the ledger of its tree's root (one status query per tree,
 * the same numbers `forkflow tree` prints), else its own status. A closed row keeps visibility's
 * (final) numbers. An agent whose worker cannot answer keeps visibility's and says so.
 */
import type { Client } from '@temporalio/client';
import { totalTokens } from '../../shared/anthropic';
import { statusQuery } from '../../shared/messages';
import type { LedgerAgentView } from '../../shared/tree-ledger';
import type { AgentRow } from '../../client';
import { statusCountersOf } from '../../client/graph';

/** A listed agent with where its counters were read. */
export type LiveRow = AgentRow & { counters: 'ledger' | 'status' | 'visibility' };

/** Trees asked for their ledger per refresh, at most; a list of many more roots falls back to each agent's own status. */
const MAX_ROOTS = 20;

/** `rows` with a running agent's turns and tokens read live. */
export async function withLiveCounters(client: Client, rows: AgentRow[]): Promise<LiveRow[]> {
  const running = rows.filter((r) => r.temporalStatus === 'RUNNING');
  const roots = [...new Set(running.map((r) => r.rootId ?? r.agentId))].slice(0, MAX_ROOTS);
  const ledger = new Map<string, LedgerAgentView>();
  await Promise.all(
    roots.map(async (root) => {
      const status = await client.workflow.getHandle(root).query(statusQuery).catch(() => undefined);
      for (const n of status?.perAgent ?? []) ledger.set(n.agentId, n);
    }),
  );
  const own = await statusCountersOf(client, running.filter((r) => !ledger.has(r.agentId)).map((r) => r.agentId));
  return rows.map((r): LiveRow => {
    if (r.temporalStatus !== 'RUNNING') return { ...r, counters: 'visibility' };
    const n = ledger.get(r.agentId);
    if (n) return { ...r, turns: n.turns, totalTokens: totalTokens(n.usage), counters: 'ledger' };
    const s = own.get(r.agentId);
    if (s) return { ...r, turns: s.turns, totalTokens: s.totalTokens, counters: 'status' };
    return { ...r, counters: 'visibility' };
  });
}
