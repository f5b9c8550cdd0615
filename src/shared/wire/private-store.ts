/**
 * The contract between a private store directory and the stores that keep model calls in it
 * (the worker's response store, the gateway's call store): the directory, checked to be
 * this user's alone (src/gateway/private-dir.ts opens it), the secret that authenticates
 * every entry, and, when payload encryption keys are set, the sealer that encrypts entries
 * with the payload codec. Pure (no Node builtins): the MAC is @noble/hashes' HMAC-SHA256.
 */
import { hmac } from '@noble/hashes/hmac';
import { sha256 } from '@noble/hashes/sha256';
import { bytesToHex } from '@noble/hashes/utils';

/** Encrypts and decrypts entry bodies (the payload codec's AES-256-GCM envelope). */
export interface StoreSealer {
  seal(plain: Uint8Array): Promise<Uint8Array>;
  /** Rejects when the bytes were not sealed with a configured key, or were changed. */
  open(sealed: Uint8Array): Promise<Uint8Array>;
}

/** A directory only this user may use, with the key its entries are authenticated with. */
export interface PrivateStore {
  /** Canonical path, mode 0700, owned by this user. */
  dir: string;
  /** 32 random bytes from the directory's key file (0600): an entry without a valid MAC under it is never used. */
  macKey: Uint8Array;
  /** Present when payload encryption keys are configured: entries are encrypted. */
  sealer?: StoreSealer;
}

/**
 * An entry as it lies on disk: its body (sealed when the store has a sealer) and a MAC over
 * the entry's identity and body under the store's key. Versioned like all serialized state.
 */
export interface StoredEntry {
  v: 2;
  /** `plain`: the body is JSON text; `sealed`: the sealer's ciphertext. */
  enc: 'plain' | 'sealed';
  /** The body, base64. */
  body: string;
  /** HMAC-SHA256 (hex) over identity ‖ NUL ‖ enc ‖ NUL ‖ body bytes. */
  mac: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function entryMac(store: PrivateStore, identity: string, enc: StoredEntry['enc'], body: Uint8Array): string {
  const head = encoder.encode(`${identity}\0${enc}\0`);
  const message = new Uint8Array(head.length + body.length);
  message.set(head);
  message.set(body, head.length);
  return bytesToHex(hmac(sha256, store.macKey, message));
}

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function fromBase64(text: string): Uint8Array {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/**
 * Seals `value` (JSON) as an entry bound to `identity` — the store's name for what the entry
 * answers (a call's key, the digest of its request): an entry moved to another name, planted
 * without the key, or changed, fails `openEntry`.
 */
export async function sealEntry(store: PrivateStore, identity: string, value: unknown): Promise<StoredEntry> {
  const plain = encoder.encode(JSON.stringify(value));
  const enc = store.sealer ? 'sealed' : 'plain';
  const body = store.sealer ? await store.sealer.seal(plain) : plain;
  return { v: 2, enc, body: toBase64(body), mac: entryMac(store, identity, enc, body) };
}

/** The value of an entry bound to `identity`, or undefined when it is malformed, forged, moved or unreadable. */
export async function openEntry(store: PrivateStore, identity: string, raw: unknown): Promise<unknown> {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const e = raw as Partial<StoredEntry>;
  if (e.v !== 2 || (e.enc !== 'plain' && e.enc !== 'sealed') || typeof e.body !== 'string' || typeof e.mac !== 'string') return undefined;
  let body: Uint8Array;
  try {
    body = fromBase64(e.body);
  } catch {
    return undefined;
  }
  const expected = entryMac(store, identity, e.enc, body);
  // Constant time over equal-length hex strings.
  if (expected.length !== e.mac.length) return undefined;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ e.mac.charCodeAt(i);
  if (diff !== 0) return undefined;
  if (e.enc === 'sealed' && !store.sealer) return undefined;
  try {
    const plain = e.enc === 'sealed' ? await store.sealer!.open(body) : body;
    return JSON.parse(decoder.decode(plain)) as unknown;
  } catch {
    return undefined;
  }
}
