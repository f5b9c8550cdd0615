/**
 * Encryption keys for the payload codec, from the environment. Two sources, exactly one used:
 *
 * - `FORKFLOW_ENCRYPTION_KEYS`: `id:base64key[,id:base64key…]`, handy for one-off runs and
 *   containers whose secrets arrive as env vars;
 * - `FORKFLOW_ENCRYPTION_KEY_FILE`: a JSON file `{ "v": 1, "keys": [{ "id", "key" }, …] }`,
 *   for secrets mounted as files (the value never shows in `ps` or a crash dump of the env).
 *
 * The first key encrypts; every listed key decrypts. Rotation: put the new key first and
 * keep the old ones listed until no retained history holds payloads they encrypted.
 * Neither set: no encryption. Both set, or anything malformed: one `EncryptionKeyError`
 * that names the variable and what to fix — a half-read key list must never start a worker
 * that would write plaintext or unreadable payloads.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { plainIssues } from '../shared/base/plain-issues';
import { envSetting } from '../shared/wire/env-settings';

/** AES-256: 32 bytes of key material. */
export const KEY_BYTES = 32;

export interface EncryptionKey {
  /** Written to each payload's `encryption-key-id`, so a reader picks the right key. */
  id: string;
  key: Buffer;
}

/** The keys in order: `[0]` encrypts, all decrypt. */
export interface KeyRing {
  keys: EncryptionKey[];
}

/** FORKFLOW_ENCRYPTION_KEYS or FORKFLOW_ENCRYPTION_KEY_FILE is malformed (or both are set): the message says which entry. */
export class EncryptionKeyError extends Error {
  override name = 'EncryptionKeyError';
}

export function isEncryptionKeyError(err: unknown): err is EncryptionKeyError {
  return err instanceof EncryptionKeyError;
}

const keyIdSchema = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'a key id is 1–64 characters of A–Z a–z 0–9 . _ -');
const keyMaterialSchema = z
  .string()
  .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'a key is standard base64 (e.g. `openssl rand -base64 32`)')
  .refine((b64) => Buffer.from(b64, 'base64').length === KEY_BYTES, `a key is ${KEY_BYTES} bytes (44 base64 characters)`);
const keyEntrySchema = z.object({ id: keyIdSchema, key: keyMaterialSchema }).strict();
const keyListSchema = z
  .array(keyEntrySchema)
  .min(1, 'at least one key')
  .refine((keys) => new Set(keys.map((k) => k.id)).size === keys.length, 'key ids must be unique');

/** The key file's format, versioned like every serialized thing in forkflow. */
export const keyFileSchema = z.object({ v: z.literal(1), keys: keyListSchema }).strict();

function toRing(entries: z.infer<typeof keyListSchema>): KeyRing {
  return { keys: entries.map((e) => ({ id: e.id, key: Buffer.from(e.key, 'base64') })) };
}

function fail(source: string, issues: string[]): never {
  throw new EncryptionKeyError(`${source}: ${issues.join('; ')}. Keys are listed newest first; generate one with \`openssl rand -base64 32\`.`);
}

/** `id:base64[,id:base64…]`; the split is done here so zod sees one entry per key. */
function parseKeyList(value: string): KeyRing {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  // Never echo an entry into an error message: it may be key material. Say which one is wrong.
  const bare = items.findIndex((item) => !item.includes(':'));
  if (bare >= 0) fail('FORKFLOW_ENCRYPTION_KEYS (id:base64key, comma-separated)', [`entry ${bare + 1} has no "id:" before its key`]);
  const entries = items.map((item) => ({ id: item.slice(0, item.indexOf(':')), key: item.slice(item.indexOf(':') + 1) }));
  const parsed = keyListSchema.safeParse(entries);
  if (!parsed.success) fail('FORKFLOW_ENCRYPTION_KEYS (id:base64key, comma-separated)', plainIssues(parsed.error, 'keys'));
  return toRing(parsed.data);
}

function parseKeyFile(path: string): KeyRing {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    fail(`FORKFLOW_ENCRYPTION_KEY_FILE (${path})`, [`cannot read it as JSON (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the text around the error, which may be key material.
    fail(`FORKFLOW_ENCRYPTION_KEY_FILE (${path})`, ['cannot read it as JSON (it is not JSON: a bare key belongs in FORKFLOW_ENCRYPTION_KEYS, a file holds { "v": 1, "keys": [...] })']);
  }
  const parsed = keyFileSchema.safeParse(raw);
  if (!parsed.success) fail(`FORKFLOW_ENCRYPTION_KEY_FILE (${path}, { "v": 1, "keys": [{ "id", "key" }] })`, plainIssues(parsed.error, 'file'));
  return toRing(parsed.data.keys);
}

/** The key ring the environment configures, or `undefined` when encryption is off. */
export function loadKeyRing(env: NodeJS.ProcessEnv = process.env): KeyRing | undefined {
  const list = envSetting(env, 'FORKFLOW_ENCRYPTION_KEYS')?.trim();
  const file = envSetting(env, 'FORKFLOW_ENCRYPTION_KEY_FILE')?.trim();
  if (list && file) throw new EncryptionKeyError('Both FORKFLOW_ENCRYPTION_KEYS and FORKFLOW_ENCRYPTION_KEY_FILE are set: set one of them, so there is one list of keys.');
  if (list) return parseKeyList(list);
  if (file) return parseKeyFile(file);
  return undefined;
}
