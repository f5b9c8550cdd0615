/**
 * The OS wall around model-chosen shell commands (the classifier in ../shell is the
 * first): bubblewrap namespaces, one probe per worker, one plan per Bash call.
 */
export { bwrapArgs, type SandboxSpec } from './bwrap-args';
export { describeSandbox, probeSandbox, sandboxAvailability, type SandboxAvailability } from './probe';
export { planShell, type ShellContainment, type ShellPlan, type ShellSandboxContext } from './policy';
