/**
 * At most a few Workflow Updates in flight from this process to one tree root.
 *
 * A root serves its tree's ledger by update (admissions, reservations, charges, routed
 * messages). The server admits 10 updates in flight per workflow (`history.maxInFlightUpdates`)
 * and refuses the next with RESOURCE_EXHAUSTED; that refusal also clears the root's workflow
 * context on the history service (server 1.32: the request's lease is released with an error),
 * which drops the speculative workflow task the root's worker is working on and aborts every
 * update in flight. The worker's completion then meets "Workflow task not found", it evicts the
 * root and replays it from its first event for the next task, and the refused senders are
 * already asking again: under a burst of reservations (a 31-agent tree whose budget runs short)
 * the root never completed another task. Queued here, the burst reaches the root a few at a
 * time and the server never refuses one.
 *
 * Only trees whose root started before budget shares (patch forkflow-tree-shares-1) reach
 * their root by update on every call; a tree that lends shares sends its root signals only
 * (src/shared/tree/tree-calls.ts), which take no update slot, so nothing here bounds it and there
 * is no sum for an operator to keep. For those older trees the limit stays per process and
 * per root (FORKFLOW_ROOT_UPDATES); they drain as they finish (docs/guides/scale.md).
 */

/** Updates in flight from one process to one root, unless FORKFLOW_ROOT_UPDATES says otherwise. */
export const ROOT_UPDATES_DEFAULT = 4;

interface Lane {
  running: number;
  waiting: Array<() => void>;
}

export class RootUpdateGate {
  private readonly lanes = new Map<string, Lane>();

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a root update gate needs a limit of at least 1, not ${limit}`);
  }

  /** Runs `call` once fewer than `limit` calls to `rootId` are in flight (first come, first served). */
  async run<T>(rootId: string, call: () => Promise<T>): Promise<T> {
    let lane = this.lanes.get(rootId);
    if (!lane) this.lanes.set(rootId, (lane = { running: 0, waiting: [] }));
    if (lane.running < this.limit) lane.running += 1;
    // A slot handed over by a call that ended: `running` already counts this one.
    else await new Promise<void>((resolve) => lane.waiting.push(resolve));
    try {
      return await call();
    } finally {
      const next = lane.waiting.shift();
      if (next) next();
      else if ((lane.running -= 1) === 0) this.lanes.delete(rootId);
    }
  }

  /** Calls in flight to `rootId` and calls waiting for a slot (for tests and metrics). */
  load(rootId: string): { running: number; waiting: number } {
    const lane = this.lanes.get(rootId);
    return { running: lane?.running ?? 0, waiting: lane?.waiting.length ?? 0 };
  }
}

const shared = new Map<number, RootUpdateGate>();

/** The process's gate for `limit`: every worker of a process shares one (the server's limit is per root, not per worker). */
export function processRootGate(limit: number = ROOT_UPDATES_DEFAULT): RootUpdateGate {
  let gate = shared.get(limit);
  if (!gate) shared.set(limit, (gate = new RootUpdateGate(limit)));
  return gate;
}
