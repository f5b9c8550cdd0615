/**
 * The self-hosted stack with its mutual TLS switch (FORKFLOW_STACK_MTLS=1, scripts/stack/tls.ts):
 * the Temporal frontend refuses a client without a certificate of the stack's CA — a local
 * user who can open its port can no longer start a `forkWorkflow` — while forkflow's own
 * worker and client, configured by the @temporalio/envconfig TEMPORAL_TLS_* variables alone
 * (as `forkflow worker` is), run a fork through it. The Web UI reaches the frontend with its
 * own certificate and refuses writes. A second UNIX user on the host — the attacker of issue 42's
 * finding 1 — reaches the port but cannot start a workflow, nor read forkflow's client key.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { portsFrom } from '../../scripts/stack/config';
import { startStack, type Stack } from '../../scripts/stack/stack';
import { clientTlsEnv } from '../../scripts/stack/tls';
import { ForkflowClient } from '../../src/client';
import { temporalSettings } from '../../src/client/settings';
import { startOfflineModel, type OfflineModel } from '../../src/offline';
import { createModelClient } from '../../src/worker/model-client';
import { resolveTemporalCli } from '../../src/worker/temporal-cli';
import { createForkflowWorker } from '../../src/worker/worker';
import { tempDir, uniqueTaskQueue } from '../kit/env';
import { freeStackPorts } from '../kit/stack-ports';
import { forkflowConnectionOptions } from '../../src/client/connection-options';

jest.setTimeout(900_000);

let stack: Stack;
let model: OfflineModel;
let dir: string;
const saved = { ...process.env };
const ATTACKER = 'ffstackuser';
let createdUser = false;

beforeAll(async () => {
  dir = tempDir('mtls');
  // PostgreSQL runs as the `postgres` user when the tests run as root: it must reach its folder.
  chmodSync(dir, 0o755);
  [stack, model] = await Promise.all([startStack({ dir: join(dir, 'stack'), ports: portsFrom(await freeStackPorts()), mtls: true }), startOfflineModel()]);
});

afterAll(async () => {
  if (createdUser) spawnSync('userdel', [ATTACKER]);
  process.env = saved;
  await model?.close();
  await stack?.stop();
});

/** What the frontend answers a client connecting with `options`, or why it refused. */
async function systemInfo(options: Parameters<typeof Connection.connect>[0]): Promise<string> {
  try {
    const connection = await Connection.connect(forkflowConnectionOptions({ ...options, connectTimeout: 5_000 }));
    try {
      await connection.workflowService.getSystemInfo({});
      return 'answered';
    } finally {
      await connection.close();
    }
  } catch (err) {
    return `refused: ${(err as Error).message.split('\n')[0]}`;
  }
}

test('without a client certificate of the stack\'s CA the frontend does not answer: no plaintext, no TLS without a certificate', async () => {
  const tls = stack.tls!;
  expect(await systemInfo({ address: stack.address })).toMatch(/^refused/);
  expect(await systemInfo({ address: stack.address, tls: { serverRootCACertificate: readFileSync(tls.ca), serverNameOverride: tls.serverName } })).toMatch(/^refused/);
  // With forkflow's client certificate it answers.
  expect(await systemInfo(stack.connectionOptions)).toBe('answered');
});

test('forkflow\'s worker and client, configured by TEMPORAL_TLS_* alone, run a fork through the mutual TLS frontend', async () => {
  Object.assign(process.env, { TEMPORAL_ADDRESS: stack.address, TEMPORAL_NAMESPACE: stack.namespace, ...clientTlsEnv(stack.tls!) });
  const settings = temporalSettings();
  expect(settings.connectionOptions.tls).toBeTruthy();
  const connection = await Connection.connect(forkflowConnectionOptions(settings.connectionOptions));
  const native = await NativeConnection.connect(settings.connectionOptions);
  const client = new Client({ connection, namespace: settings.namespace });
  const taskQueue = uniqueTaskQueue('mtls');
  const worker = await createForkflowWorker({ connection: native, client, namespace: settings.namespace, taskQueue, anthropic: createModelClient({ apiKey: 'k', baseURL: model.url }), workspaceRoot: tempDir('mtls-ws') });
  try {
    const result = await worker.runUntil(new ForkflowClient(client, { taskQueue }).fork({ agentId: 'over-mtls', prompt: '@reply through mutual TLS' }, { mode: 'sync' }));
    expect(result).toMatchObject({ status: 'completed', text: 'through mutual TLS' });
  } finally {
    await native.close();
    await connection.close();
  }
});

test('the Web UI reads through its own certificate and refuses writes', async () => {
  const namespaces = await fetch(`${stack.uiUrl}/api/v1/namespaces`);
  expect(namespaces.status).toBe(200);
  // An API client (an Authorization header: the UI server skips its browser CSRF check) is refused by the write switch.
  const terminate = await fetch(`${stack.uiUrl}/api/v1/namespaces/default/workflows/over-mtls/terminate`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', authorization: 'Bearer x' } });
  expect(terminate.status).toBe(405);
});

test('a second UNIX user reaches the port but starts nothing, and cannot read forkflow\'s client key', () => {
  if (process.getuid?.() !== 0) throw new Error('this test creates a second UNIX user: run it as root');
  if (spawnSync('id', ['-u', ATTACKER]).status !== 0) {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', ATTACKER]);
    createdUser = true;
  }
  const uid = execFileSync('id', ['-u', ATTACKER]).toString().trim();
  const gid = execFileSync('id', ['-g', ATTACKER]).toString().trim();
  // What any local user can do with a Temporal client of their own: read the key if it can,
  // start a fork on the worker's queue. Theirs is the temporal CLI copied where they can run it
  // (a clone's node_modules may sit under a folder only root can enter, as in root's home).
  const cli = resolveTemporalCli({ install: false });
  if (cli.kind !== 'binary') throw new Error('the temporal CLI is not installed here: run node scripts/bootstrap.mjs');
  const theirCli = join(dir, 'temporal');
  copyFileSync(cli.path, theirCli);
  chmodSync(theirCli, 0o755);
  const attack = join(dir, 'attack.js');
  writeFileSync(attack, `
    const fs = require('node:fs');
    const { spawnSync } = require('node:child_process');
    let key = 'read';
    try { fs.readFileSync(${JSON.stringify(stack.tls?.client.key ?? join(dir, 'stack', 'tls', 'client.key'))}); } catch (e) { key = e.code; }
    const input = JSON.stringify({ prompt: 'x', mcpServers: { evil: { command: 'sh', args: ['-c', 'id'] } } });
    const r = spawnSync(${JSON.stringify(theirCli)}, ['workflow', 'start', '--address', ${JSON.stringify(stack.address)}, '--task-queue', 'forkflow', '--type', 'forkWorkflow', '--workflow-id', 'planted-by-another-user', '--input', input], { encoding: 'utf8', timeout: 30000 });
    const start = r.status === 0 ? 'started' : 'refused';
    process.stdout.write(JSON.stringify({ key, start, said: (r.stderr || '').slice(0, 300) }));
  `);
  chmodSync(dir, 0o755);
  chmodSync(attack, 0o644);
  const r = spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', process.execPath, attack], { encoding: 'utf8', timeout: 60_000 });
  expect(JSON.parse(r.stdout || '{}')).toMatchObject({ key: 'EACCES', start: 'refused' });
});
