/**
 * The tool folders a sandbox shows from the worker's home keep their secrets (issue 42,
 * finding 5). A worker process whose PATH holds `~/.local/bin`, an npm prefix's bin and
 * `~/.cargo/bin` (in a home of the test's own) serves a read-only fork that tries to read,
 * with Bash and with Read: a shell history and a REPL history under `~/.local`, the npm
 * prefix's `etc/npmrc` token, cargo's `credentials.toml`, and the host's
 * `/usr/local/etc/npmrc`. None of them is readable; the tools themselves still run and their
 * packages are still there. On the old code the whole `~/.local`, `~/.npm-global` and
 * `~/.cargo` were bound, and masks left the system mounts out.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ForkflowClient } from '../../src/client';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { startWorkerProcess, type WorkerProcess } from '../kit/processes';
import { script, toolResultsIn, toolStep } from '../kit/tree';

jest.setTimeout(300_000);

let h: Harness;
let worker: WorkerProcess;
let forkflow: ForkflowClient;
let home: string;
let createdNpmrc = false;
const NPMRC = '/usr/local/etc/npmrc';

const SECRETS: Record<string, string> = {
  '.local/share/fish/fish_history': 'SECRET-FISH-HISTORY',
  '.local/state/python_history': 'SECRET-PYTHON-HISTORY',
  '.npm-global/etc/npmrc': '//registry.npmjs.org/:_authToken=SECRET-NPM-TOKEN',
  '.cargo/credentials.toml': '[registry]\ntoken = "SECRET-CARGO-TOKEN"',
};

function put(rel: string, content: string, mode = 0o644): void {
  const p = join(home, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, content, { mode });
}

beforeAll(async () => {
  h = await startHarness({ name: 'home-secrets', noWorker: true });
  // Not under /tmp: the sandbox has a private /tmp of its own, over anything bound there.
  home = mkdtempSync('/var/tmp/forkflow-home-');
  for (const [rel, content] of Object.entries(SECRETS)) put(rel, content);
  put('.local/bin/hello-local', '#!/bin/sh\necho hello from the local bin\n', 0o755);
  put('.local/lib/python3/site-packages/mine.py', 'X = 1\n');
  put('.npm-global/bin/hello-npm', '#!/bin/sh\necho hello from the npm prefix\n', 0o755);
  put('.npm-global/lib/node_modules/mine/index.js', 'module.exports = 1;\n');
  put('.cargo/bin/hello-cargo', '#!/bin/sh\necho hello from cargo\n', 0o755);
  // Everyone may enter (a root worker without a pids cgroup runs read-only calls as nobody).
  for (const d of ['', '.local', '.local/bin', '.local/lib', '.local/share', '.local/share/fish', '.local/state', '.npm-global', '.npm-global/bin', '.npm-global/etc', '.npm-global/lib', '.cargo', '.cargo/bin']) chmodSync(join(home, d), 0o755);
  if (!existsSync(NPMRC)) {
    writeFileSync(NPMRC, '# SECRET-HOST-NPMRC\n');
    createdNpmrc = true;
  }
  const workspace = tempDir('home-ws');
  chmodSync(workspace, 0o755);
  const queue = uniqueTaskQueue('home-secrets');
  forkflow = new ForkflowClient(h.client, { taskQueue: queue });
  const path = [join(home, '.local/bin'), join(home, '.npm-global/bin'), join(home, '.cargo/bin'), process.env.PATH].join(':');
  worker = await startWorkerProcess({ address: h.env.address, taskQueue: queue, modelUrl: h.model.url, workspace, bundlePath: h.env.bundlePath, extraEnv: { HOME: home, PATH: path } });
});

afterAll(async () => {
  await worker?.kill();
  if (createdNpmrc) rmSync(NPMRC, { force: true });
  rmSync(home, { recursive: true, force: true });
  await h.close();
});

test('a read-only fork reads none of the secrets beside the tools, with Bash or Read; the tools still run', async () => {
  const targets = [...Object.keys(SECRETS).map((rel) => join(home, rel)), NPMRC];
  const bash = targets.map((t) => `cat ${t} 2>/dev/null || echo "unreadable ${t}"`).join('; ');
  const run = 'hello-local; hello-npm; hello-cargo; ls ' + join(home, '.npm-global/lib/node_modules') + ' ' + join(home, '.local/lib/python3/site-packages');
  const prompt = script('Look around.', toolStep('Bash', { command: bash }), toolStep('Read', { file_path: join(home, '.local/share/fish/fish_history') }), toolStep('Read', { file_path: join(home, '.cargo/credentials.toml') }), toolStep('Bash', { command: run }), '@reply looked');
  const result = await forkflow.fork({ agentId: 'home-secrets', prompt, permissionMode: 'plan' }, { mode: 'sync' });
  expect(result.status).toBe('completed');
  const [cat, readHistory, readCargo, tools] = toolResultsIn(await forkflow.transcript('home-secrets'));
  const everything = JSON.stringify(await forkflow.transcript('home-secrets'));
  for (const secret of Object.values(SECRETS)) expect(everything).not.toContain(secret.split('=').at(-1)!.replace(/"/g, ''));
  const hostNpmrc = readFileSync(NPMRC, 'utf8').trim();
  expect(cat!.text).not.toContain(hostNpmrc);
  for (const t of targets) expect(cat!.text).toContain(`unreadable ${t}`);
  expect(readHistory!.isError).toBe(true);
  expect(readCargo!.isError).toBe(true);
  expect(tools!.text).toContain('hello from the local bin');
  expect(tools!.text).toContain('hello from the npm prefix');
  expect(tools!.text).toContain('hello from cargo');
  expect(tools!.text).toContain('mine.py');
  expect(tools!.text).toMatch(/^mine$/m);
});
