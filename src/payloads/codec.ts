/**
 * The encryption codec: AES-256-GCM over the whole payload (its metadata included, so the
 * server sees neither the content nor its encoding). The envelope, documented in the README
 * for Python and Go readers:
 *
 *   metadata: { encoding: "binary/encrypted", "encryption-key-id": "<id>" }
 *   data:     nonce (12 bytes) ‖ ciphertext ‖ GCM tag (16 bytes)
 *   plaintext = the original `temporal.api.common.v1.Payload`, protobuf-encoded
 *   additional authenticated data = the key id (UTF-8), so a relabelled payload fails
 *
 * A fresh random nonce per payload (NIST SP 800-38D's 2^32-invocation limit per key is far
 * beyond one deployment's payload count between rotations). Payloads without the encoding
 * pass through decode untouched: plain JSON from the `temporal` CLI or another SDK's client
 * still reaches the workflow; the inbound guard (inbound.ts) decides where that is refused.
 *
 * Before encrypting, the codec writes the payload's binding (binding.ts: the workflow or
 * activity the SDK says it is for) into the payload's metadata, inside the ciphertext;
 * `decode` takes it out again, `open` hands it to a reader that checks it.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec, type SerializationContext } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { BINDING_METADATA, bindingOf } from './binding';
import { unvetted } from './vetted';
import type { EncryptionKey, KeyRing } from './keys';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const ProtoPayload = temporal.api.common.v1.Payload;
const utf8Encode = (s: string): Uint8Array => Buffer.from(s, 'utf8');
const utf8Decode = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

/** A payload that cannot be decrypted: unknown key, or tampered / truncated bytes. */
export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';
}

export function isEncrypted(payload: Payload): boolean {
  const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
  return encoding !== undefined && encoding !== null && utf8Decode(encoding) === ENCRYPTED_ENCODING;
}

export class EncryptionCodec implements PayloadCodec {
  private readonly byId: Map<string, Buffer>;
  private readonly current: EncryptionKey;

  constructor(ring: KeyRing) {
    if (ring.keys.length === 0) throw new Error('EncryptionCodec needs at least one key');
    this.current = ring.keys[0]!;
    this.byId = new Map(ring.keys.map((k) => [k.id, k.key]));
  }

  // Synchronous work in a promise executor: a throw becomes a rejection, as callers expect.
  encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const binding = bindingOf(context);
    return new Promise((resolve) => resolve(payloads.map((p) => this.encrypt(p, binding))));
  }

  /**
   * Decrypts what is encrypted and passes the rest, except in an activity's context: an
   * activity's input, heartbeat or result is written by a worker, which with keys encrypts
   * it and binds it to the activity. A plaintext one there comes from a worker without the
   * keys (a rogue polling a queue, or scheduling activities from a workflow of its own) and
   * is refused — unless the inbound guard already judged it (vetted.ts); one bound to another
   * activity is refused too.
   */
  decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const activity = context?.type === 'activity' && !context.isLocal ? context : undefined;
    const expected = bindingOf(activity);
    return new Promise((resolve) =>
      resolve(
        payloads.map((p) => {
          if (isEncrypted(p)) {
            const open = this.open(p);
            // An activity's input lifted from another call (a command another agent ran, to run it again) is refused.
            if (expected && open.binding && open.binding !== expected) throw new PayloadDecryptionError(`A payload written for another activity was refused in activity ${activity?.activityId ?? '?'} of workflow ${activity?.workflowId ?? '?'}.`);
            return open.payload;
          }
          const plain = unvetted(p);
          if (activity && !plain.vetted) throw new PayloadDecryptionError(`A plaintext payload in activity ${activity.activityId ?? '?'} of workflow ${activity.workflowId ?? '?'} was refused: with encryption keys, workers write activity inputs and results encrypted, so this one came from a worker or client without the keys.`);
          return plain.payload;
        }),
      ),
    );
  }

  /**
   * Decrypts `payload` (which must be encrypted) and says what it was bound to when written
   * (undefined: written without a context, or before bindings existed). Throws
   * `PayloadDecryptionError` when it does not decrypt.
   */
  open(payload: Payload): { payload: Payload; binding?: string } {
    const inner = this.decrypt(payload);
    const bound = inner.metadata?.[BINDING_METADATA];
    if (!bound) return { payload: inner };
    const metadata = { ...inner.metadata };
    delete metadata[BINDING_METADATA];
    return { payload: { ...inner, metadata }, binding: utf8Decode(bound) };
  }

  private encrypt(payload: Payload, binding: string | undefined): Payload {
    const { id, key } = this.current;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(id, 'utf8'));
    const bound = binding ? { ...payload, metadata: { ...payload.metadata, [BINDING_METADATA]: utf8Encode(binding) } } : payload;
    const plain = ProtoPayload.encode(bound).finish();
    const data = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return { metadata: { [METADATA_ENCODING_KEY]: utf8Encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8Encode(id) }, data };
  }

  private decrypt(payload: Payload): Payload {
    const idBytes = payload.metadata?.[KEY_ID_METADATA];
    if (!idBytes) throw new PayloadDecryptionError(`An encrypted payload has no ${KEY_ID_METADATA} metadata: it was not written by this codec.`);
    const id = utf8Decode(idBytes);
    const key = this.byId.get(id);
    if (!key) throw new PayloadDecryptionError(`A payload is encrypted with key "${id}", which is not among the configured keys (${[...this.byId.keys()].join(', ')}): list it (after the current key) in FORKFLOW_ENCRYPTION_KEYS or the key file.`);
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < NONCE_BYTES + TAG_BYTES) throw new PayloadDecryptionError(`An encrypted payload (key "${id}") is ${data.length} bytes, too short to hold a nonce and a tag.`);
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(idBytes);
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(`An encrypted payload (key "${id}") failed authentication: it was altered, or encrypted with a different key under the same id.`);
    }
    return ProtoPayload.decode(plain);
  }
}
