/**
 * The one DataConverter of forkflow's clients, workers, CLI and test kit, built from the
 * environment: today the encryption codec when keys are configured (see keys.ts), nothing
 * otherwise. Workflow code needs no part of it (codecs run outside the sandbox), so the
 * pre-built workflow bundle is the same either way.
 */
import type { DataConverter } from '@temporalio/common';
import { EncryptionCodec } from './codec';
import { loadKeyRing } from './keys';

/** Throws `EncryptionKeyError` when the key configuration is malformed. */
export function forkflowDataConverter(env: NodeJS.ProcessEnv = process.env): DataConverter {
  const ring = loadKeyRing(env);
  return ring ? { payloadCodecs: [new EncryptionCodec(ring)] } : {};
}

/** Whether this converter encrypts (the dev stack then starts a codec server for the UI). */
export function encrypts(converter: DataConverter): boolean {
  return (converter.payloadCodecs ?? []).some((c) => c instanceof EncryptionCodec);
}
