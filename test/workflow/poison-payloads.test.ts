/**
 * Payloads that cannot wedge an agent, sent as a hostile caller would: a client whose every
 * payload on the wire is a crafted one (a fake `binary/encrypted` payload, tampered
 * ciphertext under the deployment's own key id, references to a blob that does not exist, to
 * a driver nobody has, a malformed reference, JSON that does not parse, an unknown encoding,
 * JSON nested 5,000 deep). As a `sendMessage` signal each is dropped with its reason
 * (status.rejectedSignals) while the agent keeps answering `status`, and a good message after
 * them is answered; as an update it is rejected, as a query it fails; as a start input the
 * start fails as invalid input and the model is never called. In every case the history holds
 * no failed workflow task (before the inbound guard, each of them failed the task forever).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { type ApplicationFailure, defaultPayloadConverter, StorageDriverClaim, type Payload, type PayloadCodec } from '@temporalio/common';
import { encodeReferencePayload } from '@temporalio/common/lib/internal-non-workflow';
import { type EncryptionCodec } from '../../src/payloads/codec';
import { forkflowDataConverter } from '../../src/payloads/data-converter';
import { textOf } from '../../src/shared/messages-api/anthropic';
import { bundleForkflowWorkflows } from '../../src/worker/bundle';
import { startHarness, tempDir, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';
import { E, historyEvents } from '../kit/history-order';
import { rejectionOf, waitFor } from '../kit/wait';

const enc = (s: string) => new TextEncoder().encode(s);
const dir = tempDir('poison');
const keys = `poison-k1:${randomBytes(32).toString('base64')}`;
const dataConverter = forkflowDataConverter({ env: { FORKFLOW_ENCRYPTION_KEYS: keys, FORKFLOW_BLOB_DIR: join(dir, 'blobs') } });
const codec = dataConverter.payloadCodecs![0] as EncryptionCodec;

/** Each poison, and what the refusal says about it. */
const POISON: [string, () => Promise<Payload> | Payload, RegExp][] = [
  ['a fake binary/encrypted payload', () => ({ metadata: { encoding: enc('binary/encrypted'), 'encryption-key-id': enc('attacker-key') }, data: randomBytes(64) }), /cannot be decrypted.*attacker-key/],
  [
    'ciphertext under the real key id, altered',
    async () => {
      const [real] = await codec.encode([defaultPayloadConverter.toPayload({ message: 'hello' })]);
      const data = Buffer.from(real!.data!);
      data[20]! ^= 0xff;
      return { ...real!, data };
    },
    /cannot be decrypted.*failed authentication/,
  ],
  ['a reference to a blob that does not exist', () => encodeReferencePayload({ driverName: 'forkflow-fs', claim: new StorageDriverClaim({ v: '1', manifest: 'f'.repeat(64) }), sizeBytes: 300_000 }), /stored blob cannot be read \(BlobNotFoundError/],
  ['a reference to a driver nobody has', () => encodeReferencePayload({ driverName: 'attacker-s3', claim: new StorageDriverClaim({ bucket: 'x', key: 'y' }), sizeBytes: 10 }), /driver "attacker-s3", which this worker does not have/],
  ['a malformed reference', () => ({ metadata: { encoding: enc('json/protobuf'), messageType: enc('temporal.api.sdk.v1.ExternalStorageReference') }, data: enc('not json') }), /malformed external-storage reference/],
  ['JSON that does not parse', () => ({ metadata: { encoding: enc('json/plain') }, data: enc('{"message": "unfinished') }), /not a readable "json\/plain" payload/],
  ['an unknown encoding', () => ({ metadata: { encoding: enc('binary/zstd') }, data: randomBytes(16) }), /not a readable "binary\/zstd" payload/],
  ['JSON nested 5,000 deep', () => ({ metadata: { encoding: enc('json/plain') }, data: enc(`${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`) }), /nested deeper than 64 levels \(MAX_JSON_DEPTH\)/],
];

let h: Harness;
beforeAll(async () => {
  // Workflows bundled for the encrypting converter (its failures are converted inside).
  const bundlePath = join(dir, 'workflow-bundle.js');
  const quiet = () => undefined;
  writeFileSync(bundlePath, await bundleForkflowWorkflows({ log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet }, dataConverter));
  h = await startHarness({ name: 'poison', dataConverter, bundlePath });
}, 180_000);
afterAll(() => h?.close());

/** A client that puts `payload` on the wire for every argument it sends (it encodes nothing honestly). */
function hostile(payload: Payload): Client {
  // It reads answers like any client of the deployment (a rejection's message is encrypted too).
  const liar: PayloadCodec = { encode: (ps) => Promise.resolve(ps.map(() => payload)), decode: (ps) => codec.decode(ps) };
  return new Client({ connection: h.client.connection, namespace: h.env.namespace, dataConverter: { payloadCodecs: [liar] } });
}

async function taskFailures(workflowId: string): Promise<number> {
  return (await historyEvents(h.client.workflow.getHandle(workflowId))).filter((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_FAILED).length;
}

test('poison sendMessage signals are dropped with their reasons; the agent answers status throughout and completes on a good message', async () => {
  const agentId = 'poison-signals';
  const agent = await h.forkflow.start({ agentId, prompt: '@reply first', idleTimeout: '5m', maxTurns: 2 });
  await waitFor(async () => (await agent.status()).state === 'idle', 'the agent to go idle');
  for (const [, make] of POISON) await hostile(await make()).workflow.getHandle(agentId).signal('sendMessage', { message: 'ignored: the wire carries the poison' });
  const status = await waitFor(async () => {
    const s = await agent.status();
    return s.rejectedSignals.length === POISON.length ? s : undefined;
  }, 'every poison to be refused');
  expect(status.state).toBe('idle');
  status.rejectedSignals.forEach((r, i) => {
    expect(r.signal).toBe('sendMessage');
    expect(r.issues.join('; ')).toMatch(POISON[i]![2]);
  });
  expect(status.pendingMessages).toBe(0);
  // The agent still works: a real message wakes it, it calls a tool in its second and last
  // turn, and completes.
  await agent.sendMessage({ message: 'after the poison\n@tool Glob {"pattern":"still-here-*"}', from: 'ops' });
  expect(await agent.result()).toMatchObject({ status: 'completed', turns: 2, toolUses: 1, maxTurnsReached: true });
  expect(await taskFailures(agentId)).toBe(0);
  // The model saw the good message only.
  const asked = h.model.log.entries().map((e) => e.rawBody).join('\n');
  expect(asked).toContain('after the poison');
  expect(asked).not.toContain('ignored: the wire carries the poison');
});

test('a poison update is rejected and a poison query fails; status still answers', async () => {
  const agentId = 'poison-update';
  const agent = await h.forkflow.start({ agentId, prompt: '@reply first', idleTimeout: '5m', maxTurns: 1 });
  await waitFor(async () => (await agent.status()).state === 'idle', 'the agent to go idle');
  const [what, make] = POISON[0]!;
  const handle = hostile(await make()).workflow.getHandle(agentId);
  const rejected = await rejectionOf(handle.executeUpdate('decideApproval', { args: [{ requestId: 'r', decision: 'approve' }] }));
  expect(rejected).toBeInstanceOf(WorkflowUpdateFailedError);
  expect(String((rejected as WorkflowUpdateFailedError).cause?.message)).toMatch(/Invalid decision/);
  const failed = await rejectionOf(handle.query('streamRead', { fromSeq: 0 }));
  expect(failed).toBeInstanceOf(Error);
  expect((await agent.status()).state).toBe('idle');
  expect(await taskFailures(agentId)).toBe(0);
  expect(what).toBeTruthy();
  await agent.cancel();
});

test.each(POISON.map(([what, make, reason], i) => [what, make, reason, i] as const))('a start input that is %s fails the start as invalid input, never a task', async (_what, make, reason, i) => {
  const workflowId = `poison-start-${i}`;
  await hostile(await make()).workflow.start('forkWorkflow', { taskQueue: h.taskQueue, workflowId, args: [{ prompt: 'ignored' }] });
  // Read with the deployment's own client: the failure is encrypted like any other.
  const err = await rejectionOf(h.client.workflow.getHandle(workflowId).result());
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
  expect(cause.type).toBe('InvalidForkInput');
  expect(cause.message).toMatch(reason);
  expect(await taskFailures(workflowId)).toBe(0);
  expect(h.model.log.entries().filter((e) => e.rawBody.includes(workflowId))).toEqual([]);
});

test('after every poison the worker still runs agents', async () => {
  const result = await h.forkflow.fork({ agentId: 'poison-after', prompt: '@reply healthy' }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 'healthy' });
  expect(textOf((await h.forkflow.transcript('poison-after')).at(-1)!)).toBe('healthy');
});

test('recorded without keys: poison signals and a good one, replayed by the guarded worker of test/workflow/replay.test.ts', async () => {
  // A deployment without encryption (the replay test's worker has no keys and no storage either).
  const plain = await startHarness({ name: 'poison-plain', dataConverter: forkflowDataConverter({ env: { FORKFLOW_BLOB_DIR: join(dir, 'plain-blobs') } }) });
  try {
    const agentId = 'poison-recorded';
    const agent = await plain.forkflow.start({ agentId, prompt: '@reply first', idleTimeout: '5m', maxTurns: 2 });
    await waitFor(async () => (await agent.status()).state === 'idle', 'the agent to go idle');
    const liar = (payload: Payload) => new Client({ connection: plain.client.connection, namespace: plain.env.namespace, dataConverter: { payloadCodecs: [{ encode: (ps: Payload[]) => Promise.resolve(ps.map(() => payload)), decode: (ps: Payload[]) => Promise.resolve(ps) }] } });
    for (const i of [0, 2, 4, 7]) await liar(await POISON[i]![1]()).workflow.getHandle(agentId).signal('sendMessage', { message: 'x' });
    await waitFor(async () => (await agent.status()).rejectedSignals.length === 4, 'the poisons to be refused');
    await agent.sendMessage({ message: 'real\n@tool Glob {"pattern":"none-*"}', from: 'ops' });
    expect(await agent.result()).toMatchObject({ status: 'completed', turns: 2 });
    expect(await taskFailures(agentId)).toBe(0);
    await recordHistory(h.client.workflow.getHandle(agentId), 'trust-poison-signals-refused');
  } finally {
    await plain.close();
  }
});
