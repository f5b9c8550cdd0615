/**
 * External storage on S3, against a real S3-compatible server (versitygw on a temp folder,
 * test/kit/s3-server.ts) configured the way a deployment is, through FORKFLOW_STORAGE=s3 and
 * the AWS SDK's credential chain: a fork from an inline parent of 3 MB completes, its
 * transcript reads back identically through the client and the CLI, the payloads are objects
 * under the prefix while history holds only references, and the codec server resolves them.
 */
import { StorageDriverClaim } from '@temporalio/common';
import { decodeReferencePayload, isReferencePayload } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import { stripCacheControl, type MessageParam } from '../../src/shared/messages-api/anthropic';
import { canonicalJson, utf8Length } from '../../src/shared/base/hash';
import { startCodecServer } from '../../src/payloads/codec-server';
import { newToken } from '../../src/payloads/endpoint-guard';
import { forkflowDataConverter } from '../../src/payloads/data-converter';
import { storageSettings } from '../../src/payloads/storage';
import { startHarness, type Harness } from '../kit/env';
import { runForkflow } from '../kit/processes';
import { largestPayload, payloadsOf, rawHistory, referenceCount } from '../kit/raw-history';
import { bodyOf, messageRequests } from '../kit/requests';
import { startS3Server, type S3Server } from '../kit/s3-server';
import { bigSnapshot } from '../kit/snapshots';

/** The SDK's default threshold: every payload at least this big goes to the bucket. */
const THRESHOLD = 256 * 1024;
const PREFIX = 'team/forkflow';

let s3: S3Server;
/** About payload sizes, not context windows: the model takes any size here, and the agents manage nothing. */
const NO_WINDOW = 1_000_000_000;

let h: Harness;
/** The variables a deployment sets (credentials aside: those are the AWS SDK's). */
let storageEnv: Record<string, string>;

beforeAll(async () => {
  s3 = await startS3Server('forkflow-payloads');
  // The AWS SDK's default chain reads these, in this process and in the CLI's.
  process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
  storageEnv = { FORKFLOW_STORAGE: 's3', FORKFLOW_S3_BUCKET: s3.bucket, FORKFLOW_S3_PREFIX: PREFIX, FORKFLOW_S3_ENDPOINT: s3.endpoint, FORKFLOW_S3_REGION: s3.region };
  h = await startHarness({ name: 's3', model: { contextWindow: NO_WINDOW }, dataConverter: forkflowDataConverter({ storage: storageSettings(storageEnv) }) });
}, 15 * 60_000);

afterAll(async () => {
  await h?.close();
  await s3?.close();
});

const bytesOf = (messages: MessageParam[]) => utf8Length(canonicalJson(messages));
const asSent = (messages: MessageParam[]) =>
  messages.map((m) => ({ role: m.role, content: (typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content).map(stripCacheControl) }));

test('a fork from an inline parent of 3 MB runs with its payloads in the bucket and references in history', async () => {
  const parent = bigSnapshot({ conversationBytes: 3_000_000, pendingToolUses: 1 });
  expect(bytesOf(parent.messages)).toBeGreaterThan(3_000_000);
  const before = new Set(await s3.keys());

  const result = await h.forkflow.fork({ agentId: 's3-inline', parent, prompt: 'On S3.\n@reply s3 done', budget: { maxTokens: 100_000_000 }, contextManagement: 'off' }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 's3 done' });

  // The model got the parent's conversation as given: the worker read the input back from S3.
  const sent = messageRequests(h.model).find((e) => JSON.stringify(e.body ?? '').includes('On S3.'))!;
  expect(asSent(bodyOf(sent).messages.slice(0, parent.messages.length - 1))).toEqual(asSent(parent.messages.slice(0, -1)));
  // The transcript reads back identically: the parent, then the fork's own turn.
  const transcript = await h.forkflow.transcript('s3-inline');
  expect(asSent(transcript.slice(0, parent.messages.length - 1))).toEqual(asSent(parent.messages.slice(0, -1)));
  expect(asSent(bodyOf(sent).messages)).toEqual(asSent(transcript.slice(0, -1)));

  // History: nothing over the threshold inline, references in its place, each naming an
  // object of this bucket that exists under the prefix.
  const history = await rawHistory(h.client, 's3-inline');
  expect(largestPayload(history)).toBeLessThan(THRESHOLD);
  expect(referenceCount(history)).toBeGreaterThan(0);
  const keys = new Set(await s3.keys());
  const written = [...keys].filter((k) => !before.has(k));
  expect(written.length).toBeGreaterThan(0);
  for (const key of written) expect(key).toMatch(/^team\/forkflow\/v0\/ns\/[^/]+\/(wt|at)\/.+\/d\/sha256\/[0-9a-f]{64}$/);
  const claims = payloadsOf(history.events).filter(isReferencePayload).map((p) => decodeReferencePayload(p));
  expect(claims.length).toBe(referenceCount(history));
  for (const ref of claims) {
    expect(ref.driverName).toBe('aws.s3driver');
    expect(ref.claimData.bucket).toBe(s3.bucket);
    expect(keys.has(`${PREFIX}/${ref.claimData.key}`)).toBe(true);
  }
  console.log(`s3: ${bytesOf(parent.messages)} B parent → ${history.bytes} B history, ${claims.length} references, ${written.length} objects`);
});

test('the CLI, configured by the same variables, prints the same transcript', async () => {
  const transcript = await h.forkflow.transcript('s3-inline');
  const cli = await runForkflow(['--address', h.env.address, '--task-queue', h.taskQueue, '--json', 'transcript', 's3-inline'], storageEnv);
  expect(cli.status).toBe(0);
  expect(cli.stdout).toBe(`${JSON.stringify(transcript, null, 2)}\n`);
  // A bad setting stops it before it connects: one line, a usage error.
  const wrong = await runForkflow(['--address', h.env.address, '--json', 'transcript', 's3-inline'], { ...storageEnv, FORKFLOW_S3_BUCKET: '' });
  expect(wrong.status).toBe(2);
  expect(wrong.stderr).toMatch(/FORKFLOW_S3_BUCKET: is missing/);
});

test('the codec server resolves an S3 reference from history; a claim on another bucket is refused', async () => {
  const dataConverter = forkflowDataConverter({ env: { FORKFLOW_STORAGE: 'off' }, storage: storageSettings(storageEnv) });
  const history = await rawHistory(h.client, 's3-inline');
  const ref = payloadsOf(history.events).find(isReferencePayload)!;
  const server = await startCodecServer({ dataConverter, token: newToken() });
  try {
    const toJson = (p: temporal.api.common.v1.IPayload) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
    });
    const res = await fetch(`${server.endpoint}/decode`, { method: 'POST', body: JSON.stringify({ payloads: [toJson(ref)] }) });
    expect(res.status).toBe(200);
    const [decoded] = ((await res.json()) as { payloads: { data: string }[] }).payloads;
    expect(Buffer.from(decoded!.data, 'base64').length).toBeGreaterThanOrEqual(THRESHOLD);
  } finally {
    await server.close();
  }
  const driver = dataConverter.externalStorage!.drivers[0]!;
  const claim = decodeReferencePayload(ref).claimData;
  const refusal = (claimData: Record<string, string>) =>
    driver.retrieve({}, [new StorageDriverClaim(claimData)]).then(
      () => 'retrieved',
      (err: Error) => (err.cause as Error | undefined)?.message,
    );
  expect(await refusal({ ...claim, bucket: 'someone-elses' })).toMatch(/stores in "forkflow-payloads"/);
  expect(await refusal({ ...claim, key: '../../etc/passwd' })).toMatch(/not one the S3 driver writes/);
});
