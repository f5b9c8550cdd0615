/**
 * Builds the workflow bundle (workflows + their interceptor modules) once, for workers that
 * should not bundle at start-up (tests, production images: `FORKFLOW_WORKFLOW_BUNDLE`).
 */
import { readFile } from 'node:fs/promises';
import type { DataConverter } from '@temporalio/common';
import { bundleWorkflowCode, type BundleOptions, type WorkerOptions } from '@temporalio/worker';
import { encodesFailures } from '../payloads/data-converter';
import { ENCODED_FAILURES_MARK } from '../payloads/failure-converter';
import { WORKFLOW_INTERCEPTOR_MODULES } from './tracing';

/**
 * Modules loaded once per worker into the reusable workflow context and shared by every
 * workflow, rather than evaluated per workflow (see src/workflows/preload.ts for why and what,
 * and src/shared/base/schema-once.ts for the one cache they share).
 * Workers that bundle at start pass the same list (src/worker/worker.ts).
 */
export const PRELOADED_WORKFLOW_MODULES: readonly string[] = [require.resolve('../workflows/preload'), require.resolve('../shared/base/schema-once')];

/**
 * Webpack's module concatenation (scope hoisting) for the workflow bundle. The SDK bundles in
 * development mode, where every call into another ES module goes through that module's
 * export getters: in the workflow sandbox this made pure-JS SHA-256 (the chained digest of
 * every message a workflow appends) about 50 times slower than with the modules concatenated,
 * ~5 MB/s instead of ~70 MB/s (measured: five 13 MB hashes, 40 s against 0.7 s). Webpack
 * concatenates only modules it can prove safe to, so the workflows' code and its behaviour
 * are the same; the replay tests hold it to that.
 */
export const concatenateWorkflowModules: NonNullable<BundleOptions['webpackConfigHook']> = (config) => ({
  ...config,
  optimization: { ...config.optimization, concatenateModules: true, providedExports: true, usedExports: true },
});

/**
 * Pass the deployment's converter (`forkflowDataConverter()`) when it encrypts: failures that
 * workflows raise are converted inside the bundle, so it must carry the converter that keeps
 * their messages in encrypted attributes.
 */
export async function bundleForkflowWorkflows(logger?: BundleOptions['logger'], dataConverter?: DataConverter): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    preloadModules: [...PRELOADED_WORKFLOW_MODULES],
    webpackConfigHook: concatenateWorkflowModules,
    ...(dataConverter?.failureConverterPath ? { failureConverterPath: dataConverter.failureConverterPath } : {}),
    ...(logger ? { logger } : {}),
  });
  return code;
}

export class WorkflowBundleMismatchError extends Error {
  override name = 'WorkflowBundleMismatchError';
}

/**
 * An encrypting worker refuses a pre-built bundle made without its failure converter: that
 * bundle's workflows would write failure messages to history in plaintext.
 */
export async function checkBundleFor(bundle: NonNullable<WorkerOptions['workflowBundle']>, dataConverter: DataConverter): Promise<void> {
  if (!encodesFailures(dataConverter)) return;
  const code = 'code' in bundle ? bundle.code : await readFile(bundle.codePath, 'utf8');
  if (!code.includes(ENCODED_FAILURES_MARK)) {
    throw new WorkflowBundleMismatchError(
      `The workflow bundle${'codePath' in bundle ? ` ${bundle.codePath}` : ''} was built without encrypted failures, but this worker encrypts (FORKFLOW_ENCRYPTION_KEYS): rebuild it with bundleForkflowWorkflows(logger, forkflowDataConverter()) where the keys are set, or let the worker bundle at start.`,
    );
  }
}
