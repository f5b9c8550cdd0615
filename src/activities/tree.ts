/**
 * Agent trees from activities: the tree ledger at the root (admission, reservations and
 * charges, as updates: a workflow cannot send one itself), and the older look-up through
 * Temporal visibility (eventually consistent), still registered for runs recorded before
 * the ledger existed.
 */
import { Context, log } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { WORKFLOW_TYPES } from '../shared/wire/constants';
import { admitAgentUpdate, chargeTokensUpdate, reserveTokensUpdate, routeMessageUpdate } from '../shared/wire/messages';
import type { RouteRequest, RouteResult } from '../shared/tree/team-ledger';
import type { AdmitRequest, AdmitResult, ChargeRequest, ReserveRequest, ReserveResult } from '../shared/tree/tree-ledger-requests';
import { processRootGate, type RootUpdateGate } from './root-gate';

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
 * The server is too busy for the update right now: RESOURCE_EXHAUSTED (e.g. a root with its
 * 10 in-flight updates, the server's per-workflow limit, when a big tree's calls reserve at
 * once) or UNAVAILABLE (an update aborted while the root's worker was slow). Reservations and
 * charges are idempotent by agent and turn, so asking again is safe.
 */
export function serverBusy(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === GRPC_RESOURCE_EXHAUSTED || code === GRPC_UNAVAILABLE) return true;
    if (RUN_CLOSED_FIRST.has(String((e as { type?: unknown }).type))) return true;
  }
  return false;
}

/**
 * Update failures the server gives when the run it reached closed (continued as new) before
 * answering, or completed a task without taking the update up: the request never counted, and
 * asked again it lands on the root's current run (or finds the root gone). Not "the root is
 * gone": read that way, a charge made while a busy root continued as new was dropped.
 */
const RUN_CLOSED_FIRST = new Set(['AcceptedUpdateCompletedWorkflow', 'UnprocessedUpdate']);
const GRPC_RESOURCE_EXHAUSTED = 8;
const GRPC_UNAVAILABLE = 14;

/**
 * Runs `call` again while the server is busy (`serverBusy`), after a jittered pause that
 * doubles from 50 ms to 1 s, at most `attempts` times in all: a big tree's burst of
 * reservations drains in well under a second per call, where failing the model activity
 * would wait out its retry backoff (up to a minute) instead.
 */
export async function whileServerBusy<T>(call: () => Promise<T>, pause: (ms: number) => Promise<void>, attempts = 20): Promise<T> {
  for (let attempt = 1, delay = 50; ; attempt++, delay = Math.min(delay * 2, 1000)) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= attempts || !serverBusy(err)) throw err;
      await pause(Math.round(delay * (0.5 + Math.random())));
    }
  }
}

/** In an activity: a pause its cancellation ends. */
function activityPause(ms: number): Promise<void> {
  return Context.current().sleep(ms);
}

/**
 * A root that is gone has no tree left to share: an agent revived after its tree closed (a
 * client resumed a sub-agent directly) is bounded by its own budget alone (the model
 * activity's `left`), and its charges have nowhere to go.
 */
export function createLedgerClient(client: Client, pause: (ms: number) => Promise<void> = activityPause, gate: RootUpdateGate = processRootGate()): LedgerClient {
  return {
    reserve: (rootId, req) =>
      whileServerBusy(() => gate.run(rootId, () => client.workflow.getHandle(rootId).executeUpdate(reserveTokensUpdate, { args: [req] })), pause).catch((err: unknown): ReserveResult => {
        if (rootGone(err)) return { ok: true, tokens: req.want };
        throw err;
      }),
    charge: (rootId, req) =>
      whileServerBusy(() => gate.run(rootId, () => client.workflow.getHandle(rootId).executeUpdate(chargeTokensUpdate, { args: [req] })), pause).catch((err: unknown) => {
        if (!rootGone(err)) throw err;
        const fields = { rootId, agentId: req.agentId, error: err instanceof Error ? `${err.name}: ${(err.cause as Error | undefined)?.message ?? err.message}` : String(err) };
        // A closed tree is the expected case (an agent resumed after its tree ended: nothing
        // left to share or bound); a root that refused the charge is not.
        if (err instanceof Error && err.name === 'WorkflowNotFoundError') log.info('charge not recorded: the tree is closed', fields);
        else log.warn('charge not recorded: the tree root refused it', fields);
        return false;
      }),
  };
}

/** Asks while the server is busy: about 50 s of pauses, inside the admission's 60 s. */
const ADMIT_BUSY_ATTEMPTS = 55;

export function createTreeActivities(deps: { client: Client; gate?: RootUpdateGate }) {
  const gate = deps.gate ?? processRootGate();
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
        // A local activity of 60 s: pauses of at most a second while the root's updates queue.
        return await whileServerBusy(() => gate.run(input.rootId, () => deps.client.workflow.getHandle(input.rootId).executeUpdate(admitAgentUpdate, { args: [input.request] })), activityPause, ADMIT_BUSY_ATTEMPTS);
      } catch (err) {
        if (rootGone(err)) return { ok: false, reason: `The tree's root ${input.rootId} does not answer: no sub-agent can start.` };
        throw err;
      }
    },
    /** Asks the tree's root where a peer message goes, and has it counted (idempotent by the call's key). */
    async routeMessage(input: { rootId: string; request: RouteRequest }): Promise<RouteResult> {
      try {
        return await whileServerBusy(() => gate.run(input.rootId, () => deps.client.workflow.getHandle(input.rootId).executeUpdate(routeMessageUpdate, { args: [input.request] })), activityPause, ADMIT_BUSY_ATTEMPTS);
      } catch (err) {
        if (rootGone(err)) return { ok: false, reason: `The tree's root ${input.rootId} does not answer: no message can be routed.` };
        throw err;
      }
    },
  };
}
