/**
 * Inputs from outside, decoded before the workflow task runs, where a failure can still be
 * answered. The SDK (1.24) resolves external-storage references and runs the codecs over the
 * whole activation before the workflow sees it, and converts arguments to values inside the
 * workflow before any interceptor or handler: a payload that fails any of the three steps fails
 * the workflow *task*, which the server retries forever. One signal with a fake
 * `binary/encrypted` payload, a reference to a blob that does not exist, or JSON that does not
 * parse would wedge an agent for good (queries answer FAILED_PRECONDITION, only terminate works).
 *
 * So the worker (src/worker/inbound-guard-worker.ts) hands every activation here first. For the
 * payloads anyone with access to the namespace can write — start arguments, memo, and the
 * headers and arguments of signals, updates and queries — each is resolved, decrypted and
 * converted now. One that decodes is put back decoded (the SDK then passes it through: it is
 * neither a reference nor encrypted); one that cannot is replaced by a plain stand-in object
 * naming why (src/shared/undecodable.ts), which every handler's validation refuses: a signal is
 * dropped with a logged reason (`status.rejectedSignals`), an update is rejected, a query
 * fails, a start fails as invalid input. A header that cannot be decoded is dropped.
 *
 * Payloads the workflow's own commands produced (activity and child results) are left to the
 * SDK: a failure there is this deployment's own fault (a key or blob folder missing), which a
 * retry after the fix outlasts.
 *
 * Only failures that no retry can change become stand-ins — a payload is decided the same way
 * on every replay: bytes that do not decrypt (an unknown key id counts: keys are added to every
 * reader before any writer uses them, see README "Encryption"), a reference that is malformed
 * or names a blob that is not there. A storage that cannot be reached right now is thrown, and
 * the workflow task is retried as the SDK would have. (So a worker must see the deployment's
 * blob folder or bucket: one that does not refuses large messages and starts as "not found".)
 */
import { ValueError, type LoadedDataConverter, type Payload } from '@temporalio/common';
import { decodeReferencePayload, isReferencePayload } from '@temporalio/common/lib/internal-non-workflow';
import { StorageDriverClaim } from '@temporalio/common';
import type { coresdk, temporal } from '@temporalio/proto';
import { jsonTextDepth, MAX_INPUT_CHARS, MAX_JSON_DEPTH } from '../shared/limits';
import { undecodable } from '../shared/undecodable';

/** Decoded payloads past this size are refused before anything parses them. */
export const MAX_INBOUND_BYTES = 2 * MAX_INPUT_CHARS;

type Activation = coresdk.workflow_activation.IWorkflowActivation;
type Payloads = Payload[] | null | undefined;
type Headers = Record<string, Payload> | null | undefined;
type Failure = temporal.api.failure.v1.IFailure;

/** A payload no retry will decode, with the reason (no content of the payload in it). */
class Undecodable extends Error {}

/** Errors of a read that will fail the same way every time (by name: the S3 driver is loaded only when used). */
const FOR_GOOD = new Set(['BlobNotFoundError', 'InvalidBlobError', 'StoredPayloadError', 'S3ClaimError', 'NoSuchKey', 'NotFound', 'ZodError', 'PayloadDecryptionError']);

function forGood(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof ValueError || e instanceof Undecodable || FOR_GOOD.has(e.name)) return true;
    if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return true;
  }
  return false;
}

const encodingOf = (p: Payload): string => (p.metadata?.encoding ? Buffer.from(p.metadata.encoding).toString('utf8') : '');
const sizeOf = (p: Payload): number => (p.data?.length ?? 0) + Object.values(p.metadata ?? {}).reduce((n, v) => n + (v?.length ?? 0), 0);

/** Resolves a reference (if it is one) with the worker's storage. */
async function retrieved(payload: Payload, dc: LoadedDataConverter): Promise<Payload> {
  if (!isReferencePayload(payload)) return payload;
  const storage = dc.externalStorage;
  if (!storage) throw new Undecodable('it refers to external storage, which this worker does not use');
  let ref;
  try {
    ref = decodeReferencePayload(payload);
  } catch {
    throw new Undecodable('it is a malformed external-storage reference');
  }
  const driver = storage.getDriver(ref.driverName);
  if (!driver) throw new Undecodable(`it is stored by driver "${ref.driverName.slice(0, 100)}", which this worker does not have`);
  let stored: Payload | undefined;
  try {
    [stored] = await driver.retrieve({}, [new StorageDriverClaim(ref.claimData)]);
  } catch (err) {
    // The error's kind only: its message names this worker's folders and buckets.
    if (forGood(err)) throw new Undecodable(`its stored blob cannot be read (${err instanceof Error ? err.name : 'error'})`);
    throw err;
  }
  if (!stored) throw new Undecodable('its storage driver returned nothing for it');
  return stored;
}

/** The first line of an error message, short: our own errors name ids and digests, never content. */
function messageOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
}

/** Storage, then the codecs (in reverse), then the payload converter: the SDK's own order. */
async function decoded(payload: Payload, dc: LoadedDataConverter): Promise<Payload> {
  let p: Payload | undefined = await retrieved(payload, dc);
  try {
    for (const codec of [...dc.payloadCodecs].reverse()) if (p) [p] = await codec.decode([p]);
  } catch (err) {
    throw new Undecodable(`it cannot be decrypted (${messageOf(err)})`);
  }
  if (!p) throw new Undecodable('a codec returned nothing for it');
  if (sizeOf(p) > MAX_INBOUND_BYTES) throw new Undecodable(`it is larger than ${MAX_INBOUND_BYTES} bytes`);
  const encoding = encodingOf(p);
  if (encoding === 'json/plain' && p.data && jsonTextDepth(p.data, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new Undecodable(`it is nested deeper than ${MAX_JSON_DEPTH} levels (MAX_JSON_DEPTH)`);
  }
  try {
    dc.payloadConverter.fromPayload(p);
  } catch {
    throw new Undecodable(`it is not a readable "${encoding.slice(0, 60) || 'unknown'}" payload`);
  }
  return p;
}

/** The payload decoded, or the stand-in when it cannot be; a passing storage outage is thrown. */
async function guarded(payload: Payload, dc: LoadedDataConverter, what: string, refused: (what: string, reason: string) => void): Promise<Payload> {
  try {
    return await decoded(payload, dc);
  } catch (err) {
    if (!(err instanceof Undecodable)) throw err;
    refused(what, err.message);
    return dc.payloadConverter.toPayload(undecodable(err.message));
  }
}

async function guardList(list: Payloads, dc: LoadedDataConverter, what: string, refused: Refused): Promise<void> {
  if (!list) return;
  for (let i = 0; i < list.length; i++) list[i] = await guarded(list[i]!, dc, what, refused);
}

/** Headers that do not decode are dropped (interceptors read them as plain values). */
async function guardHeaders(headers: Headers, dc: LoadedDataConverter, what: string, refused: Refused): Promise<void> {
  if (!headers) return;
  for (const [key, payload] of Object.entries(headers)) {
    try {
      headers[key] = await decoded(payload, dc);
    } catch (err) {
      if (!(err instanceof Undecodable)) throw err;
      refused(`${what} header ${key.slice(0, 100)}`, err.message);
      delete headers[key];
    }
  }
}

/** A failure carried into a run at its start: any payload of it that does not decode replaces it whole. */
async function guardFailure(failure: Failure | null | undefined, dc: LoadedDataConverter): Promise<Failure | null | undefined> {
  if (!failure) return failure;
  try {
    for (let f: Failure | null | undefined = failure, depth = 0; f && depth < 20; f = f.cause, depth++) {
      if (f.encodedAttributes) f.encodedAttributes = await decoded(f.encodedAttributes, dc);
      const details = f.applicationFailureInfo?.details?.payloads;
      if (details) for (let i = 0; i < details.length; i++) details[i] = await decoded(details[i]!, dc);
    }
    return failure;
  } catch (err) {
    if (!(err instanceof Undecodable)) throw err;
    return { message: `A failure carried into this run could not be decoded: ${err.message}`, source: 'forkflow' };
  }
}

type Refused = (what: string, reason: string) => void;

/**
 * Decodes, in place, the payloads of `activation` that callers outside the workflow wrote, and
 * replaces those that cannot be decoded by a stand-in. `refused` hears of each one (for a log
 * line). Throws only when storage cannot be reached (the task is then retried).
 */
export async function guardActivation(activation: Activation, dc: LoadedDataConverter, refused: Refused = () => undefined): Promise<void> {
  for (const job of activation.jobs ?? []) {
    if (job.initializeWorkflow) {
      const init = job.initializeWorkflow;
      await guardList(init.arguments, dc, 'start input', refused);
      await guardHeaders(init.headers, dc, 'start', refused);
      const memo = init.memo?.fields;
      if (memo) for (const key of Object.keys(memo)) memo[key] = await guarded(memo[key]!, dc, `memo ${key.slice(0, 100)}`, refused);
      await guardList(init.lastCompletionResult?.payloads, dc, 'last completion result', refused);
      init.continuedFailure = await guardFailure(init.continuedFailure, dc);
    } else if (job.signalWorkflow) {
      const name = job.signalWorkflow.signalName ?? '';
      await guardList(job.signalWorkflow.input, dc, `signal ${name}`, refused);
      await guardHeaders(job.signalWorkflow.headers, dc, `signal ${name}`, refused);
    } else if (job.doUpdate) {
      const name = job.doUpdate.name ?? '';
      await guardList(job.doUpdate.input, dc, `update ${name}`, refused);
      await guardHeaders(job.doUpdate.headers, dc, `update ${name}`, refused);
    } else if (job.queryWorkflow) {
      const name = job.queryWorkflow.queryType ?? '';
      await guardList(job.queryWorkflow.arguments, dc, `query ${name}`, refused);
      await guardHeaders(job.queryWorkflow.headers, dc, `query ${name}`, refused);
    }
  }
}
