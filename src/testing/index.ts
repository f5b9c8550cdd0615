/**
 * `forkflow/testing`: the offline model (an Anthropic Messages API emulator driven by
 * scripts in the prompt: no key, no network), a test stack (a Temporal dev server, the
 * offline model, a worker and a client in one call), and evals over recorded agents (cases
 * forked from their past turns, with a report to assert on), for tests of services built on forkflow.
 *
 * @example
 * const stack = await startDevStack({ workspaceRoot: dir });
 * const result = await stack.client.fork({ prompt: 'Say hi.\n@reply hi' }, { mode: 'sync' });
 * await stack.stop();
 *
 * @module forkflow/testing
 */
export { startDevStack, type DevStack, type DevStackOptions } from './dev-stack';
export { startOfflineModel, type OfflineModel, type OfflineModelOptions } from '../offline';
export { startDevServer, type DevServer, type DevServerOptions } from '../worker/dev-server';
export * from './eval';
