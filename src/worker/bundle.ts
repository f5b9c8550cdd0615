/**
 * Builds the workflow bundle (workflows + their interceptor modules) once, for workers that
 * should not bundle at start-up (tests, production images: `forkflow bundle <file>`).
 */
import { bundleWorkflowCode, type BundleOptions } from '@temporalio/worker';
import { WORKFLOW_INTERCEPTOR_MODULES } from './tracing';

export async function bundleForkflowWorkflows(logger?: BundleOptions['logger']): Promise<string> {
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES, ...(logger ? { logger } : {}) });
  return code;
}
