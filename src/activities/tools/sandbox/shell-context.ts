/**
 * What a fork's Bash calls are contained by, as data: the fork's sandbox settings with what
 * this worker can do (the tool context carries it to the Bash tool, policy.ts plans each call
 * from it), and the containment each call reports. Types only, so that the tool contract
 * (../types.ts) and the plan can both name them without importing each other.
 */
import type { NetworkAllowance } from '../../../shared/tools/network';
import type { SandboxLimits } from './limits';
import type { Refusal } from './net-proxy';
import type { SandboxAvailability } from './probe';

/** What protected one Bash call, reported with its outcome and in the fork's status. */
export type ShellContainment = 'sandbox' | 'classifier-only' | 'none';

/** A fork's sandbox settings together with what this worker can do. */
export interface ShellSandboxContext {
  availability: SandboxAvailability;
  /** Refuse Bash rather than run it unsandboxed (fork option `requireSandbox`). */
  require: boolean;
  /** `bypassPermissions`, allowed by the fork's caller: run outside the sandbox. */
  bypass?: boolean;
  /** Legacy opt-in of a workspace fork (`sandbox: { network: false }`); every call is sandboxed now. */
  workspace?: boolean;
  /** Further directories a writing call may write (what a worktree's commits need of its git directory). */
  writableExtra?: readonly string[];
  /** Paths inside those that stay read-only (where git finds the repository, its alternates). */
  readOnlyExtra?: readonly string[];
  limits?: SandboxLimits;
  /** Hosts the fork's calls may reach over HTTP(S) through the proxy; absent: no network. */
  network?: NetworkAllowance;
  /** Told of each request the proxy refused (the activity logs it). */
  onNetworkRefused?: (refusal: Refusal) => void;
}
