/**
 * The shared chained digest (src/shared/base/hash.ts), computed with Node's native SHA-256. Same
 * bytes in, same hex out: the workflow compares what activities measure with its own pure-JS
 * digests. Activities hash whole requests every turn (cache-break facts), where the pure-JS
 * hash costs ~35 ms per MB and the native one a few.
 */
import { createHash } from 'node:crypto';
import type { MessageParam } from '../shared/messages-api/anthropic';
import { unmarkedMessage } from '../shared/prefix/cache-break';
import { canonicalJson } from '../shared/base/hash';

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** `chainDigest` of src/shared/base/hash.ts, natively: digest_k = H(digest_{k-1} ‖ H(item_k)). */
export function chainDigestNative(previous: string, item: unknown): string {
  return sha256Hex(`${previous}:${sha256Hex(canonicalJson(item))}`);
}

/** Each message object's own hash (of it without cache markers), for as long as the object lives. */
const messageHashes = new WeakMap<MessageParam, string>();

/**
 * The request-facts step (src/shared/prefix/cache-break.ts `MessageChain`), natively, with each
 * message's own hash kept by object. A request's messages are mostly the very objects of the
 * worker's cached conversation, turn after turn (only the few that carry a cache marker, or
 * were merged, are copies), so a turn hashes what is new instead of the whole conversation
 * again: 23 ms per MB of conversation per turn before. Messages are never changed in place
 * (the cached conversation's chained digests rely on that too).
 */
export function chainUnmarkedNative(previous: string, message: MessageParam): string {
  let own = messageHashes.get(message);
  if (own === undefined) {
    own = sha256Hex(canonicalJson(unmarkedMessage(message)));
    messageHashes.set(message, own);
  }
  return sha256Hex(`${previous}:${own}`);
}
