/**
 * The one error class of the worktree functions. Each failure carries a `code` the
 * activity wrapper can map to an `ApplicationFailure` type, and `retryable` saying
 * whether running the same call again could succeed (a lock held by another git
 * process: yes; not a repository: no). Messages say what to do instead.
 */

export type WorktreeErrorCode =
  /** `git` could not be started (not installed, or not on the worker's PATH). */
  | 'git-missing'
  /** `repoRoot` is missing, not a directory, bare, or not inside a git repository. */
  | 'not-a-repo'
  /** A malformed argument: a field of the wrong type, `baseRef` starting with `-`, `worktreesDir` at the repository's top level. */
  | 'invalid-spec'
  /** The agent id is not a non-empty string, or the branch built from it is not a valid ref. */
  | 'invalid-agent-id'
  /** `baseRef` does not name a commit (or the repository has no commit yet). */
  | 'invalid-base'
  /** Something from an earlier run is in the way (a worktree on another base, a foreign directory, the branch checked out elsewhere). */
  | 'stale-worktree'
  /** `finishWorktree` got a `Worktree` it must not touch (not one forkflow created). */
  | 'invalid-worktree'
  /** A worker without the OS sandbox will not run its git on a repository whose config includes a file forks can write. */
  | 'unsafe-repository'
  /** Any other git failure; git's own message is included. */
  | 'git-failed';

const NOT_RETRYABLE: ReadonlySet<WorktreeErrorCode> = new Set(['git-missing', 'not-a-repo', 'invalid-spec', 'invalid-agent-id', 'invalid-base', 'stale-worktree', 'invalid-worktree', 'unsafe-repository']);

/** A worktree operation failed; `code` says why, the message says what to do. */
export class WorktreeError extends Error {
  override name = 'WorktreeError';
  /** False when repeating the same call cannot help (the activity should not retry). */
  readonly retryable: boolean;

  constructor(
    readonly code: WorktreeErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.retryable = !NOT_RETRYABLE.has(code);
  }
}

/** True for a {@link WorktreeError}, optionally of one `code`. */
export function isWorktreeError(err: unknown, code?: WorktreeErrorCode): err is WorktreeError {
  return err instanceof WorktreeError && (code === undefined || err.code === code);
}
