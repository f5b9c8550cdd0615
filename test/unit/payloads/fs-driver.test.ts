/**
 * The filesystem storage driver on a temp folder: round trips byte for byte, stores equal
 * bytes once (and a shared leading part of two payloads once), refuses hostile claims and
 * corrupt blobs, and the environment settings that choose it.
 */
import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StorageDriverClaim, type Payload } from '@temporalio/common';
import { BlobNotFoundError, FsStorageDriver } from '../../../src/payloads/fs-driver';
import { DEFAULT_BLOB_DIR, storageSettings, StorageConfigError } from '../../../src/payloads/storage';
import { forkflowDataConverter } from '../../../src/payloads/data-converter';

const dir = () => mkdtempSync(join(tmpdir(), 'forkflow-blobs-'));
const payload = (data: Uint8Array, encoding = 'json/plain'): Payload => ({ metadata: { encoding: new TextEncoder().encode(encoding) }, data });
const noCtx = {};

function blobFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else out.push(join(d, e.name));
    }
  };
  walk(root);
  return out;
}

test('round-trips data and metadata byte for byte, across chunks and for an empty payload', async () => {
  const driver = new FsStorageDriver(dir(), 1000);
  const big = new Uint8Array(4321).map((_, i) => (i * 7) % 256);
  const claims = await driver.store(noCtx, [payload(big), payload(new Uint8Array(), 'binary/null')]);
  const [a, b] = await driver.retrieve(noCtx, claims);
  expect(Buffer.from(a!.data!).equals(Buffer.from(big))).toBe(true);
  expect(new TextDecoder().decode(a!.metadata!.encoding)).toBe('json/plain');
  expect(b!.data!.length).toBe(0);
  expect(new TextDecoder().decode(b!.metadata!.encoding)).toBe('binary/null');
  // 5 chunks for the big one, 1 for the empty one, 2 manifests.
  expect(driver.stats).toMatchObject({ blobsWritten: 8, payloadsStored: 2, payloadsRetrieved: 2 });
});

test('the same bytes are stored once; two payloads sharing a leading part share its chunks', async () => {
  const root = dir();
  const driver = new FsStorageDriver(root, 1000);
  const shared = new Uint8Array(3000).fill(65);
  const one = Buffer.concat([shared, Buffer.from('first sibling')]);
  const two = Buffer.concat([shared, Buffer.from('second sibling')]);
  await driver.store(noCtx, [payload(one)]);
  const afterOne = driver.stats.bytesWritten;
  const [again] = await driver.store(noCtx, [payload(one)]);
  expect(driver.stats.bytesWritten).toBe(afterOne);
  await driver.store(noCtx, [payload(two)]);
  // The second sibling wrote its own last chunk and manifest, not the 3000 shared bytes
  // (the three 1000-byte chunks of `A` are one blob).
  expect(driver.stats.bytesWritten - afterOne).toBeLessThan(1000);
  expect(blobFiles(root).length).toBe(2 + 1 + 2);
  expect(again!.claimData).toEqual((await driver.store(noCtx, [payload(one)]))[0]!.claimData);
});

test('hostile claims never become paths; a missing or corrupt blob is a clear error', async () => {
  const root = dir();
  const driver = new FsStorageDriver(root);
  await expect(driver.retrieve(noCtx, [new StorageDriverClaim({ v: '1', manifest: '../../etc/passwd' })])).rejects.toThrow(/not a forkflow-fs claim/);
  await expect(driver.retrieve(noCtx, [new StorageDriverClaim({ v: '1', manifest: 'a'.repeat(64), extra: 'x' })])).rejects.toThrow(/not a forkflow-fs claim/);
  await expect(driver.retrieve(noCtx, [new StorageDriverClaim({ v: '1', manifest: 'a'.repeat(64) })])).rejects.toThrow(BlobNotFoundError);
  const [claim] = await driver.store(noCtx, [payload(Buffer.from('hello'))]);
  const manifestPath = driver.pathOf(claim!.claimData.manifest!);
  expect(statSync(manifestPath).isFile()).toBe(true);
  writeFileSync(manifestPath, '{"v":1}');
  await expect(driver.retrieve(noCtx, [claim!])).rejects.toThrow(/corrupt/);
});

test('settings: fs under .forkflow/blobs by default with the SDK threshold; off; s3 without a bucket and bad values refused', () => {
  expect(storageSettings({})).toEqual({ kind: 'fs', dir: join(process.cwd(), DEFAULT_BLOB_DIR) });
  expect(storageSettings({ FORKFLOW_BLOB_DIR: '/srv/blobs', FORKFLOW_STORAGE_THRESHOLD: '1024' })).toEqual({ kind: 'fs', dir: '/srv/blobs', threshold: 1024 });
  expect(storageSettings({ FORKFLOW_STORAGE: 'off', FORKFLOW_BLOB_DIR: '/srv/blobs' })).toEqual({ kind: 'off' });
  expect(() => storageSettings({ FORKFLOW_STORAGE: 's3' })).toThrow(StorageConfigError);
  expect(() => storageSettings({ FORKFLOW_STORAGE: 'disk' })).toThrow(/FORKFLOW_STORAGE/);
  expect(() => storageSettings({ FORKFLOW_STORAGE_THRESHOLD: '-1' })).toThrow(/FORKFLOW_STORAGE_THRESHOLD/);
  expect(forkflowDataConverter({ storage: { kind: 'off' } })).toEqual({});
  expect(forkflowDataConverter({ storage: { kind: 'fs', dir: '/srv/blobs' } }).externalStorage?.payloadSizeThreshold).toBe(256 * 1024);
});
