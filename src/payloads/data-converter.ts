/**
 * The one DataConverter of forkflow: the client, the worker (and the client its activities
 * use), the CLI, the codec server and the test kit all build theirs here, so what one side
 * writes the other reads. It holds the encryption codec when keys are configured (see
 * keys.ts) and external payload storage (./storage.ts). The SDK runs codecs before storage,
 * so stored blobs are encrypted too. With keys, failure messages and stack traces travel as
 * encoded attributes (./failure-converter.ts), so they are encrypted as well. Workflow code needs no part of it (both run outside the
 * sandbox), so the pre-built workflow bundle is the same either way.
 */
import type { DataConverter } from '@temporalio/common';
import { EncryptionCodec } from './codec';
import { loadKeyRing } from './keys';
import { externalStorageOf, storageSettings, type StorageSettings } from './storage';

/** Resolved here so the compiled library and the TypeScript sources each find their own file. */
const ENCODED_FAILURES_PATH = require.resolve('./failure-converter');

export interface DataConverterOptions {
  /** Where keys and storage settings are read (default: `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Default: from `env` (`storageSettings()`). */
  storage?: StorageSettings;
}

/**
 * Throws `EncryptionKeyError` when the key configuration is malformed.
 * @example
 * const client = new Client({ connection, dataConverter: forkflowDataConverter() });
 * const worker = await Worker.create({ ..., dataConverter: forkflowDataConverter() });
 */
export function forkflowDataConverter(opts: DataConverterOptions = {}): DataConverter {
  const env = opts.env ?? process.env;
  const ring = loadKeyRing(env);
  const externalStorage = externalStorageOf(opts.storage ?? storageSettings(env));
  return {
    ...(ring ? { payloadCodecs: [new EncryptionCodec(ring)], failureConverterPath: ENCODED_FAILURES_PATH } : {}),
    ...(externalStorage ? { externalStorage } : {}),
  };
}

/** Whether failures converted with this converter (and workflows bundled for it) keep messages in encoded attributes. */
export function encodesFailures(converter: DataConverter): boolean {
  return converter.failureConverterPath === ENCODED_FAILURES_PATH;
}

/** Whether this converter encrypts (the dev stack then starts a codec server for the UI). */
export function encrypts(converter: DataConverter): boolean {
  return (converter.payloadCodecs ?? []).some((c) => c instanceof EncryptionCodec);
}

/** What `dev`, `worker` and `stack` say at start when nothing is encrypted. */
export const PLAINTEXT_NOTICE =
  'Payloads are stored in plaintext: prompts, tool results and replies can be read in Temporal history (and the blob folder). Set FORKFLOW_ENCRYPTION_KEYS or FORKFLOW_ENCRYPTION_KEY_FILE on every worker and client to encrypt them.';

/** `PLAINTEXT_NOTICE` for a converter that does not encrypt, else nothing. */
export function plaintextNotice(converter: DataConverter): string | undefined {
  return encrypts(converter) ? undefined : PLAINTEXT_NOTICE;
}
