/**
 * External payload storage settings, read from the environment in this one place, and the
 * SDK `ExternalStorage` they describe. Clients, workers, the CLI and the codec server of one
 * deployment must agree: a payload stored by one is read back by another.
 *
 *   FORKFLOW_STORAGE            fs (default) | s3 | off
 *   FORKFLOW_STORAGE_THRESHOLD  payloads of at least this many bytes are stored, smaller ones
 *                               stay inline (default: the SDK's, 256 KiB)
 *   fs:
 *   FORKFLOW_BLOB_DIR           the folder (default `.forkflow/blobs` under the current
 *                               directory, the dev stack's; share it between hosts)
 *   s3 (credentials: the AWS SDK's default chain, e.g. AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY):
 *   FORKFLOW_S3_BUCKET          the bucket (required)
 *   FORKFLOW_S3_PREFIX          a folder of the bucket every object goes under (optional)
 *   FORKFLOW_S3_REGION          the region (default: AWS_REGION, then AWS_DEFAULT_REGION)
 *   FORKFLOW_S3_ENDPOINT        an S3-compatible server's URL (default: AWS's)
 *   FORKFLOW_S3_FORCE_PATH_STYLE  true | false (default: true with an endpoint, else false)
 */
import { resolve } from 'node:path';
import { ExternalStorage, type StorageDriver } from '@temporalio/common';
import { z } from 'zod';
import { plainIssues } from '../shared/base/plain-issues';
import { FsStorageDriver } from './fs-driver';
import type * as S3DriverModule from './s3-driver';
import type { S3Settings } from './s3-driver';

export const DEFAULT_BLOB_DIR = '.forkflow/blobs';

export type StorageSettings = { kind: 'off' } | { kind: 'fs'; dir: string; threshold?: number } | ({ kind: 's3'; threshold?: number } & S3Settings);

const envSchema = z.object({
  FORKFLOW_STORAGE: z.enum(['fs', 's3', 'off']).default('fs'),
  FORKFLOW_BLOB_DIR: z.string().min(1).optional(),
  FORKFLOW_STORAGE_THRESHOLD: z.coerce.number().int().nonnegative().optional(),
});

const segment = "[A-Za-z0-9!\\-_.*'()]+";
const s3EnvSchema = z.object({
  // S3's bucket naming rules (lower case, digits, dots, hyphens; 3 to 63 characters).
  FORKFLOW_S3_BUCKET: z.string({ error: 'is missing (FORKFLOW_STORAGE=s3 needs a bucket)' }).regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name: 3 to 63 lower-case letters, digits, dots and hyphens'),
  FORKFLOW_S3_PREFIX: z
    .string()
    .transform((p) => p.replace(/^\/+|\/+$/g, ''))
    .pipe(z.string().regex(new RegExp(`^(?:${segment}(?:/${segment})*)?$`), "must be a key prefix like `team/forkflow`: letters, digits and ! - _ . * ' ( ) between single slashes"))
    .optional(),
  FORKFLOW_S3_REGION: z.string({ error: 'is missing (or set AWS_REGION)' }).regex(/^[a-z0-9-]+$/, 'must be a region name like eu-west-1'),
  FORKFLOW_S3_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. http://127.0.0.1:7070' }).optional(),
  FORKFLOW_S3_FORCE_PATH_STYLE: z
    .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
    .transform((v) => v === 'true' || v === '1')
    .optional(),
});

/** A payload storage variable (FORKFLOW_STORAGE, FORKFLOW_BLOB_DIR, FORKFLOW_S3_…) is malformed or missing: one line per variable. */
export class StorageConfigError extends Error {
  override name = 'StorageConfigError';
}

export function isStorageConfigError(err: unknown): err is StorageConfigError {
  return err instanceof StorageConfigError;
}

/** One line per bad variable. The S3 schema words every message itself; the shared one leaves it to plainIssues. */
function refuse(lines: string[]): never {
  throw new StorageConfigError(`Invalid payload storage settings:\n${lines.map((line) => `  ${line}`).join('\n')}`);
}

/** The storage settings the environment describes (see the header for the variables). */
export function storageSettings(env: NodeJS.ProcessEnv = process.env): StorageSettings {
  // Empty variables count as unset, as everywhere else in forkflow's configuration.
  const set = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('FORKFLOW_') && v !== ''));
  const parsed = envSchema.safeParse(set);
  if (!parsed.success) refuse(plainIssues(parsed.error));
  const e = parsed.data;
  const threshold = e.FORKFLOW_STORAGE_THRESHOLD !== undefined ? { threshold: e.FORKFLOW_STORAGE_THRESHOLD } : {};
  if (e.FORKFLOW_STORAGE === 'off') return { kind: 'off' };
  if (e.FORKFLOW_STORAGE === 's3') {
    const region = set.FORKFLOW_S3_REGION ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined);
    const s3 = s3EnvSchema.safeParse({ ...set, ...(region ? { FORKFLOW_S3_REGION: region } : {}) });
    if (!s3.success) refuse(s3.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
    const o = s3.data;
    return {
      kind: 's3',
      bucket: o.FORKFLOW_S3_BUCKET,
      region: o.FORKFLOW_S3_REGION,
      forcePathStyle: o.FORKFLOW_S3_FORCE_PATH_STYLE ?? o.FORKFLOW_S3_ENDPOINT !== undefined,
      ...(o.FORKFLOW_S3_PREFIX ? { prefix: o.FORKFLOW_S3_PREFIX } : {}),
      ...(o.FORKFLOW_S3_ENDPOINT ? { endpoint: o.FORKFLOW_S3_ENDPOINT } : {}),
      ...threshold,
    };
  }
  return { kind: 'fs', dir: resolve(e.FORKFLOW_BLOB_DIR ?? DEFAULT_BLOB_DIR), ...threshold };
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

/** forkflow's optional peer dependencies for `FORKFLOW_STORAGE=s3` (the versions in its package.json). */
export const S3_PACKAGES = ['@temporalio/external-storage-s3', '@temporalio/external-storage-s3-aws-sdk', '@aws-sdk/client-s3'];

/** One S3 driver (and so one AWS client and its connections) per configuration and process. */
const s3Drivers = new Map<string, StorageDriver>();
function s3DriverFor(s: S3Settings): StorageDriver {
  const key = JSON.stringify([s.bucket, s.prefix, s.region, s.endpoint, s.forcePathStyle]);
  let driver = s3Drivers.get(key);
  if (!driver) {
    // Loaded on first use: the AWS SDK takes ~0.3 s to load, which every CLI command on the
    // fs driver (the default) would pay otherwise.
    // The S3 packages are optional peers (a project that depends on forkflow installs them only
    // for S3, so it gets no second SDK copy otherwise): missing ones get a plain message.
    let mod: typeof S3DriverModule;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      mod = require('./s3-driver') as typeof S3DriverModule;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
      throw new StorageConfigError(`FORKFLOW_STORAGE=s3 needs the packages ${S3_PACKAGES.join(', ')} installed beside forkflow (${(err as Error).message.split('\n')[0]})`);
    }
    driver = mod.s3DriverOf(s);
    s3Drivers.set(key, driver);
  }
  return driver;
}

/** The SDK's ExternalStorage for these settings, or undefined when storage is off. */
export function externalStorageOf(settings: StorageSettings): ExternalStorage | undefined {
  if (settings.kind === 'off') return undefined;
  const driver = settings.kind === 'fs' ? fsDriverFor(settings.dir) : s3DriverFor(settings);
  return new ExternalStorage({ drivers: [driver], ...(settings.threshold !== undefined ? { payloadSizeThreshold: settings.threshold } : {}) });
}
