/**
 * The shared chained digest (src/shared/hash.ts), computed with Node's native SHA-256. Same
 * bytes in, same hex out: the workflow compares what activities measure with its own pure-JS
 * digests. Activities hash whole requests every turn (cache-break facts), where the pure-JS
 * hash costs ~35 ms per MB and the native one a few.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../shared/hash';

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** `chainDigest` of src/shared/hash.ts, natively: digest_k = H(digest_{k-1} ‖ H(item_k)). */
export function chainDigestNative(previous: string, item: unknown): string {
  return sha256Hex(`${previous}:${sha256Hex(canonicalJson(item))}`);
}
