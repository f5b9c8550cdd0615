/**
 * The workflow bundle's entry point: every workflow type forkflow registers. Code reachable
 * from here runs in Temporal's deterministic sandbox (see src/workflows/README.md).
 *
 * @module forkflow/workflows
 */
export { forkWorkflow } from './fork/fork-workflow';
export { snapshotWorkflow } from './snapshot/snapshot-workflow';
export { autoDreamWorkflow } from './dream/dream-workflow';
export { scheduledPromptWorkflow } from './schedule/prompt-workflow';
