/**
 * The worker's private stores, opened the way src/gateway/private-dir.ts requires (a
 * directory of this user's alone, entries authenticated with its key), and encrypted with
 * the payload codec when payload encryption keys are set (FORKFLOW_ENCRYPTION_KEYS or
 * FORKFLOW_ENCRYPTION_KEY_FILE): a sealed entry is a `temporal.api.common.v1.Payload`
 * encrypted by the codec, serialized as protobuf.
 */
import { METADATA_ENCODING_KEY } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { FileResponseStore } from '../activities/model/response-store';
import { openPrivateStore } from '../gateway/private-dir';
import { EncryptionCodec, isEncrypted } from '../payloads/codec';
import { loadKeyRing } from '../payloads/keys';
import type { PrivateStore, StoreSealer } from '../shared/wire/private-store';
import { forkflowSettings } from './config';
import { envSetting } from '../shared/wire/env-settings';

const Payload = temporal.api.common.v1.Payload;

/** The payload codec as a store sealer, or undefined when no encryption keys are configured. */
export function storeSealer(env: NodeJS.ProcessEnv = process.env): StoreSealer | undefined {
  const ring = loadKeyRing(env);
  if (!ring) return undefined;
  const codec = new EncryptionCodec(ring);
  return {
    async seal(plain) {
      const [sealed] = await codec.encode([{ metadata: { [METADATA_ENCODING_KEY]: Buffer.from('binary/plain') }, data: plain }]);
      return Payload.encode(sealed!).finish();
    },
    async open(bytes) {
      const payload = Payload.decode(bytes);
      if (!isEncrypted(payload)) throw new Error('a sealed store entry is not encrypted');
      const [plain] = await codec.decode([payload]);
      return plain!.data ?? new Uint8Array();
    },
  };
}

/** Opens `dir` as a private store of this worker, sealed when keys are configured. */
export function openWorkerStore(dir: string, label: string, env: NodeJS.ProcessEnv = process.env): PrivateStore {
  const sealer = storeSealer(env);
  return openPrivateStore(dir, { label, ...(sealer ? { sealer } : {}) });
}

/** The response store the environment configures (FORKFLOW_RESPONSE_DIR, else `<state dir>/responses`). */
export function responseStoreFromEnv(env: NodeJS.ProcessEnv = process.env): FileResponseStore {
  const settings = forkflowSettings(env);
  return new FileResponseStore(openWorkerStore(settings.responseDir, envSetting(env, 'FORKFLOW_RESPONSE_DIR') ? 'FORKFLOW_RESPONSE_DIR' : 'FORKFLOW_STATE_DIR', env), { journal: settings.responseJournal });
}
