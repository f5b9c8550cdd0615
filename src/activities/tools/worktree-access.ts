/**
 * What a worktree fork's Bash may write of its repository's git directory: only what its own
 * commits need — the object store, its own branch (under `refs/heads/forkflow/`, with its
 * reflog) and its worktree's private git directory (`.git/worktrees/<name>`: HEAD, index). The
 * rest of the git directory is read-only to it: the main checkout's HEAD and branches,
 * `packed-refs`, `info/` (attributes git obeys), `config`, `hooks/`. Inside what it may write,
 * the files that tell git where the repository is (`commondir`, `gitdir`), its worktree config
 * and the object store's `info/` (alternates) stay read-only too.
 *
 * The worktree's `.git` link and its private directory's `gitdir` must name each other; when
 * they do not (a link repointed), the fork gets no write access to git at all.
 */
import { lstatSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { BRANCH_PREFIX } from '../worktree/names';

/** The git directories a worktree fork's Bash reads and writes, and what inside them stays read-only. */
export interface WorktreeGitAccess {
  /** The repository's git directory (shared by every worktree), read-only. */
  common: string;
  writable: string[];
  readOnly: string[];
}

function isRealDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory() && realpathSync(p) === p;
  } catch {
    return false;
  }
}

/**
 * `rel` below `base` as a real directory (no symlink anywhere below `base`), made if missing;
 * undefined when a part of it is a symlink or not a directory (planted: not used).
 */
export function realDirBelow(base: string, rel: string): string | undefined {
  let dir = base;
  for (const part of rel.split('/').filter(Boolean)) {
    dir = path.join(dir, part);
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory()) return undefined;
    } catch {
      try {
        mkdirSync(dir, { mode: 0o755 });
      } catch {
        return undefined;
      }
    }
  }
  return isRealDir(dir) ? dir : undefined;
}

/** The worktree's private git directory, when its `.git` link and the directory's `gitdir` name each other. */
function adminDirOf(root: string, common: string): string | undefined {
  try {
    const link = readFileSync(path.join(root, '.git'), 'utf8');
    const named = /^gitdir: (.+)$/m.exec(link)?.[1]?.trim();
    if (!named) return undefined;
    const admin = realpathSync(path.resolve(root, named));
    if (path.dirname(admin) !== path.join(common, 'worktrees') || !isRealDir(admin)) return undefined;
    const back = readFileSync(path.join(admin, 'gitdir'), 'utf8').trim();
    return realpathSync(path.dirname(path.resolve(admin, back))) === root ? admin : undefined;
  } catch {
    return undefined;
  }
}

const existing = (paths: string[]) =>
  paths.filter((p) => {
    try {
      lstatSync(p);
      return true;
    } catch {
      return false;
    }
  });

/**
 * The git access of a worktree fork rooted at `root` (canonical) on the repository whose git
 * directory is `common` (canonical), or undefined when `root` is not that repository's worktree.
 */
export function worktreeGitAccess(root: string, common: string): WorktreeGitAccess | undefined {
  if (!isRealDir(common)) return undefined;
  const admin = adminDirOf(root, common);
  if (!admin) return undefined;
  const writable = [
    realDirBelow(common, 'objects'),
    realDirBelow(common, `refs/heads/${BRANCH_PREFIX}`),
    realDirBelow(common, `logs/refs/heads/${BRANCH_PREFIX}`),
    admin,
  ].filter((d): d is string => d !== undefined);
  const readOnly = existing([path.join(admin, 'commondir'), path.join(admin, 'gitdir'), path.join(admin, 'config.worktree'), path.join(common, 'objects', 'info')]);
  return { common, writable, readOnly };
}
