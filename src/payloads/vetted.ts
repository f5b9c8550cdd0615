/**
 * A mark, known only to this process, on payloads the inbound guard (inbound.ts) has already
 * judged. With keys, the encryption codec refuses a plaintext payload in an activity's
 * context (an activity input, heartbeat or result: a holder of the keys writes those
 * encrypted, so a plaintext one comes from a worker or client without them). The guard
 * decodes activity results itself, before the SDK does, and hands on the ones it accepted as
 * plaintext; this mark tells the codec so. It is a random value drawn per process and never
 * written anywhere: a payload from outside cannot carry it.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Payload } from '@temporalio/common';

/** The metadata key of the mark (removed again by the codec). */
export const VETTED_METADATA = 'forkflow-vetted';

const SECRET = randomBytes(32);

/** `payload` with this process's mark. */
export function vetted(payload: Payload): Payload {
  return { ...payload, metadata: { ...payload.metadata, [VETTED_METADATA]: SECRET } };
}

/** `payload` without the mark, and whether it carried this process's own. */
export function unvetted(payload: Payload): { payload: Payload; vetted: boolean } {
  const mark = payload.metadata?.[VETTED_METADATA];
  if (!mark) return { payload, vetted: false };
  const metadata = { ...payload.metadata };
  delete metadata[VETTED_METADATA];
  const ours = mark.length === SECRET.length && timingSafeEqual(Buffer.from(mark), SECRET);
  return { payload: { ...payload, metadata }, vetted: ours };
}
