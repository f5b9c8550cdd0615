/**
 * The shared hashes (src/shared/base/hash.ts) computed with Node's SHA-256: same bytes in, same hex
 * out. The emulator hashes every block of every request (200K-token conversations in the
 * long-agent tests), where the pure-JS hash that workflow code needs costs ~35 ms per MB.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../shared/base/hash';

export const sha256HexNative = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** `chainDigest` of src/shared/base/hash.ts: digest_k = H(digest_{k-1} ‖ H(item_k)). */
export function chainDigestNative(previous: string, item: unknown): string {
  return sha256HexNative(`${previous}:${sha256HexNative(canonicalJson(item))}`);
}
