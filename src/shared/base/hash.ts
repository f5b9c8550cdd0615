/**
 * Canonical JSON and SHA-256, pure JS so the same bytes and hashes come out in workflow
 * code, activities, other processes and replays.
 */
import { sha256 } from '@noble/hashes/sha256';
import { bytesToHex } from '@noble/hashes/utils';

/**
 * JSON with object keys sorted at every level and no whitespace. `undefined` members are
 * dropped (as JSON.stringify does), so optional-but-absent fields do not change a hash.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    return s === undefined ? 'null' : s;
  }
  if (Array.isArray(value)) {
    return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  }
  const entries = Object.keys(value as Record<string, unknown>)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

/** UTF-8 encoding without relying on Buffer (absent in the workflow sandbox). */
export function utf8Bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8Bytes(text)));
}

/** SHA-256 (hex) of the canonical JSON of a value. */
export function hashJson(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/** Chains a running digest with the next item: digest_k = H(digest_{k-1} ‖ H(item_k)). */
export function chainDigest(previous: string, item: unknown): string {
  return sha256Hex(`${previous}:${hashJson(item)}`);
}

export const EMPTY_DIGEST = sha256Hex('forkflow:conversation:v1');
