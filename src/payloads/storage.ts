/**
 * External payload storage settings, read from the environment in this one place, and the
 * SDK `ExternalStorage` they describe. Clients, workers and the CLI of one deployment must
 * agree: a payload stored by one is read back by another.
 *
 *   FORKFLOW_STORAGE            fs (default) | off   (s3: not in this build)
 *   FORKFLOW_BLOB_DIR           the fs driver's folder (default `.forkflow/blobs` under the
 *                               current directory, the dev stack's; share it between hosts)
 *   FORKFLOW_STORAGE_THRESHOLD  payloads of at least this many bytes are stored, smaller ones
 *                               stay inline (default: the SDK's, 256 KiB)
 */
import { resolve } from 'node:path';
import { ExternalStorage } from '@temporalio/common';
import { z } from 'zod';
import { FsStorageDriver } from './fs-driver';

export const DEFAULT_BLOB_DIR = '.forkflow/blobs';

export type StorageSettings = { kind: 'off' } | { kind: 'fs'; dir: string; threshold?: number };

const envSchema = z.object({
  FORKFLOW_STORAGE: z.enum(['fs', 's3', 'off']).default('fs'),
  FORKFLOW_BLOB_DIR: z.string().min(1).optional(),
  FORKFLOW_STORAGE_THRESHOLD: z.coerce.number().int().nonnegative().optional(),
});

export class StorageConfigError extends Error {
  override name = 'StorageConfigError';
}

/** The storage settings the environment describes (see the header for the variables). */
export function storageSettings(env: NodeJS.ProcessEnv = process.env): StorageSettings {
  // Empty variables count as unset, as everywhere else in forkflow's configuration.
  const set = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('FORKFLOW_') && v !== ''));
  const parsed = envSchema.safeParse(set);
  if (!parsed.success) {
    throw new StorageConfigError(`Invalid payload storage settings: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  const e = parsed.data;
  if (e.FORKFLOW_STORAGE === 'off') return { kind: 'off' };
  if (e.FORKFLOW_STORAGE === 's3') {
    throw new StorageConfigError('FORKFLOW_STORAGE=s3 is not available in this build: use fs with a folder every host shares (FORKFLOW_BLOB_DIR), or off.');
  }
  return { kind: 'fs', dir: resolve(e.FORKFLOW_BLOB_DIR ?? DEFAULT_BLOB_DIR), ...(e.FORKFLOW_STORAGE_THRESHOLD !== undefined ? { threshold: e.FORKFLOW_STORAGE_THRESHOLD } : {}) };
}

/**
 * One driver per folder and process: a client and a worker in one process write through the
 * same driver, so its stats count everything written there.
 */
const drivers = new Map<string, FsStorageDriver>();
export function fsDriverFor(dir: string): FsStorageDriver {
  let driver = drivers.get(dir);
  if (!driver) {
    driver = new FsStorageDriver(dir);
    drivers.set(dir, driver);
  }
  return driver;
}

/** The SDK's ExternalStorage for these settings, or undefined when storage is off. */
export function externalStorageOf(settings: StorageSettings): ExternalStorage | undefined {
  if (settings.kind === 'off') return undefined;
  return new ExternalStorage({ drivers: [fsDriverFor(settings.dir)], ...(settings.threshold !== undefined ? { payloadSizeThreshold: settings.threshold } : {}) });
}
