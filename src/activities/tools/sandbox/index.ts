/**
 * The OS wall around model-chosen shell commands (the classifier in ../shell is the
 * first): bubblewrap namespaces over an allow-listed view of the filesystem, resource
 * limits, one probe per worker, one plan per Bash call.
 */
export { bwrapArgs, SANDBOX_HOME, type Mask, type SandboxSpec } from './bwrap-args';
export { callCgroup, releaseCgroup, DEFAULT_LIMITS, detectProcessCap, ulimitScript, type CallCgroup, type ProcessCap, type SandboxLimits } from './limits';
export { describeSandbox, probeSandbox, sandboxAvailability, workspaceReachWarning, type SandboxAvailability } from './probe';
export { planShell, type ShellPlan, type SpecBase } from './policy';
export type { ShellContainment, ShellSandboxContext } from './shell-context';
export { canSee, canonicalish, hiddenInside, systemEntries, viewFor, within, type FsView, type SystemEntry } from './view';
export { defaultStateDir, protectedPaths } from './protected';
export { addressRefusal, startNetProxy, type NetProxy, type Refusal } from './net-proxy';
export { bridgeArgs, proxyEnvironment, SANDBOX_PROXY_DIR, SANDBOX_PROXY_PORT, START_BRIDGE } from './net-bridge';
