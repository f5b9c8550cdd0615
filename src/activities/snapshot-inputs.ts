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
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import type { RunRef } from '../shared/activity-io';
import { WORKFLOW_TYPES } from '../shared/constants';
import type { CacheSafeParams } from '../shared/fork-input';
import { Lru } from './lru';

/**
 * Payloads as history holds them → as the payload converter reads them (external storage
 * resolved, codecs undone): the deployment's, handed in by the worker (src/payloads/stored.ts
 * `decodeRecorded` with the client's converter).
 */
export type ReadRecorded = (payloads: Payload[]) => Promise<Payload[]>;

const key = (run: RunRef) => `${run.workflowId}/${run.runId}`;

export class SnapshotInputs {
  private readonly inflight = new Map<string, Promise<CacheSafeParams | undefined>>();
  /** Runs found not to be snapshots (agents whose prefix others reference): asked once. */
  private readonly notSnapshots = new Lru<true>(4096);

  constructor(
    private readonly client: Client,
    private readonly readRecorded: ReadRecorded,
  ) {}

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
    const { history } = await this.client.workflowService.getWorkflowExecutionHistory({
      namespace: this.client.options.namespace,
      execution: { workflowId: run.workflowId, runId: run.runId },
      maximumPageSize: 1,
    });
    const started = history?.events?.[0]?.workflowExecutionStartedEventAttributes;
    const payload = started?.input?.payloads?.[0];
    if (started?.workflowType?.name !== WORKFLOW_TYPES.snapshot || !payload) {
      this.notSnapshots.set(key(run), true);
      return undefined;
    }
    const [decoded] = await this.readRecorded([payload]);
    return this.client.options.loadedDataConverter.payloadConverter.fromPayload<CacheSafeParams>(decoded!);
  }
}
