/**
 * The contract between the built-in tools and whoever runs them (a Temporal activity in
 * production, a test directly): what a tool call may touch, how it reports progress and
 * cancellation, and what it returns. Node-only code; the JSON-safe parts (`WritePolicy`,
 * `ToolOutcome`) may cross the activity boundary as they are.
 */

import type { ToolResultContentBlock } from '../../shared/wire/activity-io';
import type { ShellContainment, ShellSandboxContext } from './sandbox/shell-context';
import type { FsView } from './sandbox/view';

/**
 * Where file tools (FileEdit, FileWrite) and Bash may write. What any tool may read is the
 * fork's view (`ToolContext.view`).
 *
 * - `workspace`: anywhere under the workspace root (canonically: symlinks resolved).
 * - `within`: only inside `dir`, the AutoMem memory directory. Paths must be absolute
 *   strings. `canonicalDir`, when set (see `pinWritePolicy`), is the canonical form taken
 *   when the fork started; if `dir` later resolves elsewhere, every write is refused.
 * - `none`: no writes at all.
 */
export type WritePolicy =
  | { kind: 'workspace'; memory?: { dir: string; canonicalDir: string } }
  | { kind: 'within'; dir: string; canonicalDir?: string }
  | { kind: 'none' };

/** Verdict of the read-only shell classifier (written elsewhere, injected here). */
export interface ShellVerdict {
  readOnly: boolean;
  /** Why the command is not read-only; shown to the model when Bash is denied. */
  reason?: string;
}

/** Decides whether a shell command only reads. Must fail closed (readOnly false) on doubt. */
export type ShellClassifier = (command: string) => Promise<ShellVerdict>;

/** Everything a tool call needs from its caller. */
export interface ToolContext {
  /** Absolute workspace root; relative paths resolve against it, Bash runs in it. */
  root: string;
  /** The activity's cancellation. When it aborts, the tool stops and throws an AbortError. */
  signal: AbortSignal;
  /** Called about once a second during long work; details are small and JSON-safe. */
  heartbeat: (details?: unknown) => void;
  writePolicy: WritePolicy;
  /**
   * The read-only classifier. Where a call that must not write runs outside the sandbox
   * (an explicit opt-out), it decides: the command runs only if this says it is read-only,
   * and absent means such calls are denied. Inside the sandbox it only advises (a note
   * when such a command fails).
   */
  classifyShell?: ShellClassifier;
  /**
   * The OS sandbox for Bash (see sandbox/policy.ts): what this worker can provide and what
   * the fork asked for. Absent means no sandbox is available: Bash is refused.
   */
  shellSandbox?: ShellSandboxContext;
  /**
   * What the fork may read (sandbox/view.ts), canonical paths. Absent: its workspace (the
   * canonical `root`) and the system's programs and libraries, with `.forkflow/` hidden.
   */
  view?: FsView;
}

/** What a tool call returns to the model; failures it can act on have `isError: true`. */
export interface ToolOutcome {
  content: string;
  /** Read of an image or a PDF: the blocks the model is shown instead of `content`. */
  blocks?: ToolResultContentBlock[];
  isError: boolean;
  /** Canonical paths of the files this call wrote (FileEdit, FileWrite). */
  touched?: string[];
  /** Bash only: what contained the command (OS sandbox, classifier alone, or nothing). */
  containment?: ShellContainment;
}
