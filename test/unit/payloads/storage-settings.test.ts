/**
 * FORKFLOW_STORAGE=s3 settings: what the environment yields, and one line per bad variable
 * when it is wrong (the worker, client and CLI all fail at start with that message).
 */
import { S3StorageDriver } from '@temporalio/external-storage-s3';
import { forkflowDataConverter } from '../../../src/payloads/data-converter';
import { storageSettings, StorageConfigError } from '../../../src/payloads/storage';

const base = { FORKFLOW_STORAGE: 's3', FORKFLOW_S3_BUCKET: 'forkflow-payloads', FORKFLOW_S3_REGION: 'eu-west-1' };

/** The message's lines after its heading: one per bad variable. */
function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    storageSettings(env);
  } catch (err) {
    expect(err).toBeInstanceOf(StorageConfigError);
    const [heading, ...lines] = (err as Error).message.split('\n');
    expect(heading).toBe('Invalid payload storage settings:');
    return lines.map((l) => l.trim());
  }
  throw new Error('the settings were accepted');
}

test('s3 with a bucket and region: AWS itself, virtual-host style, the SDK threshold', () => {
  expect(storageSettings(base)).toEqual({ kind: 's3', bucket: 'forkflow-payloads', region: 'eu-west-1', forcePathStyle: false });
});

test('an endpoint turns path style on unless told otherwise; prefix slashes are trimmed; threshold kept', () => {
  const env = { ...base, FORKFLOW_S3_ENDPOINT: 'http://127.0.0.1:7070', FORKFLOW_S3_PREFIX: '/team/forkflow/', FORKFLOW_STORAGE_THRESHOLD: '4096' };
  expect(storageSettings(env)).toEqual({ kind: 's3', bucket: 'forkflow-payloads', region: 'eu-west-1', endpoint: 'http://127.0.0.1:7070', prefix: 'team/forkflow', forcePathStyle: true, threshold: 4096 });
  expect(storageSettings({ ...env, FORKFLOW_S3_FORCE_PATH_STYLE: 'false' })).toMatchObject({ forcePathStyle: false });
  expect(storageSettings({ ...base, FORKFLOW_S3_FORCE_PATH_STYLE: '1' })).toMatchObject({ forcePathStyle: true });
});

test('the region falls back to AWS_REGION, then AWS_DEFAULT_REGION; FORKFLOW_S3_REGION wins', () => {
  const { FORKFLOW_S3_REGION: _omitted, ...noRegion } = base;
  expect(storageSettings({ ...noRegion, AWS_DEFAULT_REGION: 'us-west-2' })).toMatchObject({ region: 'us-west-2' });
  expect(storageSettings({ ...noRegion, AWS_REGION: 'ap-south-1', AWS_DEFAULT_REGION: 'us-west-2' })).toMatchObject({ region: 'ap-south-1' });
  expect(storageSettings({ ...base, AWS_REGION: 'ap-south-1' })).toMatchObject({ region: 'eu-west-1' });
  expect(problems(noRegion)).toEqual(['FORKFLOW_S3_REGION: is missing (or set AWS_REGION)']);
});

test('every bad variable gets its own line, naming it', () => {
  expect(problems({ FORKFLOW_STORAGE: 's3' })).toEqual(['FORKFLOW_S3_BUCKET: is missing (FORKFLOW_STORAGE=s3 needs a bucket)', 'FORKFLOW_S3_REGION: is missing (or set AWS_REGION)']);
  const lines = problems({ ...base, FORKFLOW_S3_BUCKET: 'Not_A_Bucket', FORKFLOW_S3_ENDPOINT: 'ftp://host', FORKFLOW_S3_PREFIX: 'a//b', FORKFLOW_S3_FORCE_PATH_STYLE: 'yes', FORKFLOW_S3_REGION: 'EU WEST' });
  expect(lines.map((l) => l.split(':')[0])).toEqual(['FORKFLOW_S3_BUCKET', 'FORKFLOW_S3_PREFIX', 'FORKFLOW_S3_REGION', 'FORKFLOW_S3_ENDPOINT', 'FORKFLOW_S3_FORCE_PATH_STYLE']);
  expect(lines[0]).toMatch(/S3 bucket name/);
  expect(lines[3]).toMatch(/http\(s\) URL/);
  expect(lines[4]).toMatch(/true or false/);
  // The shared variables are checked first, whichever driver is chosen.
  expect(problems({ ...base, FORKFLOW_STORAGE_THRESHOLD: 'lots' })).toEqual([expect.stringMatching(/^FORKFLOW_STORAGE_THRESHOLD: /)]);
});

test('empty variables count as unset', () => {
  expect(storageSettings({ ...base, FORKFLOW_S3_PREFIX: '', FORKFLOW_S3_ENDPOINT: '' })).toEqual(storageSettings(base));
});

test("the data converter carries the SDK's S3 driver, one per configuration and process", () => {
  const settings = storageSettings(base);
  const a = forkflowDataConverter({ storage: settings }).externalStorage;
  const b = forkflowDataConverter({ storage: settings }).externalStorage;
  expect(a?.drivers).toHaveLength(1);
  expect(a?.drivers[0]).toBeInstanceOf(S3StorageDriver);
  expect(a?.drivers[0]?.name).toBe('aws.s3driver');
  expect(b?.drivers[0]).toBe(a?.drivers[0]);
  expect(a?.payloadSizeThreshold).toBe(256 * 1024);
});
