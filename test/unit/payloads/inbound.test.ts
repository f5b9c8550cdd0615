/**
 * The inbound guard (src/payloads/inbound.ts) on activations as the worker receives them, with
 * the real codec and the filesystem driver: good payloads come back decoded (encrypted and
 * stored ones included), each kind of poison becomes the stand-in naming why, headers that do
 * not decode are dropped, payloads the workflow's own commands produced are left alone, and
 * a storage that cannot be reached right now is thrown (the task is retried), not refused.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultFailureConverter, defaultPayloadConverter, ExternalStorage, StorageDriverClaim, type LoadedDataConverter, type Payload, type StorageDriver } from '@temporalio/common';
import { encodeReferencePayload } from '@temporalio/common/lib/internal-non-workflow';
import { coresdk } from '@temporalio/proto';
import { EncryptionCodec } from '../../../src/payloads/codec';
import { FsStorageDriver } from '../../../src/payloads/fs-driver';
import { guardActivation } from '../../../src/payloads/inbound';
import { UNDECODABLE_KEY } from '../../../src/shared/wire/undecodable';

const enc = (s: string) => new TextEncoder().encode(s);
const codec = new EncryptionCodec({ keys: [{ id: 'k1', key: randomBytes(32) }] });
const driver = new FsStorageDriver(mkdtempSync(join(tmpdir(), 'forkflow-inbound-')));
const dc = (drivers: StorageDriver[] = [driver]): LoadedDataConverter => ({ payloadConverter: defaultPayloadConverter, failureConverter: defaultFailureConverter, payloadCodecs: [codec], externalStorage: new ExternalStorage({ drivers }) });
const json = (v: unknown) => defaultPayloadConverter.toPayload(v);

function signal(...input: Payload[]) {
  return coresdk.workflow_activation.WorkflowActivation.create({ runId: 'r', jobs: [{ signalWorkflow: { signalName: 'sendMessage', input, headers: {} } }] });
}
const valueOf = (p: Payload | null | undefined) => defaultPayloadConverter.fromPayload(p!);

test('good payloads come back decoded: plain, encrypted, and stored-then-encrypted', async () => {
  const [encrypted] = await codec.encode([json({ message: 'secret' })]);
  const [storedEnc] = await codec.encode([json({ message: 'big' })]);
  const [claim] = await driver.store({}, [storedEnc!]);
  const reference = encodeReferencePayload({ driverName: driver.name, claim: claim!, sizeBytes: 10 });
  const activation = signal(json({ message: 'plain' }), encrypted!, reference);
  const refused: string[] = [];
  await guardActivation(activation, dc(), (what, reason) => refused.push(`${what}: ${reason}`));
  expect(activation.jobs[0]!.signalWorkflow!.input!.map(valueOf)).toEqual([{ message: 'plain' }, { message: 'secret' }, { message: 'big' }]);
  expect(refused).toEqual([]);
});

test.each([
  ['an unknown key id', () => ({ metadata: { encoding: enc('binary/encrypted'), 'encryption-key-id': enc('nope') }, data: randomBytes(40) }), /cannot be decrypted.*"nope"/],
  ['no key id at all', () => ({ metadata: { encoding: enc('binary/encrypted') }, data: randomBytes(40) }), /cannot be decrypted.*no encryption-key-id/],
  ['too short to be ciphertext', () => ({ metadata: { encoding: enc('binary/encrypted'), 'encryption-key-id': enc('k1') }, data: randomBytes(3) }), /too short/],
  ['a missing blob', () => encodeReferencePayload({ driverName: driver.name, claim: new StorageDriverClaim({ v: '1', manifest: 'a'.repeat(64) }), sizeBytes: 1 }), /\(BlobNotFoundError\)$/],
  ['a hostile claim', () => encodeReferencePayload({ driverName: driver.name, claim: new StorageDriverClaim({ v: '1', manifest: '../../etc/passwd' }), sizeBytes: 1 }), /\(InvalidBlobError\)$/],
  ['an unknown driver', () => encodeReferencePayload({ driverName: 'other', claim: new StorageDriverClaim({}), sizeBytes: 1 }), /driver "other"/],
  ['a malformed reference', () => ({ metadata: { encoding: enc('json/protobuf'), messageType: enc('temporal.api.sdk.v1.ExternalStorageReference') }, data: enc('{') }), /malformed/],
  ['bad JSON', () => ({ metadata: { encoding: enc('json/plain') }, data: enc('{"a":') }), /not a readable "json\/plain"/],
  ['no encoding', () => ({ metadata: {}, data: enc('x') }), /not a readable "unknown"/],
  ['deep JSON', () => ({ metadata: { encoding: enc('json/plain') }, data: enc(`${'['.repeat(65)}${']'.repeat(65)}`) }), /nested deeper than 64/],
])('%s becomes the stand-in with its reason', async (_what, make, reason) => {
  const activation = signal(make());
  const refused: string[] = [];
  await guardActivation(activation, dc(), (what, why) => refused.push(`${what}: ${why}`));
  const value = valueOf(activation.jobs[0]!.signalWorkflow!.input![0]) as Record<string, string>;
  expect(Object.keys(value)).toEqual([UNDECODABLE_KEY]);
  expect(value[UNDECODABLE_KEY]).toMatch(reason);
  expect(refused).toEqual([expect.stringMatching(/^signal sendMessage: /)]);
});

test('start input, memo, update and query arguments are guarded; a header that does not decode is dropped', async () => {
  const bad = { metadata: { encoding: enc('binary/zstd') }, data: enc('x') };
  const activation = coresdk.workflow_activation.WorkflowActivation.create({
    runId: 'r',
    jobs: [
      { initializeWorkflow: { workflowType: 'forkWorkflow', arguments: [bad], memo: { fields: { note: bad } }, headers: { _tracer: json({ ok: 1 }), junk: bad } } },
      { doUpdate: { id: 'u', name: 'decideApproval', protocolInstanceId: 'p', input: [bad] } },
      { queryWorkflow: { queryId: 'q', queryType: 'status', arguments: [bad] } },
    ],
  });
  const refused: string[] = [];
  await guardActivation(activation, dc(), (what) => refused.push(what));
  const [init, update, query] = activation.jobs;
  for (const p of [init!.initializeWorkflow!.arguments![0], init!.initializeWorkflow!.memo!.fields!.note, update!.doUpdate!.input![0], query!.queryWorkflow!.arguments![0]]) {
    expect(Object.keys(valueOf(p) as object)).toEqual([UNDECODABLE_KEY]);
  }
  expect(Object.keys(init!.initializeWorkflow!.headers!)).toEqual(['_tracer']);
  expect(refused).toEqual(['start input', 'start header junk', 'memo note', 'update decideApproval', 'query status']);
});

test("the workflow's own results are the SDK's business: an activity result is left as it came", async () => {
  const bad = { metadata: { encoding: enc('binary/zstd') }, data: enc('x') };
  const activation = coresdk.workflow_activation.WorkflowActivation.create({ runId: 'r', jobs: [{ resolveActivity: { seq: 1, result: { completed: { result: bad } } } }] });
  await guardActivation(activation, dc());
  expect(Buffer.from(activation.jobs[0]!.resolveActivity!.result!.completed!.result!.data!).toString()).toBe('x');
});

test('a storage that cannot be reached now is thrown, so the task is retried rather than the message refused', async () => {
  const down: StorageDriver = { name: 'flaky', type: 'flaky', store: () => Promise.reject(new Error('EIO')), retrieve: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })) };
  const activation = signal(encodeReferencePayload({ driverName: 'flaky', claim: new StorageDriverClaim({}), sizeBytes: 1 }));
  await expect(guardActivation(activation, dc([down]))).rejects.toThrow(/ECONNREFUSED/);
});
