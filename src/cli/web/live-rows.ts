/**
 * The agent list's counters, live. Visibility's `ForkTurns` and `ForkTotalTokens` are written
 * when an agent leaves `running` (src/workflows/fork/visibility.ts), so a running agent's row
 * would read `0 turns · 0 tokens` while its detail pane shows 12 turns. A running row's
 * counters come instead from where the detail pane reads them: the ledger of its tree's root
 * (one status query per tree gives every member's turns and tokens, the numbers `forkflow
 * tree` prints), else the agent's own status (which also gives its state). A closed row keeps
 * visibility's (final) numbers, and so does a row whose query fails or is late: the list
 * never waits long on a worker that cannot answer.
 */
import { totalTokens } from '../../shared/messages-api/anthropic';
import type { AgentRow, ForkStatus } from '../../client';

/** A listed agent with where its counters were read. */
export type LiveRow = AgentRow & { counters: 'ledger' | 'status' | 'visibility' };

/** Trees asked for their ledger per refresh, at most. */
export const MAX_ROOTS = 20;
/** Running rows outside those trees' ledgers filled from their own status, at most. */
export const LIVE_ROWS = 50;
/** Queries in flight at once. */
const PARALLEL = 8;
/** How long one status query may take before its rows keep visibility's numbers. */
const DEADLINE_MS = 2_000;

function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([p.catch(() => undefined), late]).finally(() => clearTimeout(timer));
}

/** Each id's status (a failed or late one left out), PARALLEL at a time. */
async function statuses(ids: string[], status: (agentId: string) => Promise<ForkStatus>): Promise<Map<string, ForkStatus>> {
  const out = new Map<string, ForkStatus>();
  for (let i = 0; i < ids.length; i += PARALLEL) {
    await Promise.all(
      ids.slice(i, i + PARALLEL).map(async (id) => {
        const s = await within(status(id), DEADLINE_MS);
        if (s) out.set(id, s);
      }),
    );
  }
  return out;
}

/** `rows` with each running agent's turns and tokens read live (`status`: the client's status query). */
export async function withLiveCounters(rows: AgentRow[], status: (agentId: string) => Promise<ForkStatus>): Promise<LiveRow[]> {
  const running = rows.filter((r) => r.temporalStatus === 'RUNNING');
  // The roots first: a root's status carries its tree's ledger, and its own state.
  const roots = [...new Set(running.map((r) => r.rootId ?? r.agentId))].slice(0, MAX_ROOTS);
  const own = await statuses(roots, status);
  const ledger = new Map([...own.values()].flatMap((s) => (s.perAgent ?? []).map((n) => [n.agentId, n] as const)));
  const rest = running.filter((r) => !ledger.has(r.agentId) && !roots.includes(r.agentId)).map((r) => r.agentId);
  for (const [id, s] of await statuses(rest.slice(0, LIVE_ROWS), status)) own.set(id, s);
  return rows.map((r): LiveRow => {
    if (r.temporalStatus !== 'RUNNING') return { ...r, counters: 'visibility' };
    const s = own.get(r.agentId);
    const state = s ? { state: s.state } : {};
    const n = ledger.get(r.agentId);
    if (n) return { ...r, ...state, turns: n.turns, totalTokens: totalTokens(n.usage), counters: 'ledger' };
    if (s) return { ...r, ...state, turns: s.turns, totalTokens: totalTokens(s.usage), counters: 'status' };
    return { ...r, counters: 'visibility' };
  });
}
