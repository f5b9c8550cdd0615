/**
 * Time travel from inside a fork (src/shared/prefix/time-travel.ts): resolving a fork input's `from`
 * (an agent, a turn, a run) to a reference, for SDKs without forkflow's client, and reading
 * the parent's request context that a counterfactual fork builds its own from. Both record a
 * small result in the fork's history: a reference, or a context (system prompt and tools) —
 * never the conversation.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { RunRef } from '../shared/prefix/prefix';
import { WORKFLOW_TYPES } from '../shared/wire/constants';
import { FAILURE } from '../shared/wire/failures';
import { hashJson } from '../shared/base/hash';
import type { RequestContext } from '../shared/wire/messages';
import { isForkPointError, resolveTurnPoint, type ForkPoint, type TurnPoint } from '../shared/prefix/time-travel';
import { temporalPointReader } from '../shared/prefix/time-travel-reader';
import type { ConversationSource } from './conversation';
import type { ReadStartInput } from './snapshot-inputs';

export interface TimeTravelDeps {
  client: Client;
  conversations: ConversationSource;
  /** How a run's start input is read (the worker's converter); default: the client's payload converter, without codecs. */
  readStartInput?: ReadStartInput;
}

/** The first event's input as the client's own payload converter reads it (no codecs: set `readStartInput` for those). */
async function plainStartInput(client: Client, run: RunRef): Promise<unknown> {
  const { history } = await client.workflowService.getWorkflowExecutionHistory({ namespace: client.options.namespace, execution: run, maximumPageSize: 1 });
  const payload = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  return payload ? client.options.loadedDataConverter.payloadConverter.fromPayload(payload) : undefined;
}

export function createTimeTravelActivities(deps: TimeTravelDeps) {
  const startInput = (run: RunRef) => (deps.readStartInput ? deps.readStartInput(run, WORKFLOW_TYPES.fork) : plainStartInput(deps.client, run));
  return {
    /** The point `from` names. A point that cannot be had fails the fork at once (non-retryable), saying why. */
    async resolveForkPoint(point: ForkPoint): Promise<TurnPoint> {
      try {
        return await resolveTurnPoint(temporalPointReader(deps.client, startInput), point.agentId, {
          ...(point.turn !== undefined ? { turn: point.turn } : {}),
          ...(point.runId ? { runId: point.runId } : {}),
          forkWorkflowType: WORKFLOW_TYPES.fork,
        });
      } catch (err) {
        if (isForkPointError(err)) throw ApplicationFailure.create({ type: FAILURE.invalidForkPoint, message: err.message, nonRetryable: true, details: [{ problem: err.problem }] });
        throw err;
      }
    },

    /** The request context `from` holds, proven by its hash (a counterfactual fork's starting point). */
    async readRequestContext(input: { from: RunRef; contextKey: string }): Promise<RequestContext> {
      const context = await deps.conversations.context(input.from, input.contextKey);
      if (hashJson(context) !== input.contextKey) throw new Error(`the request context of ${input.from.workflowId} does not match its key ${input.contextKey}; reading it again`);
      return context;
    },
  };
}
