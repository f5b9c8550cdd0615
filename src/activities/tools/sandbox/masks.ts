/**
 * What a sandboxed Bash call must not have as it is, inside what it mounts (bwrap-args.ts
 * `Mask`): the worker's protected paths and the hidden `.forkflow/` folders, hidden; the parts
 * of a writable repository that name programs git runs, read-only.
 *
 * A mask covers only a path that exists when the call starts. A path the worker trusts later
 * and that is missing inside something the call may write would be the command's to create —
 * a `.forkflow/worktrees` symlink into another tenant's folder, a `.forkflow/agents/*.md` —
 * so it is made first (an empty directory of the worker's, 0700) and then masked like the rest.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Mask } from './bwrap-args';
import { hiddenInside, within, type FsView } from './view';

/** The parts of `p` below `top` made as directories, one by one, never through a symlink; false when one cannot be. */
function makeBelow(top: string, p: string): boolean {
  let dir = top;
  for (const part of path.relative(top, p).split(path.sep)) {
    dir = path.join(dir, part);
    try {
      if (!lstatSync(dir).isDirectory()) return false; // a file or symlink is there: it is masked as it is
    } catch {
      try {
        mkdirSync(dir, { mode: 0o700 });
      } catch {
        return false;
      }
    }
  }
  return true;
}

/**
 * Protected and hidden paths inside what the call mounts, each as a directory or file mask;
 * missing ones inside a writable mount are made first, so the command cannot create them.
 */
export function masksOf(view: FsView, mounted: readonly string[], writable: readonly string[]): Mask[] {
  return hiddenInside(view, mounted).flatMap((p) => {
    try {
      return [{ path: p, dir: lstatSync(p).isDirectory() }];
    } catch {
      const top = writable.find((w) => w !== p && within(p, w));
      if (top === undefined || !makeBelow(top, p)) return []; // read-only around it: nobody creates it
      return [{ path: p, dir: true }];
    }
  });
}

/**
 * In a writable repository, what names programs git runs — the worker's own git included —
 * stays read-only: the git directory's `config`, `config.worktree`, `hooks/` and `info/`
 * (`info/attributes` outranks every `.gitattributes`), and a worktree's `.git` link
 * (repointed, it could name a planted directory). A worktree fork's own git access is
 * narrower still (../worktree-access.ts: `readOnly`).
 */
export function gitGuards(root: string, readOnly: readonly string[] = []): Mask[] {
  const guards: Mask[] = [];
  const dotGit = path.join(root, '.git');
  const keep = (p: string) => {
    try {
      guards.push({ path: p, dir: lstatSync(p).isDirectory(), readOnly: true });
    } catch {
      // absent
    }
  };
  try {
    if (lstatSync(dotGit).isDirectory()) for (const name of ['config', 'config.worktree', 'hooks', 'info']) keep(path.join(dotGit, name));
    else keep(dotGit);
  } catch {
    // not a repository's top
  }
  for (const p of readOnly) keep(p);
  return guards;
}
