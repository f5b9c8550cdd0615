import { rmSync } from 'node:fs';

/** What global-setup leaves for the teardown (jest runs both in one process). */
export interface TestGlobals {
  __forkflowDevServer?: { stop(): Promise<void> };
  /** The run's folder: the workflow bundle, env.json and the run's payload blobs. */
  __forkflowTestDir?: string;
}

/** Stops the run's dev server and removes the run's folder. */
export default async function globalTeardown(): Promise<void> {
  const globals = globalThis as TestGlobals;
  await globals.__forkflowDevServer?.stop();
  if (globals.__forkflowTestDir) rmSync(globals.__forkflowTestDir, { recursive: true, force: true });
}
