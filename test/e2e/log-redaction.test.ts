/**
 * Encryption means encryption, in the logs too: a `forkflow worker` process with keys set (at
 * DEBUG, its most talkative) runs forks whose prompt, tool call, tool result, model reply and
 * a provider error (a 400 that quotes the request) carry marker strings, and an approval whose
 * Bash command carries one; everything the process writes is scanned, and no marker is in it —
 * while the failed call and the approval are logged (their ids, their kinds). Without keys the
 * worker says at start that payloads are stored in plaintext; with keys it does not.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ForkflowClient } from '../../src/client';
import { PLAINTEXT_NOTICE, forkflowDataConverter } from '../../src/payloads/data-converter';
import { startOfflineModel, type OfflineModel } from '../../src/offline';
import { bundleForkflowWorkflows } from '../../src/worker/bundle';
import { tempDir, testEnv, uniqueTaskQueue } from '../kit/env';
import { startWorkerProcess, type WorkerProcess } from '../kit/processes';
import { waitFor } from '../kit/wait';
import { forkflowConnectionOptions } from '../../src/client/connection-options';

jest.setTimeout(180_000);

const id = randomBytes(4).toString('hex');
const MARK = {
  prompt: `PROMPTMARK${id}`,
  providerError: `PROVIDERMARK${id}`,
  toolInput: `TOOLINPUTMARK${id}`,
  toolResult: `TOOLRESULTMARK${id}`,
  reply: `REPLYMARK${id}`,
  command: `COMMANDMARK${id}`,
};
const dir = tempDir('log-redaction');
const keys = `logs-${id}:${randomBytes(32).toString('base64')}`;
const env = { FORKFLOW_ENCRYPTION_KEYS: keys, FORKFLOW_BLOB_DIR: join(dir, 'blobs'), FORKFLOW_RESPONSE_DIR: join(dir, 'responses') };
const dataConverter = forkflowDataConverter({ env });
const workspace = tempDir('log-redaction-ws');

let model: OfflineModel;
let worker: WorkerProcess;
let connection: Connection;
let forkflow: ForkflowClient;
let taskQueue: string;
let bundlePath: string;

beforeAll(async () => {
  writeFileSync(join(workspace, `${MARK.toolResult}.txt`), 'x');
  bundlePath = join(dir, 'bundle.js');
  const quiet = () => undefined;
  writeFileSync(bundlePath, await bundleForkflowWorkflows({ log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet }, dataConverter));
  model = await startOfflineModel();
  taskQueue = uniqueTaskQueue('log-redaction');
  const { address, namespace } = testEnv();
  worker = await startWorkerProcess({ address, taskQueue, modelUrl: model.url, workspace, bundlePath, extraEnv: { ...env, FORKFLOW_LOG_LEVEL: 'DEBUG' } });
  connection = await Connection.connect(forkflowConnectionOptions({ address }));
  forkflow = new ForkflowClient(new Client({ connection, namespace, dataConverter }), { taskQueue });
}, 180_000);

afterAll(async () => {
  await worker?.kill();
  await connection?.close();
  await model?.close();
});

test('with keys set, no marker from a prompt, a tool or a model reaches the worker’s log', async () => {
  // A provider error that quotes the request (as a 400 does).
  model.faults.add({ kind: 'status', status: 400, message: `prompt is too long: "${MARK.prompt} … ${MARK.providerError}"`, match: (e) => e.rawBody.includes('provider-case') });
  const failed = await forkflow.fork({ agentId: `logs-fail-${id}`, prompt: `provider-case ${MARK.prompt}\n@reply never` }, { mode: 'sync' });
  expect(failed.status).toBe('failed');
  // The client, holding the keys, reads the whole message.
  expect(failed.error).toContain(MARK.providerError);

  // A tool call whose input and result carry markers, and a reply that does.
  const done = await forkflow.fork({ agentId: `logs-tools-${id}`, prompt: `${MARK.prompt}\n@tool Glob {"pattern":"${MARK.toolInput}*"}\n@tool Glob {"pattern":"TOOLRESULTMARK*"}\n@reply ${MARK.reply}` }, { mode: 'sync' });
  expect(done).toMatchObject({ status: 'completed', text: MARK.reply });

  // An approval whose input carries a marker (the request is logged), denied. A FileWrite: under
  // `bubble` a sandboxed Bash runs unasked, a file edit still asks.
  const approvalId = `logs-approval-${id}`;
  const pending = await forkflow.start({ agentId: approvalId, permissionMode: 'bubble', prompt: `@tool FileWrite {"file_path":"out.txt","content":"${MARK.command}"}\n@reply asked` });
  const requestId = await waitFor(async () => (await pending.status()).approvals[0]?.requestId, 'the approval request');
  await forkflow.deny(approvalId, requestId, { reason: 'not today', by: 'ops' });
  expect(await pending.result()).toMatchObject({ status: 'completed', text: 'asked' });

  // Everything the worker wrote, after it stopped (its last lines flushed).
  await worker.kill();
  const logged = worker.output();
  const leaked = Object.entries(MARK).filter(([, mark]) => logged.includes(mark)).map(([what]) => what);
  expect(leaked).toEqual([]);
  // The log is there, and it did record the failure and the approval: by ids and kinds.
  expect(logged).toContain('Activity failed');
  expect(logged).toContain(`logs-fail-${id}`);
  expect(logged).toContain('fork.approval_requested');
  expect(logged).toContain('[redacted');
  expect(logged).not.toContain(PLAINTEXT_NOTICE);
});

test('without keys the worker says at start that payloads are stored in plaintext', async () => {
  const { address } = testEnv();
  const plain = await startWorkerProcess({ address, taskQueue: uniqueTaskQueue('log-plain'), modelUrl: model.url, workspace, bundlePath, extraEnv: { FORKFLOW_ENCRYPTION_KEYS: '', FORKFLOW_ENCRYPTION_KEY_FILE: '', FORKFLOW_BLOB_DIR: join(dir, 'blobs') } });
  await plain.kill();
  expect(plain.output()).toContain(PLAINTEXT_NOTICE);
});
