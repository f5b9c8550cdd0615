/**
 * `finishWorktree`: at the end of an agent's run, remove its worktree and branch when it
 * changed nothing, or keep both and say what changed. Safe to retry: a removal that a
 * crash interrupted is completed, and a finished worktree finishes again as `removed`.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { isUnchanged, measureChanges } from './changes';
import { WorktreeError } from './errors';
import { gitOk, gitToplevel } from './git';
import { BRANCH_PREFIX } from './names';
import { branchTip, isAncestor, listWorktrees, readRecord, removeRecord, writeRecord, type WorktreeEntry } from './registry';
import { withRepoLock } from './repo-lock';
import type { Worktree, WorktreeOutcome } from './types';

function invalid(what: string): WorktreeError {
  return new WorktreeError('invalid-worktree', `finishWorktree refuses ${what}; pass the Worktree that createWorktree returned.`);
}

/** The fields come back through JSON from workflow state: check them before deleting anything. */
function checkWorktree(wt: Worktree): void {
  for (const key of ['path', 'branch', 'baseCommit', 'repoRoot'] as const) {
    if (typeof wt?.[key] !== 'string' || wt[key] === '') throw invalid(`a Worktree without a ${key}`);
  }
  if (!path.isAbsolute(wt.path) || !path.isAbsolute(wt.repoRoot)) throw invalid('relative paths');
  // Only branches forkflow names: a mistaken Worktree must not delete someone's main branch.
  if (!wt.branch.startsWith(BRANCH_PREFIX) || wt.branch.length === BRANCH_PREFIX.length) throw invalid(`branch ${wt.branch}, which forkflow did not create`);
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(wt.baseCommit)) throw invalid(`base ${wt.baseCommit}, which is not a full commit id`);
}

async function dirHasEntries(dir: string): Promise<boolean> {
  return (await readdir(dir).catch(() => [])).length > 0;
}

/**
 * Removes worktree, branch and record. Before deleting a checkout the record is marked,
 * so that if we crash half way (git deletes the checkout before its own bookkeeping),
 * the retry does not mistake a half-deleted checkout for an agent's deletions and keep it.
 */
async function removeAll(wt: Worktree, top: string, entry: WorktreeEntry | undefined): Promise<WorktreeOutcome> {
  if (entry?.locked !== undefined) {
    throw new WorktreeError('invalid-worktree', `The worktree ${wt.path} is locked (${entry.locked || 'no reason given'}); unlock it with \`git worktree unlock\` to let finishWorktree remove it.`);
  }
  if (entry !== undefined && !entry.prunable) {
    const record = await readRecord(wt.path);
    await writeRecord(wt.path, { ...record, branch: wt.branch, baseCommit: wt.baseCommit, removing: true });
    await gitOk(['worktree', 'remove', '--force', wt.path], top, { gitDir: 'worktrees', folder: path.dirname(wt.path) });
  }
  await gitOk(['worktree', 'prune'], top, { gitDir: 'worktrees' });
  // Deleting a branch may rewrite packed-refs: the whole git directory but its config, hooks and info/.
  if ((await branchTip(top, wt.branch)) !== undefined) await gitOk(['branch', '-D', wt.branch], top, { gitDir: 'all' });
  await removeRecord(wt.path);
  return { kind: 'removed' };
}

/** True when deleting the branch loses no commit (it is gone, or the base contains it). */
async function branchLosesNothing(top: string, wt: Worktree): Promise<boolean> {
  const tip = await branchTip(top, wt.branch);
  return tip === undefined || (await isAncestor(top, tip, wt.baseCommit));
}

async function finishLocked(wt: Worktree, top: string): Promise<WorktreeOutcome> {
  const wtPath = path.resolve(wt.path);
  const entries = await listWorktrees(top, path.dirname(wtPath));
  if (entries[0]?.path === wtPath) throw invalid(`${wtPath}, the repository's main working tree`);
  let entry = entries.find((e) => e.path === wtPath);

  if ((await readRecord(wtPath))?.removing && (await branchLosesNothing(top, wt))) {
    return removeAll(wt, top, entry); // an earlier attempt had decided; finish its job
  }
  if (entry === undefined || entry.prunable) {
    if (await branchLosesNothing(top, wt)) return removeAll(wt, top, entry);
    // The checkout is gone but the branch has the agent's commits: check it out again,
    // so that "kept at <path>" is true.
    if (await dirHasEntries(wtPath)) {
      throw new WorktreeError('stale-worktree', `${wtPath} is not a git worktree any more but is not empty, and branch ${wt.branch} has commits: move the directory away, then call finishWorktree again.`);
    }
    await gitOk(['worktree', 'prune'], top, { gitDir: 'worktrees' });
    await gitOk(['worktree', 'add', '--quiet', wtPath, wt.branch], top, { gitDir: 'worktrees', folder: path.dirname(wtPath) });
    entry = (await listWorktrees(top, path.dirname(wtPath))).find((e) => e.path === wtPath);
  }

  const changes = await measureChanges({ ...wt, path: wtPath, repoRoot: top });
  if (isUnchanged(changes)) return removeAll(wt, top, entry);
  return { kind: 'kept', path: wtPath, branch: wt.branch, changedFiles: changes.changedFiles, commits: changes.commits };
}

/**
 * Ends an agent's use of its worktree. Unchanged (no uncommitted work other than ignored
 * files, no commit beyond `wt.baseCommit`): the worktree is removed with
 * `git worktree remove --force` (its ignored files go with it), stale entries are pruned,
 * the branch is deleted, and the result is `{ kind: 'removed' }`. Changed: both are kept
 * and the result lists the changed files (relative, sorted) and the commit count.
 *
 * Calling it again is safe and gives the same answer. It is the slow part of an agent's
 * end: record the agent's terminal status before calling it.
 *
 * @throws {WorktreeError} `invalid-worktree` (not a forkflow worktree, or locked),
 *   `not-a-repo`, `git-missing`, `stale-worktree`, or `git-failed` (retryable).
 * @example
 * const outcome = await finishWorktree(wt);
 * if (outcome.kind === 'kept') notify(`changes kept on ${outcome.branch} at ${outcome.path}`);
 */
export async function finishWorktree(wt: Worktree): Promise<WorktreeOutcome> {
  checkWorktree(wt);
  const top = await gitToplevel(wt.repoRoot);
  return withRepoLock(top, () => finishLocked(wt, top));
}
