/**
 * The S3 StorageDriver for multi-host deployments: the SDK's own (`@temporalio/external-
 * storage-s3`, content-addressed objects under `v0/ns/…/d/sha256/<digest>`, each checked
 * against its digest on read) over `@aws-sdk/client-s3`, configured from forkflow's settings
 * (storage.ts). Credentials come from the AWS SDK's default chain (AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY, a profile, an instance role …); forkflow never reads them itself.
 *
 * What this module adds is a narrow client in front of the AWS one. A claim's bucket and key
 * come from history, so they are treated as hostile: a read goes only to the configured
 * bucket and only to a key of the SDK driver's shape. And an optional prefix puts every
 * object under one folder of a shared bucket; claims keep the SDK's key, without the prefix
 * (a reader in another language adds it, see the README's payload format section).
 */
import { S3Client } from '@aws-sdk/client-s3';
import { S3StorageDriver, type S3RequestOptions, type S3StorageDriverClient } from '@temporalio/external-storage-s3';
import { AwsSdkS3StorageDriverClient } from '@temporalio/external-storage-s3-aws-sdk';

export interface S3Settings {
  bucket: string;
  /** Folder of the bucket every object goes under, without slashes at either end. */
  prefix?: string;
  region: string;
  /** An S3-compatible server's URL (versitygw, MinIO, …); AWS's own when absent. */
  endpoint?: string;
  /** `http://host/bucket/key` rather than `http://bucket.host/key`. */
  forcePathStyle: boolean;
}

/** The keys the SDK's driver writes: `v0/`, percent-encoded context segments, `d/sha256/<hex>`. */
const SDK_KEY = /^v0\/(?:[A-Za-z0-9!\-_.*'()%]+\/)*d\/sha256\/[0-9a-f]{64}$/;

export class S3ClaimError extends Error {
  override name = 'S3ClaimError';
}

/** The AWS client behind the driver, pinned to one bucket and (optionally) one prefix. */
export class ScopedS3Client implements S3StorageDriverClient {
  constructor(
    private readonly inner: S3StorageDriverClient,
    private readonly bucket: string,
    private readonly prefix?: string,
  ) {}

  /** The object key for a driver key (the driver only ever sees its own keys). */
  objectKey(key: string): string {
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  private check(bucket: string, key: string): void {
    if (bucket !== this.bucket) throw new S3ClaimError(`a stored payload names bucket "${bucket}", but this deployment stores in "${this.bucket}" (FORKFLOW_S3_BUCKET)`);
    if (!SDK_KEY.test(key)) throw new S3ClaimError(`a stored payload names key "${key.slice(0, 200)}", which is not one the S3 driver writes`);
  }

  describe(): Record<string, string> {
    return { ...this.inner.describe?.(), ...(this.prefix ? { prefix: this.prefix } : {}) };
  }

  async objectExists(bucket: string, key: string, options?: S3RequestOptions): Promise<boolean> {
    this.check(bucket, key);
    return this.inner.objectExists(bucket, this.objectKey(key), options);
  }

  async putObject(bucket: string, key: string, data: Uint8Array, options?: S3RequestOptions): Promise<void> {
    this.check(bucket, key);
    await this.inner.putObject(bucket, this.objectKey(key), data, options);
  }

  async getObject(bucket: string, key: string, options?: S3RequestOptions): Promise<Uint8Array> {
    this.check(bucket, key);
    return this.inner.getObject(bucket, this.objectKey(key), options);
  }
}

/** The AWS SDK client these settings describe (also what tests list the bucket with). */
export function s3ClientOf(s: S3Settings): S3Client {
  // The AWS SDK's own retries (3 attempts) stay on: a store also runs in client calls (a
  // large fork input), which Temporal does not retry.
  return new S3Client({ region: s.region, forcePathStyle: s.forcePathStyle, ...(s.endpoint ? { endpoint: s.endpoint } : {}) });
}

/** The SDK's S3 driver for these settings. */
export function s3DriverOf(s: S3Settings): S3StorageDriver {
  return new S3StorageDriver({ client: new ScopedS3Client(new AwsSdkS3StorageDriverClient(s3ClientOf(s)), s.bucket, s.prefix), bucket: s.bucket });
}
