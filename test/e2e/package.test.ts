/**
 * forkflow as others consume it: the project is packed (`npm pack`), the tarball installed
 * into a scratch project outside the repository (dependencies from the local npm cache), and
 * a script there imports only the package's entry points — `forkflow` (client),
 * `forkflow/workflows` (as its worker's workflowsPath), `forkflow/activities`,
 * `forkflow/worker` and `forkflow/testing` (the offline model) — runs its own worker against
 * the test dev server, and runs a fork to completion.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir, testEnv, uniqueTaskQueue } from '../kit/env';

jest.setTimeout(300_000);

const ROOT = resolve(__dirname, '..', '..');

// The consumer's install is about 400 MB: removed with the tarball when the file ends.
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

// The consumer's script: plain CommonJS, nothing but the package's public entry points.
const SCRIPT = `
const { Client, Connection } = require('@temporalio/client');
const { NativeConnection, Worker } = require('@temporalio/worker');
const { ForkflowClient } = require('forkflow');
const { createActivities } = require('forkflow/activities');
const { createModelClient } = require('forkflow/worker');
const { startOfflineModel } = require('forkflow/testing');

async function main() {
  const { ADDRESS: address, NAMESPACE: namespace, TASK_QUEUE: taskQueue, WORKSPACE: workspaceRoot } = process.env;
  const model = await startOfflineModel();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  const native = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: native,
    namespace,
    taskQueue,
    workflowsPath: require.resolve('forkflow/workflows'),
    activities: createActivities({ anthropic: createModelClient({ apiKey: 'offline', baseURL: model.url }), client, workspaceRoot }),
  });
  const forkflow = new ForkflowClient(client, { taskQueue });
  // Queries on a closed run are answered by a worker replaying it: read while it runs.
  const { result, transcript } = await worker.runUntil(async () => {
    const result = await forkflow.fork({ agentId: 'packaged-' + taskQueue, prompt: 'Read it.\\n@tool Read {"file_path":"hello.txt"}\\n@reply read it' }, { mode: 'sync' });
    return { result, transcript: await forkflow.transcript('packaged-' + taskQueue) };
  });
  await native.close();
  await connection.close();
  await model.close();
  process.stdout.write(JSON.stringify({ result, transcript }));
}
main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
`;

test('the packed package installs elsewhere and runs a fork with its own worker', () => {
  expect(existsSync(join(ROOT, 'lib', 'client', 'index.js'))).toBe(true); // built by scripts/bootstrap.mjs
  const packDir = tempDir('pack');
  made.push(packDir);
  run('npm', ['pack', '--silent', '--pack-destination', packDir], ROOT);
  const tarball = readdirSync(packDir).find((f) => f.endsWith('.tgz'));
  expect(tarball).toBeDefined();

  const scratch = tempDir('consumer');
  made.push(scratch);
  expect(scratch.startsWith(ROOT)).toBe(false);
  // The README's install note: one SDK copy (workflow-streams pins 1.23.0), by the consumer's own overrides.
  const sdk = Object.fromEntries(['activity', 'client', 'common', 'proto', 'workflow'].map((p) => [`@temporalio/${p}`, '1.24.0']));
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'forkflow-consumer', private: true, dependencies: { forkflow: `file:${join(packDir, tarball!)}` }, overrides: { '@temporalio/workflow-streams': sdk } }));
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], scratch);
  writeFileSync(join(scratch, 'consume.js'), SCRIPT);
  writeFileSync(join(scratch, 'hello.txt'), 'hello from the consumer\n');

  // Only what the exports map names is reachable: internal paths are not.
  const internal = spawnSync('node', ['-e', "require('forkflow/lib/worker/config')"], { cwd: scratch, encoding: 'utf8' });
  expect(internal.status).not.toBe(0);
  expect(internal.stderr).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');

  const env = testEnv();
  const out = run('node', ['consume.js'], scratch, { ...process.env, ADDRESS: env.address, NAMESPACE: env.namespace, TASK_QUEUE: uniqueTaskQueue('packaged'), WORKSPACE: scratch });
  const { result, transcript } = JSON.parse(out) as { result: { status: string; text: string; toolUses: number }; transcript: unknown[] };
  expect(result).toMatchObject({ status: 'completed', text: 'read it', toolUses: 1 });
  expect(JSON.stringify(transcript)).toContain('hello from the consumer');
});
