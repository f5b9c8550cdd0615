/**
 * The agents half of `forkflow top`: open fork workflows from Temporal visibility, counted
 * by label and state (running, idle, awaiting_approval). Visibility's GROUP BY covers only
 * ExecutionStatus, so the grouping is done here over a bounded listing, with the exact
 * total from a count query alongside.
 */
import type { ForkflowClient } from '../../client';
import { WORKFLOW_TYPES } from '../../shared/wire/constants';
import type { AgentColor } from '../../shared/agents/agents';

export interface AgentGroup {
  label: string;
  state: string;
  /** The agents' colour (their definition's `color`), when they have one. */
  color?: AgentColor;
  count: number;
}

export interface AgentCounts {
  /** The visibility query used (open forks, narrowed by the caller's query). */
  query: string;
  /** Open forks matching the query (exact, from a count). */
  open: number;
  /** Forks the groups were built from; fewer than `open` when the listing hit its limit. */
  listed: number;
  groups: AgentGroup[];
}

/**
 * Counts open forks by label and state.
 *
 * @param query extra visibility filter, e.g. `ForkLabel = 'callers'` (the Web UI's language).
 * @param limit at most this many forks are listed for the grouping.
 */
export async function countOpenAgents(client: ForkflowClient, opts: { query?: string; limit?: number } = {}): Promise<AgentCounts> {
  const open = `ExecutionStatus = 'Running'${opts.query ? ` AND (${opts.query})` : ''}`;
  const [rows, counted] = await Promise.all([
    client.list({ query: open, limit: opts.limit ?? 1000 }),
    client.temporal.workflow.count(`WorkflowType = '${WORKFLOW_TYPES.fork}' AND ${open}`),
  ]);
  const groups = new Map<string, AgentGroup>();
  for (const row of rows) {
    const label = row.label ?? '';
    const state = row.state ?? 'unknown';
    const key = JSON.stringify([label, state, row.color ?? '']);
    const group = groups.get(key) ?? { label, state, ...(row.color ? { color: row.color } : {}), count: 0 };
    group.count += 1;
    groups.set(key, group);
  }
  return {
    query: open,
    open: counted.count,
    listed: rows.length,
    groups: [...groups.values()].sort((a, b) => b.count - a.count || a.label.localeCompare(b.label) || a.state.localeCompare(b.state)),
  };
}
