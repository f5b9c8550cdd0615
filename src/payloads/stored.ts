/**
 * Resolving external-storage references (the codec server's /decode, and reading a run's
 * start input from its history: the client resuming an agent, a worker reading a snapshot).
 * On the wire, a payload over
 * the storage threshold is a small reference; the bytes it names were written after the
 * codecs ran, so they are still encrypted. The codec server's /decode therefore fetches
 * them first and decrypts second (the SDK's own order on retrieval).
 *
 * This is the hook for external payload storage: it does its work whenever the
 * DataConverter from `forkflowDataConverter` carries `externalStorage` (drivers are that
 * module's business), and passes every payload through unchanged otherwise.
 *
 * The Web UI (2.54) calls `/decode?preserveStorageRefs=true`; the codec server resolves
 * references all the same, so the UI shows the stored content inline. Honouring the flag
 * (and a `/download` route for stored blobs) is left to the storage work.
 */
import type { Client } from '@temporalio/client';
import { StorageDriverClaim, type ExternalStorage, type Payload, type PayloadCodec } from '@temporalio/common';
import { decodeReferencePayload, isReferencePayload } from '@temporalio/common/lib/internal-non-workflow';

export class StoredPayloadError extends Error {
  override name = 'StoredPayloadError';
}

/** Replaces each storage reference in `payloads` with the stored payload; order is kept. */
export async function retrieveStored(payloads: Payload[], storage: ExternalStorage | undefined): Promise<Payload[]> {
  if (!storage || !payloads.some(isReferencePayload)) return payloads;
  return Promise.all(
    payloads.map(async (payload) => {
      if (!isReferencePayload(payload)) return payload;
      const ref = decodeReferencePayload(payload);
      const driver = storage.getDriver(ref.driverName);
      if (!driver) throw new StoredPayloadError(`A payload is stored by driver "${ref.driverName}", which this codec server is not configured with (it has: ${storage.drivers.map((d) => d.name).join(', ') || 'none'}).`);
      const [stored] = await driver.retrieve({}, [new StorageDriverClaim(ref.claimData)]);
      if (!stored) throw new StoredPayloadError(`Driver "${ref.driverName}" returned nothing for a stored payload.`);
      return stored;
    }),
  );
}

/**
 * Payloads as history holds them → as the payload converter reads them: stored ones fetched
 * first, then the codecs undone in reverse (they encode in order).
 */
export async function decodeRecorded(payloads: Payload[], dc: { payloadCodecs?: PayloadCodec[]; externalStorage?: ExternalStorage }): Promise<Payload[]> {
  let decoded = await retrieveStored(payloads, dc.externalStorage);
  for (const codec of [...(dc.payloadCodecs ?? [])].reverse()) decoded = await codec.decode(decoded);
  return decoded;
}

/**
 * A run's start input (its first argument), read from the first event of its history alone
 * and decoded as the client's converter would. Undefined when the run has no input, or when
 * `workflowType` is given and the run is of another type (its input is then not decoded).
 * `runId` absent: the workflow's current run.
 */
export async function startInputOf(client: Client, run: { workflowId: string; runId?: string }, workflowType?: string): Promise<unknown> {
  const { history } = await client.workflowService.getWorkflowExecutionHistory({ namespace: client.options.namespace, execution: run, maximumPageSize: 1 });
  const started = history?.events?.[0]?.workflowExecutionStartedEventAttributes;
  const payload = started?.input?.payloads?.[0];
  if (!payload || (workflowType !== undefined && started?.workflowType?.name !== workflowType)) return undefined;
  const converter = client.options.loadedDataConverter;
  const [decoded] = await decodeRecorded([payload], converter);
  return converter.payloadConverter.fromPayload(decoded!);
}
