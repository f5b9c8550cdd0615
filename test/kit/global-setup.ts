/**
 * Once per jest run (the `temporal` project): start one in-memory Temporal dev server with
 * the Web UI, bundle the workflow code once, and publish both to the test files through a
 * small JSON file named in FORKFLOW_TEST_ENV.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleForkflowWorkflows } from '../../src/worker/bundle';
import { startDevServer } from '../../src/worker/dev-server';
import type { TestEnvFile } from './env';
import type { TestGlobals } from './global-teardown';

export default async function globalSetup(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'forkflow-test-'));
  const [server, bundle] = await Promise.all([startDevServer({ logLevel: 'error' }), bundleForkflowWorkflows(quietLogger)]);
  const bundlePath = join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle);
  const env: TestEnvFile = { address: server.address, namespace: server.namespace, uiUrl: server.uiUrl, bundlePath, dir };
  const envPath = join(dir, 'env.json');
  writeFileSync(envPath, JSON.stringify(env));
  process.env.FORKFLOW_TEST_ENV = envPath;
  // One blob folder for the run's external payload storage: test workers, clients and the
  // CLI processes they spawn all inherit it, as a deployment's hosts share theirs.
  process.env.FORKFLOW_BLOB_DIR ??= join(dir, 'blobs');
  Object.assign(globalThis as TestGlobals, { __forkflowDevServer: server, __forkflowTestDir: dir });
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};
