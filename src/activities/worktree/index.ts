/**
 * Git worktree isolation for agents, as plain Node functions the worker wraps in
 * activities: `createWorktree` before the agent's first tool call, `translatePath` to
 * tell a fork where its inherited paths now live, `finishWorktree` after its terminal
 * status is recorded. They run on the worker that owns the repository.
 */
export type { Worktree, WorktreeOutcome, WorktreeSpec } from './types';
export { createWorktree } from './create';
export { finishWorktree } from './finish';
export { branchNameFor, BRANCH_PREFIX } from './names';
export { translatePath, DEFAULT_WORKTREES_DIR } from './paths';
export { WorktreeError, isWorktreeError, type WorktreeErrorCode } from './errors';
