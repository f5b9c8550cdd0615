/**
 * Did the agent change anything in its worktree? Two kinds of change count: work not
 * committed (tracked files modified, staged or deleted, and untracked files that are not
 * ignored) and commits the base does not have. Ignored files (build output,
 * dependencies) do not count: removing the worktree deletes them, by design.
 */
import { git, gitOk } from './git';
import { branchTip, isAncestor } from './registry';
import type { Worktree } from './types';

export interface Changes {
  /** Paths relative to the worktree, sorted, without duplicates. */
  changedFiles: string[];
  /** Commits reachable from the branch or the worktree's HEAD but not from the base. */
  commits: number;
  /** True when `git status` reported anything (even if no file name could be listed). */
  uncommitted: boolean;
}

/** Paths from `git status --porcelain -z --no-renames` (entries are `XY path`). */
export function parseStatus(out: string): string[] {
  return out
    .split('\0')
    .filter((entry) => entry.length > 3)
    .map((entry) => entry.slice(3));
}

function nulList(out: string): string[] {
  return out.split('\0').filter((p) => p !== '');
}

/** The worktree's HEAD commit, or undefined on an unborn branch (`git checkout --orphan`). */
async function headCommit(dir: string): Promise<string | undefined> {
  const r = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], dir);
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/**
 * Measures the changes in `wt` against `wt.baseCommit`. The worktree's HEAD is looked at
 * as well as the branch, because an agent may have switched branch or detached HEAD
 * there, and commits only HEAD reaches would be lost with the worktree.
 */
export async function measureChanges(wt: Worktree): Promise<Changes> {
  // --untracked-files=all overrides a user's status.showUntrackedFiles=no and lists files, not folders.
  const status = await gitOk(['status', '--porcelain', '-z', '--no-renames', '--untracked-files=all'], wt.path);
  const files = new Set(parseStatus(status));

  const tips = new Set<string>();
  const head = await headCommit(wt.path);
  const tip = await branchTip(wt.repoRoot, wt.branch);
  if (head !== undefined) tips.add(head);
  if (tip !== undefined) tips.add(tip);
  tips.delete(wt.baseCommit);

  let commits = 0;
  if (tips.size > 0) {
    const count = await gitOk(['rev-list', '--count', ...tips, '--not', wt.baseCommit, '--'], wt.path);
    commits = Number(count.trim());
  }
  for (const t of commits > 0 ? tips : []) {
    // A tip the base already contains (the agent reset backwards) loses nothing: not a change.
    if (await isAncestor(wt.path, t, wt.baseCommit)) continue;
    const diff = await gitOk(['diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', wt.baseCommit, t, '--'], wt.path);
    for (const f of nulList(diff)) files.add(f);
  }
  return { changedFiles: [...files].sort(), commits, uncommitted: status.length > 0 };
}

/** True when removing the worktree and its branch would lose nothing (ignored files aside). */
export function isUnchanged(c: Changes): boolean {
  return c.commits === 0 && !c.uncommitted && c.changedFiles.length === 0;
}
