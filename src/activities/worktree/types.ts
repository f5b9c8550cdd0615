/**
 * The worktree functions' inputs and results: plain JSON-safe objects, since they cross
 * the activity boundary and are kept in workflow state.
 */

/** What `createWorktree` needs. */
export interface WorktreeSpec {
  /** The repository (its top level, or any directory inside it) on this worker. */
  repoRoot: string;
  /** The agent the worktree is for; names the branch and directory (see `branchNameFor`). */
  agentId: string;
  /** Commit-ish the branch starts from. Default `HEAD` of `repoRoot`. */
  baseRef?: string;
  /**
   * Folder for worktrees, absolute or relative to the repository's top level. Default
   * `.forkflow/worktrees`. A `.gitignore` holding `*` is written into it when it lies
   * inside the repository, so the parent's checkout does not see the worktrees.
   */
  worktreesDir?: string;
}

/** A worktree made for one agent. */
export interface Worktree {
  /** Absolute path of the worktree's checkout. */
  path: string;
  /** Branch checked out there: `forkflow/<safe agent id>`. */
  branch: string;
  /** Full commit id the branch started from; "changed" is measured against it. */
  baseCommit: string;
  /** Canonical top level of the repository the worktree belongs to. */
  repoRoot: string;
}

/** What `finishWorktree` did. */
export type WorktreeOutcome =
  /** Nothing changed: worktree and branch are gone. */
  | { kind: 'removed' }
  /** Something changed: worktree and branch are kept for the caller. */
  | {
      kind: 'kept';
      path: string;
      branch: string;
      /** Paths relative to the worktree, sorted: committed since `baseCommit` or not yet committed. */
      changedFiles: string[];
      /** Commits reachable from the branch or the worktree's HEAD but not from `baseCommit`. */
      commits: number;
    };
