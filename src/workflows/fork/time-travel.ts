/**
 * Time travel inside a fork's first run (src/shared/prefix/time-travel.ts): before set-up, the point
 * a `from` input names is resolved (an activity; its result is the reference, a few hundred
 * bytes, whatever the turn) and a counterfactual fork reads its parent's request context;
 * after set-up, the fork's lineage is recorded for status, result and search attributes. A
 * retried tree root takes its ledger back to the turn it retries from.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { FAILURE, failure } from '../../shared/wire/failures';
import type { CarriedState } from '../../shared/wire/carried-state';
import type { ForkInput } from '../../shared/wire/fork-input';
import type { RequestContext } from '../../shared/wire/messages';
import { retryRoot } from '../../shared/tree/tree-ledger-rules';
import { lendsShares, retrySharesOf } from '../../shared/tree/tree-shares';
import { timeTravel } from '../activities';
import type { ForkAgent } from './agent';
import type { ForkSetup } from './setup';

export interface Prepared {
  /** The input set-up works from: with `parentRef` and `origin` when `from` named a point. */
  input: ForkInput;
  parentContext?: RequestContext;
}

/** Why the point could not be had, from the activity's failure. */
function pointFailure(err: unknown): ApplicationFailure | undefined {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === FAILURE.invalidForkPoint) {
    return failure(FAILURE.invalidForkPoint, err.cause.message, { issues: [err.cause.message] });
  }
  return undefined;
}

/** Resolves `from` and reads a counterfactual parent's context; nothing (no command) for any other input. */
export async function prepareTimeTravel(agent: ForkAgent): Promise<Prepared> {
  let input = agent.input;
  // A continuing run (continue-as-new, resume, retry) is past its set-up: it has its reference.
  if (input.continuation) return { input };
  if (input.from) {
    agent.doing('resolving its fork point');
    try {
      const point = await timeTravel.resolveForkPoint(input.from);
      input = { ...input, parentRef: point.ref, origin: { agentId: point.agentId, runId: point.runId, turn: point.turn } };
    } catch (err) {
      throw pointFailure(err) ?? err;
    }
  }
  const ref = input.parentRef;
  if (!input.counterfactual || !ref) {
    agent.doing(undefined);
    return { input };
  }
  agent.doing("reading its parent's request context");
  const parentContext = await timeTravel.readRequestContext({ from: ref.context.from, contextKey: ref.context.contextKey });
  agent.doing(undefined);
  return { input, parentContext };
}

/**
 * What status and results say of where the agent came from (set once, after set-up): a first
 * run from its input and set-up, a continuing run from what the run before it carried (and the
 * retry mark, on the run that retries).
 */
export function recordLineage(agent: ForkAgent, input: ForkInput, setup: ForkSetup, carried?: CarriedState): void {
  const continuing = input.continuation !== undefined;
  const before = carried?.lineage;
  const retry = continuing ? (input.retry ?? before?.retry) : undefined;
  const counterfactual = setup.changed ? { changed: setup.changed } : continuing ? before?.counterfactual : undefined;
  agent.lineage = {
    ...(input.origin ? { origin: input.origin } : {}),
    ...(counterfactual ? { counterfactual } : {}),
    ...((input.replay && !continuing) || (continuing && before?.replay) ? { replay: true } : {}),
    ...(retry ? { retry } : {}),
  };
}

/** A retried tree root: its ledger goes on from the retried turn, with the new budget (tree-ledger.ts `retryRoot`). */
export function rewindLedgerForRetry(agent: ForkAgent): void {
  const retry = agent.input.retry;
  if (!retry || !agent.input.continuation || !agent.book || agent.book.rootId !== agent.agentId) return;
  retryRoot(agent.book, retry.fromTurn, agent.input.budget.maxTokens);
  if (lendsShares(agent.book)) retrySharesOf(agent.book);
}
