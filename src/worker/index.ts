/**
 * `forkflow/worker`: what a service needs to run forkflow's workflows and activities on its
 * own worker — the ready-made worker factories, the workflow bundle, the model client, the
 * Node runtime (logs, metrics), the worker's settings from the environment and its operator's
 * consent (what start inputs may make it run: docs/guides/security-model.md).
 *
 * @example
 * const worker = await createForkflowWorker({ connection, client, namespace: 'default', taskQueue: 'forkflow',
 *   anthropic: createModelClient({ apiKey: process.env.ANTHROPIC_API_KEY }), workspaceRoot: '/srv/work' });
 * await worker.run();
 *
 * @module forkflow/worker
 */
export { createForkflowWorker, createModelWorker, createWorkspaceWorker, type ForkflowWorkerOptions } from './worker';
export { bundleForkflowWorkflows, WorkflowBundleMismatchError } from './bundle';
export { createModelClient } from './model-client';
export { createProviderClients, providersFromEnv, InvalidProvidersError } from './providers';
export { catalogueOf } from '../shared/providers/agent-provider';
export { installRuntime, isRuntimeInstallError, RuntimeInstallError, type InstalledRuntime, type RuntimeSettings } from './runtime';
export { forkflowSettings, type ForkflowSettings } from './config';
export { InvalidConsentError, operatorConsent, parseMcpCommandRule, type ConsentFlags } from './consent';
export type { McpCommandRule, OperatorConsent } from '../activities/consent';
export { tracingFromEnv, type Tracing } from './tracing';
export { forkflowDataConverter, type DataConverterOptions } from '../payloads/data-converter';
export { storageSettings, type StorageSettings } from '../payloads/storage';
export { FsStorageDriver, type FsDriverStats } from '../payloads/fs-driver';
export {
  createToolWorker,
  defineHook,
  defineTool,
  serviceActivities,
  serviceContractJsonSchemas,
  toolDefinitions,
  toolRoutes,
  SERVICE_HOOK_ACTIVITY,
  SERVICE_TOOL_ACTIVITY,
  type ServiceHook,
  type ServiceHookAnswer,
  type ServiceHookCall,
  type ServiceTool,
  type ServiceToolCall,
  type ServiceToolResult,
  type ToolCallContext,
  type ToolOutput,
  type ToolWorkerOptions,
} from './tools';
