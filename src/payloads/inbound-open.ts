/**
 * Reading an inbound payload as the SDK would — external storage first, then the codecs — for
 * the inbound guard (inbound.ts, inbound-results.ts), which must also know whether it came
 * encrypted and what it was bound to, and tell a payload that will never decode (`Undecodable`:
 * the same on every replay) from a storage that cannot be reached right now (thrown as is).
 */
import { ValueError, type LoadedDataConverter, type Payload } from '@temporalio/common';
import { decodeReferencePayload, isReferencePayload } from '@temporalio/common/lib/internal-non-workflow';
import { StorageDriverClaim } from '@temporalio/common';
import { EncryptionCodec, isEncrypted } from './codec';

/** A payload no retry will decode, with the reason (no content of the payload in it). */
export class Undecodable extends Error {}

/** Errors of a read that will fail the same way every time (by name: the S3 driver is loaded only when used). */
const FOR_GOOD = new Set(['BlobNotFoundError', 'InvalidBlobError', 'StoredPayloadError', 'S3ClaimError', 'NoSuchKey', 'NotFound', 'ZodError', 'PayloadDecryptionError']);

function forGood(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof ValueError || e instanceof Undecodable || FOR_GOOD.has(e.name)) return true;
    if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return true;
  }
  return false;
}


/** Resolves a reference (if it is one) with the worker's storage. */
export async function retrieved(payload: Payload, dc: LoadedDataConverter): Promise<Payload> {
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
export function messageOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
}

/** A payload decoded, and whether it came encrypted (and bound to what: binding.ts). */
export interface Opened {
  payload: Payload;
  encrypted: boolean;
  binding?: string;
}

/**
 * Storage, then the codecs (in reverse), as the SDK would: the encryption codec says besides
 * whether the payload was encrypted and what it was bound to.
 */
export async function opened(payload: Payload, dc: LoadedDataConverter): Promise<Opened> {
  let p: Payload | undefined = await retrieved(payload, dc);
  let encrypted = false;
  let binding: string | undefined;
  try {
    for (const codec of [...dc.payloadCodecs].reverse()) {
      if (!p) break;
      if (codec instanceof EncryptionCodec && isEncrypted(p)) {
        ({ payload: p, binding } = codec.open(p));
        encrypted = true;
      } else [p] = await codec.decode([p]);
    }
  } catch (err) {
    throw new Undecodable(`it cannot be decrypted (${messageOf(err)})`);
  }
  if (!p) throw new Undecodable('a codec returned nothing for it');
  return { payload: p, encrypted, ...(binding ? { binding } : {}) };
}

/** `payload` with a reference resolved; as it is when the reference cannot be read (the SDK then fails as before). */
export async function retrievedOrSame(payload: Payload, dc: LoadedDataConverter): Promise<Payload> {
  try {
    return await retrieved(payload, dc);
  } catch (err) {
    if (err instanceof Undecodable) return payload;
    throw err;
  }
}
