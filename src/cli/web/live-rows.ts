/**
 * The agent list's counters for running agents. Visibility's turn and token attributes are
 * written when an agent ends, so a running agent's row would read `0 turns · 0 tokens` while
 * its detail pane shows real counts: each running row (the first LIVE_ROWS of them) is
 * filled from the agent's own `status` query instead, a few at a time, each within a short
 * deadline. A row whose query fails keeps what visibility said.
 */
import { totalTokens } from '../../shared/anthropic';
import type { AgentRow, ForkStatus } from '../../client';

/** Running rows filled from their status, at most (a list of hundreds stays one query each for the first ones). */
export const LIVE_ROWS = 50;
/** Queries in flight at once. */
const PARALLEL = 8;
/** How long one status query may take before its row keeps visibility's numbers. */
const DEADLINE_MS = 2_000;

function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([p.catch(() => undefined), late]).finally(() => clearTimeout(timer));
}

/** `rows` with each running agent's turns, tokens and state from its status (`status`: the client's query). */
export async function withLiveCounters(rows: AgentRow[], status: (agentId: string) => Promise<ForkStatus>): Promise<AgentRow[]> {
  const running = rows.filter((r) => r.temporalStatus === 'RUNNING').slice(0, LIVE_ROWS);
  const live = new Map<string, ForkStatus>();
  for (let i = 0; i < running.length; i += PARALLEL) {
    await Promise.all(
      running.slice(i, i + PARALLEL).map(async (r) => {
        const s = await within(status(r.agentId), DEADLINE_MS);
        if (s) live.set(r.workflowId, s);
      }),
    );
  }
  return rows.map((r) => {
    const s = live.get(r.workflowId);
    return s ? { ...r, state: s.state, turns: s.turns, totalTokens: totalTokens(s.usage) } : r;
  });
}
