/**
 * How one Bash call runs: inside the OS sandbox, always, unless someone opted out on
 * purpose. The fork's write policy says what the sandbox makes writable — nothing for a
 * read-only or plan fork (`none`) and nothing for a memory agent either (`within`: its
 * memory changes only through FileWrite and FileEdit, whose paths the post-run audit checks,
 * as seed 000's AutoMemFilter allows its Bash only read-only commands), the workspace (and a
 * worktree's git directory) for a writing fork (`workspace`) — and the
 * fork's view (view.ts) what it can read. No call reaches a network, unless the fork
 * allows named hosts: then through the worker's filtering proxy (net-proxy.ts) only.
 *
 * Outside the sandbox a call runs only by an explicit opt-out, named in its containment:
 * - the fork's caller chose `bypassPermissions` (containment `none`; a fork that writes
 *   nothing still gets the classifier, `classifier-only`);
 * - the worker cannot sandbox and was started with FORKFLOW_ALLOW_UNSANDBOXED=1, or
 *   FORKFLOW_SANDBOX=off (the same containments), unless the fork set `requireSandbox`.
 * Otherwise a worker that cannot sandbox refuses the call, saying why.
 */
import type { NetworkAllowance } from '../../../shared/tools/network';
import type { WritePolicy } from '../types';
import type { SandboxSpec } from './bwrap-args';
import { DEFAULT_LIMITS, type ProcessCap, type SandboxLimits } from './limits';
import type { ShellContainment, ShellSandboxContext } from './shell-context';

/** The parts of the sandbox spec a plan fills in besides the writable directories. */
export type SpecBase = Omit<SandboxSpec, 'writable' | 'tmpBytes'>;

/** How one Bash call is to run. */
export type ShellPlan =
  | { kind: 'sandbox'; bwrap: string; spec: SandboxSpec; cap: ProcessCap; setpriv?: string; limits: SandboxLimits; writes: boolean; network?: NetworkAllowance }
  | { kind: 'plain'; containment: Exclude<ShellContainment, 'sandbox'>; writes: boolean; limits: SandboxLimits }
  | { kind: 'refuse'; message: string };

/**
 * The directories a policy lets a shell command write: a memory agent's (`within`) none, so
 * that nothing changes its memory by a route the post-run audit cannot see (S0-30).
 */
function writableFor(policy: WritePolicy, root: string, extra: readonly string[]): string[] {
  switch (policy.kind) {
    case 'none':
    case 'within':
      return [];
    case 'workspace':
      return [root, ...extra];
  }
}

/** Decides how a Bash call under `policy` runs on this worker. */
export function planShell(policy: WritePolicy, base: SpecBase, sandbox: ShellSandboxContext | undefined): ShellPlan {
  const limits = sandbox?.limits ?? DEFAULT_LIMITS;
  const writes = policy.kind === 'workspace';
  const unsandboxed: ShellPlan = { kind: 'plain', containment: policy.kind === 'workspace' ? 'none' : 'classifier-only', writes, limits };
  if (sandbox?.bypass) return unsandboxed;
  const availability = sandbox?.availability ?? { available: false, reason: 'no sandbox was configured for this worker' };
  if (availability.available) {
    const spec: SandboxSpec = { ...base, writable: writableFor(policy, base.root, sandbox?.writableExtra ?? []), tmpBytes: limits.tmpBytes };
    // A root worker without a pids cgroup caps processes by running calls that write nothing as nobody.
    const setpriv = availability.processCap.kind === 'unprivileged-user' && !writes ? availability.setpriv : undefined;
    const network = sandbox?.network ? { network: sandbox.network } : {};
    return { kind: 'sandbox', bwrap: availability.path, spec, cap: availability.processCap, ...(setpriv ? { setpriv } : {}), limits, writes, ...network };
  }
  if (sandbox?.require) {
    return {
      kind: 'refuse',
      message: `Bash is refused: this fork requires the OS sandbox (requireSandbox), and this worker cannot provide it (${availability.reason}). Use Read, Glob and Grep instead.`,
    };
  }
  if (availability.allowUnsandboxed) return unsandboxed;
  return {
    kind: 'refuse',
    message: `Bash is refused: this worker cannot run shell commands in the OS sandbox (${availability.reason}) and was not started to run them without it. Use Read, Glob and Grep${writes ? ', FileEdit and FileWrite' : ''} instead.`,
  };
}
