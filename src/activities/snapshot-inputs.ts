/**
 * A recorded snapshot's conversation and request context, read from its history instead of
 * asked of the workflow. A snapshot run (`snapshotWorkflow`) holds exactly its start input:
 * its conversation is the input's messages and its context is `snapshotContext(input)`. So
 * the first event of its history answers what the two conversation queries would, without a
 * workflow task: a query on a closed run waits for the worker's workflow thread and replays
 * the run there, behind the very siblings that are waiting for the answer.
 *
 * What is read is verified by the caller against the digest and context key it was given
 * (they came from the workflows), so anything unexpected falls back to the queries.
 */
import type { RunRef } from '../shared/prefix/prefix';
import { WORKFLOW_TYPES } from '../shared/wire/constants';
import { cacheSafeParamsSchema, type CacheSafeParams } from '../shared/wire/cache-safe-params';
import { Lru } from './lru';

/**
 * A run's start input when the run is of `workflowType` (else undefined), from the first event
 * of its history, decoded as the deployment's client would: handed in by the worker
 * (src/payloads/stored.ts `startInputOf`).
 */
export type ReadStartInput = (run: RunRef, workflowType: string) => Promise<unknown>;

const key = (run: RunRef) => `${run.workflowId}/${run.runId}`;

export class SnapshotInputs {
  private readonly inflight = new Map<string, Promise<CacheSafeParams | undefined>>();
  /** Runs found not to be snapshots (agents whose prefix others reference): asked once. */
  private readonly notSnapshots = new Lru<true>(4096);

  constructor(private readonly readStartInput: ReadStartInput) {}

  /** The snapshot's input, or undefined when `run` is not a snapshot or its input cannot be read. */
  of(run: RunRef): Promise<CacheSafeParams | undefined> {
    const k = key(run);
    if (this.notSnapshots.get(k)) return Promise.resolve(undefined);
    let pending = this.inflight.get(k);
    if (!pending) {
      pending = this.read(run).catch(() => undefined);
      this.inflight.set(k, pending);
      void pending.finally(() => this.inflight.delete(k));
    }
    return pending;
  }

  private async read(run: RunRef): Promise<CacheSafeParams | undefined> {
    const input = await this.readStartInput(run, WORKFLOW_TYPES.snapshot);
    // Anyone can start a snapshot run, and one whose input its workflow refused still has it
    // in its history: only a valid snapshot is one (its raw objects, as the workflow kept them).
    if (input === undefined || !cacheSafeParamsSchema.safeParse(input).success) {
      this.notSnapshots.set(key(run), true);
      return undefined;
    }
    return input as CacheSafeParams;
  }
}
