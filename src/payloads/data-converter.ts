/**
 * The one DataConverter of forkflow: the client, the worker (and the client its activities
 * use), the CLI and the test kit all build theirs here, so what one side stores the other
 * reads. Today it adds external payload storage (./storage.ts); payload codecs go here too.
 */
import type { DataConverter } from '@temporalio/common';
import { externalStorageOf, storageSettings, type StorageSettings } from './storage';

export interface DataConverterOptions {
  /** Default: from the environment (`storageSettings()`). */
  storage?: StorageSettings;
}

/**
 * @example
 * const client = new Client({ connection, dataConverter: forkflowDataConverter() });
 * const worker = await Worker.create({ ..., dataConverter: forkflowDataConverter() });
 */
export function forkflowDataConverter(opts: DataConverterOptions = {}): DataConverter {
  const externalStorage = externalStorageOf(opts.storage ?? storageSettings());
  return externalStorage ? { externalStorage } : {};
}
