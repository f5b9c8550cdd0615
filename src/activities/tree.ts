/**
 * Agent trees from activities: the tree ledger at the root (admission, reservations and
 * charges, as updates: a workflow cannot send one itself), and the older look-up through
 * Temporal visibility (eventually consistent), still registered for runs recorded before
 * the ledger existed.
 */
import type { Client } from '@temporalio/client';
import { WORKFLOW_TYPES } from '../shared/constants';
import { admitAgentUpdate, chargeTokensUpdate, reserveTokensUpdate } from '../shared/messages';
import type { AdmitRequest, AdmitResult, ChargeRequest, ReserveRequest, ReserveResult } from '../shared/tree-ledger';

/** The ledger a tree's root keeps, reached by update. */
export interface LedgerClient {
  reserve(rootId: string, req: ReserveRequest): Promise<ReserveResult>;
  charge(rootId: string, req: ChargeRequest): Promise<boolean>;
}

/** The root is closed or unknown (or refused the request as malformed): there is no tree to answer. */
function rootGone(err: unknown): boolean {
  const name = err instanceof Error ? err.name : '';
  return name === 'WorkflowNotFoundError' || name === 'WorkflowUpdateFailedError';
}

/**
 * A root that is gone has no tree left to share: an agent revived after its tree closed (a
 * client resumed a sub-agent directly) is bounded by its own budget alone (the model
 * activity's `left`), and its charges have nowhere to go.
 */
export function createLedgerClient(client: Client): LedgerClient {
  return {
    reserve: (rootId, req) =>
      client.workflow
        .getHandle(rootId)
        .executeUpdate(reserveTokensUpdate, { args: [req] })
        .catch((err: unknown): ReserveResult => {
          if (rootGone(err)) return { ok: true, tokens: req.want };
          throw err;
        }),
    charge: (rootId, req) =>
      client.workflow
        .getHandle(rootId)
        .executeUpdate(chargeTokensUpdate, { args: [req] })
        .catch((err: unknown) => {
          if (rootGone(err)) return false;
          throw err;
        }),
  };
}

export function createTreeActivities(deps: { client: Client }) {
  return {
    /** Agents of a tree that are running now (runs recorded before the ledger; visibility lags). */
    async countRunningAgents(input: { rootId: string }): Promise<number> {
      const query = `WorkflowType = '${WORKFLOW_TYPES.fork}' AND ForkRootId = '${input.rootId.replace(/'/g, "\\'")}' AND ExecutionStatus = 'Running'`;
      const { count } = await deps.client.workflow.count(query);
      return count;
    },
    /** Asks the tree's root to admit a sub-agent (idempotent by agent id, so retries are safe). */
    async admitAgent(input: { rootId: string; request: AdmitRequest }): Promise<AdmitResult> {
      try {
        return await deps.client.workflow.getHandle(input.rootId).executeUpdate(admitAgentUpdate, { args: [input.request] });
      } catch (err) {
        if (rootGone(err)) return { ok: false, reason: `The tree's root ${input.rootId} does not answer: no sub-agent can start.` };
        throw err;
      }
    },
  };
}
