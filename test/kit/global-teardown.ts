/** Stops the run's dev server. */
export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __forkflowDevServer?: { stop(): Promise<void> } }).__forkflowDevServer?.stop();
}
