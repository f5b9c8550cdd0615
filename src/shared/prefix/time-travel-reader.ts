/**
 * Reading an agent's runs for `resolveTurnPoint` (./time-travel.ts) through a Temporal client:
 * one implementation for the two places that resolve points — forkflow's client, and the
 * activity that resolves a fork input's `from` for other SDKs. Only the client's type is
 * imported; the client (and how a start input is decoded) is handed in.
 */
import type { Client } from '@temporalio/client';
import { forkResultOf } from '../wire/failures';
import { turnPointQuery } from '../wire/messages';
import { prefixRefSchema, type RunRef } from './prefix';
import type { ForkResult } from '../wire/status';
import type { PointReader, RunEnd } from './time-travel';

/** A run's start input, decoded as the deployment's client decodes it (src/payloads/stored.ts `startInputOf`). */
export type StartInputReader = (run: RunRef) => Promise<unknown>;

/** No such run (or a run id that is not one at all): gRPC NOT_FOUND or INVALID_ARGUMENT. */
function missing(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'WorkflowNotFoundError') return true;
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 5 || code === 3) return true;
  }
  return false;
}

/** The end a result records: its turns, where its conversation ends, what it spent. */
export function runEndOf(result: ForkResult | undefined): RunEnd | undefined {
  const ref = prefixRefSchema.safeParse(result?.conversation);
  if (!result || !ref.success || typeof result.turns !== 'number') return undefined;
  return { turns: result.turns, ref: ref.data, usage: result.usage, toolUses: result.toolUses };
}

/** A closed run's result, also when it failed (a ForkFailed carries its result). */
export async function closedResult(client: Client, run: RunRef): Promise<ForkResult | undefined> {
  const handle = client.workflow.getHandle(run.workflowId, run.runId);
  try {
    return (await handle.result()) as ForkResult;
  } catch (err) {
    return forkResultOf((err as { cause?: unknown }).cause);
  }
}

export function temporalPointReader(client: Client, startInput: StartInputReader): PointReader {
  return {
    async describe(workflowId, runId) {
      try {
        const d = await client.workflow.getHandle(workflowId, runId).describe();
        return { runId: d.runId, workflowType: d.type, running: d.status.name === 'RUNNING' };
      } catch (err) {
        if (missing(err)) return undefined;
        throw err;
      }
    },
    startInput,
    ask: (run, turn) => client.workflow.getHandle(run.workflowId, run.runId).query(turnPointQuery, turn === undefined ? {} : { turn }),
    async ended(run) {
      const status = (await client.workflow.getHandle(run.workflowId, run.runId).describe()).status.name;
      // A continued-as-new run has no result of its own (its handle would follow to the next run's).
      if (status !== 'COMPLETED' && status !== 'FAILED') return undefined;
      return runEndOf(await closedResult(client, run));
    },
  };
}
