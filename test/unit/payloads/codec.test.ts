/**
 * The encryption codec and its keys: a round trip through the real default payload
 * converter, the envelope's layout, rotation, a wrong or missing key, altered bytes, plain
 * payloads passing through, and the key configuration's one clear error.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { EncryptionCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA, PayloadDecryptionError } from '../../../src/payloads/codec';
import { encrypts, forkflowDataConverter } from '../../../src/payloads/data-converter';
import { EncryptionKeyError, loadKeyRing, type KeyRing } from '../../../src/payloads/keys';

const key = () => randomBytes(32);
const ring = (...ids: string[]): KeyRing => ({ keys: ids.map((id) => ({ id, key: key() })) });
const text = (b: Uint8Array | null | undefined) => Buffer.from(b ?? new Uint8Array()).toString('utf8');
const secret = { prompt: 'MARKER-prompt-7f3a', tool_result: 'MARKER-tool-result-91c2' };
const plain = (): Payload => defaultPayloadConverter.toPayload(secret);

test('round trip: the decoded payload is the original, metadata included', async () => {
  const codec = new EncryptionCodec(ring('k1'));
  const original = plain();
  const [encrypted] = await codec.encode([original]);
  const [decoded] = await codec.decode([encrypted!]);
  expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual(secret);
  expect(text(decoded!.metadata!.encoding)).toBe('json/plain');
});

test('the envelope: binary/encrypted, the key id, nonce ‖ ciphertext ‖ tag, nothing readable', async () => {
  const keys = ring('2026-11');
  const [encrypted] = await new EncryptionCodec(keys).encode([plain()]);
  expect(Object.keys(encrypted!.metadata!).sort()).toEqual(['encoding', KEY_ID_METADATA]);
  expect(text(encrypted!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
  expect(text(encrypted!.metadata![KEY_ID_METADATA])).toBe('2026-11');
  const data = Buffer.from(encrypted!.data!);
  expect(data.toString('latin1')).not.toContain('MARKER');
  expect(data.toString('latin1')).not.toContain('json/plain');
  // What a Python or Go reader does, by hand: the README's layout.
  const { createDecipheriv } = await import('node:crypto');
  const d = createDecipheriv('aes-256-gcm', keys.keys[0]!.key, data.subarray(0, 12));
  d.setAAD(Buffer.from('2026-11'));
  d.setAuthTag(data.subarray(data.length - 16));
  const inner = temporal.api.common.v1.Payload.decode(Buffer.concat([d.update(data.subarray(12, data.length - 16)), d.final()]));
  expect(JSON.parse(text(inner.data))).toEqual(secret);
});

test('each encoding uses a fresh nonce: the same payload twice gives different bytes', async () => {
  const codec = new EncryptionCodec(ring('k1'));
  const [a, b] = await codec.encode([plain(), plain()]);
  expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
});

test('rotation: the first key encrypts, an older listed key still decrypts', async () => {
  const old = ring('old');
  const [byOld] = await new EncryptionCodec(old).encode([plain()]);
  const rotated = new EncryptionCodec({ keys: [{ id: 'new', key: key() }, old.keys[0]!] });
  const [byNew] = await rotated.encode([plain()]);
  expect(text(byNew!.metadata![KEY_ID_METADATA])).toBe('new');
  const decoded = await rotated.decode([byOld!, byNew!]);
  expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([secret, secret]);
  // Dropping the old key too early is a clear error naming the key to list again.
  await expect(new EncryptionCodec({ keys: [rotated['current']] }).decode([byOld!])).rejects.toThrow(/key "old", which is not among the configured keys \(new\)/);
});

test('a different key under the same id fails authentication', async () => {
  const [encrypted] = await new EncryptionCodec(ring('k1')).encode([plain()]);
  await expect(new EncryptionCodec(ring('k1')).decode([encrypted!])).rejects.toThrow(PayloadDecryptionError);
});

test('tampered ciphertext, a swapped key id, or a truncated payload fail; nothing is returned', async () => {
  const keys: KeyRing = { keys: [{ id: 'a', key: key() }, { id: 'b', key: key() }] };
  const codec = new EncryptionCodec(keys);
  const [encrypted] = await codec.encode([plain()]);
  const flipped = Buffer.from(encrypted!.data!);
  flipped[20] = flipped[20]! ^ 1;
  await expect(codec.decode([{ ...encrypted!, data: flipped }])).rejects.toThrow(/failed authentication/);
  // The key id is authenticated data: relabelling a payload to another valid key fails too.
  const relabelled = { ...encrypted!, metadata: { ...encrypted!.metadata, [KEY_ID_METADATA]: Buffer.from('b') } };
  await expect(codec.decode([relabelled])).rejects.toThrow(/failed authentication/);
  await expect(codec.decode([{ ...encrypted!, data: Buffer.alloc(10) }])).rejects.toThrow(/too short/);
  const noId = { ...encrypted!, metadata: { encoding: encrypted!.metadata!.encoding! } };
  await expect(codec.decode([noId])).rejects.toThrow(/no encryption-key-id/);
});

test('payloads without the encoding pass through decode unchanged (the temporal CLI, other SDKs)', async () => {
  const codec = new EncryptionCodec(ring('k1'));
  const fromCli = plain();
  const nothing = defaultPayloadConverter.toPayload(undefined);
  const decoded = await codec.decode([fromCli, nothing]);
  expect(decoded[0]).toBe(fromCli);
  expect(decoded[1]).toBe(nothing);
});

describe('keys from the environment', () => {
  const k1 = key().toString('base64');
  const k2 = key().toString('base64');

  test('none set: no encryption; a list: newest first', () => {
    expect(loadKeyRing({})).toBeUndefined();
    expect(encrypts(forkflowDataConverter({ env: {} }))).toBe(false);
    const ringFromEnv = loadKeyRing({ FORKFLOW_ENCRYPTION_KEYS: `new:${k1}, old:${k2}` })!;
    expect(ringFromEnv.keys.map((k) => k.id)).toEqual(['new', 'old']);
    expect(ringFromEnv.keys[1]!.key.equals(Buffer.from(k2, 'base64'))).toBe(true);
    expect(encrypts(forkflowDataConverter({ env: { FORKFLOW_ENCRYPTION_KEYS: `new:${k1}` } }))).toBe(true);
  });

  test('a key file, versioned', () => {
    const dir = mkdtempSync(join(tmpdir(), 'forkflow-keys-'));
    const file = join(dir, 'keys.json');
    writeFileSync(file, JSON.stringify({ v: 1, keys: [{ id: 'a', key: k1 }, { id: 'b', key: k2 }] }));
    expect(loadKeyRing({ FORKFLOW_ENCRYPTION_KEY_FILE: file })!.keys.map((k) => k.id)).toEqual(['a', 'b']);
    writeFileSync(file, JSON.stringify({ keys: [{ id: 'a', key: k1 }] }));
    expect(() => loadKeyRing({ FORKFLOW_ENCRYPTION_KEY_FILE: file })).toThrow(/FORKFLOW_ENCRYPTION_KEY_FILE .*v/);
    expect(() => loadKeyRing({ FORKFLOW_ENCRYPTION_KEY_FILE: join(dir, 'missing.json') })).toThrow(/cannot read it as JSON/);
  });

  test.each([
    ['a short key', `k:${Buffer.alloc(16).toString('base64')}`, /32 bytes/],
    ['not base64', 'k:not*base64', /base64/],
    ['no id', k1, /entry 1 has no "id:"/],
    ['a duplicate id', `k:${k1},k:${k2}`, /unique/],
    ['a bad id', `k y:${k1}`, /key id/],
  ])('%s is one EncryptionKeyError that names the variable', (_what, value, message) => {
    let error: unknown;
    try {
      loadKeyRing({ FORKFLOW_ENCRYPTION_KEYS: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(EncryptionKeyError);
    expect((error as Error).message).toMatch(/^FORKFLOW_ENCRYPTION_KEYS/);
    expect((error as Error).message).toMatch(message);
    // Key material never appears in the error.
    expect((error as Error).message).not.toContain(k1);
  });

  // A key that starts with a letter: the parser's message would quote its first 10 characters.
  const LETTERED = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef').toString('base64');
  test.each([
    ['a bare key', LETTERED],
    ['a bare random key', k1],
    ['a key after a comment', `# our key\n${k2}`],
    ['a key in broken JSON', `{"v":1,"keys":[{"id":"a","key":"${k1}"`],
  ])('a key file that is not JSON (%s) is refused without quoting any of it', (_what, content) => {
    const file = join(mkdtempSync(join(tmpdir(), 'forkflow-keys-')), 'keys');
    writeFileSync(file, content);
    let message = '';
    try {
      loadKeyRing({ FORKFLOW_ENCRYPTION_KEY_FILE: file });
    } catch (err) {
      message = (err as Error).message;
    }
    // No run of 6 characters of the key material is echoed.
    for (const key of [k1, k2, LETTERED]) for (let i = 0; i + 6 <= key.length; i++) expect(message).not.toContain(key.slice(i, i + 6));
    expect(message).toMatch(/^FORKFLOW_ENCRYPTION_KEY_FILE .*cannot read it as JSON \(it is not JSON/);
  });

  test('both variables set is refused', () => {
    expect(() => loadKeyRing({ FORKFLOW_ENCRYPTION_KEYS: `a:${k1}`, FORKFLOW_ENCRYPTION_KEY_FILE: '/x' })).toThrow(/Both .* set one of them/);
  });
});
