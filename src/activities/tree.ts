/**
 * Agent trees from activities: the tree ledger at the root (admission, reservations and
 * charges, as updates: a workflow cannot send one itself), and the older look-up through
 * Temporal visibility (eventually consistent), still registered for runs recorded before
 * the ledger existed.
 */
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { WORKFLOW_TYPES } from '../shared/constants';
import { admitAgentUpdate, chargeTokensUpdate, reserveTokensUpdate } from '../shared/messages';
import { BUDGET_EXHAUSTED_FAILURE, type AdmitRequest, type AdmitResult, type ChargeRequest, type ReserveRequest, type ReserveResult } from '../shared/tree-ledger';

export { BUDGET_EXHAUSTED_FAILURE as BUDGET_EXHAUSTED } from '../shared/tree-ledger';

/** The ledger a tree's root keeps, reached by update. */
export interface LedgerClient {
  reserve(rootId: string, req: ReserveRequest): Promise<ReserveResult>;
  charge(rootId: string, req: ChargeRequest): Promise<boolean>;
}

/** A root that is gone (closed, not found) cannot grant anything: stop, do not retry. */
function rootGone(rootId: string, err: unknown): never {
  const name = err instanceof Error ? err.name : '';
  if (name === 'WorkflowNotFoundError' || name === 'WorkflowUpdateFailedError') {
    throw ApplicationFailure.nonRetryable(`The tree's root ${rootId} does not answer (${String(err)}): nothing more can be spent.`, BUDGET_EXHAUSTED_FAILURE);
  }
  throw err;
}

export function createLedgerClient(client: Client): LedgerClient {
  return {
    reserve: (rootId, req) => client.workflow.getHandle(rootId).executeUpdate(reserveTokensUpdate, { args: [req] }).catch((err: unknown) => rootGone(rootId, err)),
    charge: (rootId, req) => client.workflow.getHandle(rootId).executeUpdate(chargeTokensUpdate, { args: [req] }).catch((err: unknown) => rootGone(rootId, err)),
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
        const name = err instanceof Error ? err.name : '';
        if (name === 'WorkflowNotFoundError' || name === 'WorkflowUpdateFailedError') return { ok: false, reason: `The tree's root ${input.rootId} does not answer: no sub-agent can start.` };
        throw err;
      }
    },
  };
}
