/**
 * Which Bash calls run in the OS sandbox, and with what writable: the fork's write
 * policy decides. A read-only fork (`none`) writes nothing but its private `/tmp`; a
 * memory agent (`within`) writes only its memory directory; a `workspace` fork runs
 * unsandboxed unless it opted in, and then writes only its workspace. None of them reach
 * a network.
 *
 * When the sandbox is needed but this worker cannot provide it, the call runs behind the
 * classifier alone (`classifier-only`), or is refused when the fork set `requireSandbox`.
 */
import type { WritePolicy } from '../types';
import type { SandboxSpec } from './bwrap-args';
import type { SandboxAvailability } from './probe';

/** What protected one Bash call, reported with its outcome and in the fork's status. */
export type ShellContainment = 'sandbox' | 'classifier-only' | 'none';

/** A fork's sandbox settings together with what this worker can do. */
export interface ShellSandboxContext {
  availability: SandboxAvailability;
  /** Refuse Bash calls that need the sandbox when it is unavailable (fork option `requireSandbox`). */
  require: boolean;
  /** A `workspace` fork that opted in (`sandbox: { network: false }`). */
  workspace: boolean;
}

/** How one Bash call is to run. */
export type ShellPlan =
  | { kind: 'sandbox'; bwrap: string; spec: SandboxSpec }
  | { kind: 'plain'; containment: Exclude<ShellContainment, 'sandbox'> }
  | { kind: 'refuse'; message: string };

/** The directories a policy lets the command write, or null when it needs no sandbox. */
function writableFor(policy: WritePolicy, root: string, workspaceOptIn: boolean): string[] | null {
  switch (policy.kind) {
    case 'none':
      return [];
    case 'within':
      return [policy.canonicalDir ?? policy.dir];
    case 'workspace':
      return workspaceOptIn ? [root] : null;
  }
}

/** Decides how a Bash call under `policy` runs on this worker. */
export function planShell(policy: WritePolicy, root: string, sandbox: ShellSandboxContext | undefined): ShellPlan {
  const writable = writableFor(policy, root, sandbox?.workspace ?? false);
  if (writable === null) return { kind: 'plain', containment: 'none' };
  const availability = sandbox?.availability ?? { available: false, reason: 'no sandbox was configured for this worker' };
  if (availability.available) return { kind: 'sandbox', bwrap: availability.path, spec: { root, writable } };
  if (sandbox?.require) {
    return {
      kind: 'refuse',
      message: `Bash is refused: this fork requires the OS sandbox (requireSandbox), and this worker cannot provide it (${availability.reason}). Use Read, Glob and Grep instead.`,
    };
  }
  return { kind: 'plain', containment: policy.kind === 'workspace' ? 'none' : 'classifier-only' };
}
