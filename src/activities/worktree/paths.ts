/**
 * Path arithmetic for worktrees, with no file-system access: where an agent's worktree
 * goes, and where a path of the parent's checkout lives inside it.
 */
import path from 'node:path';
import type { Worktree } from './types';

/** Default folder for worktrees, relative to the repository's top level. */
export const DEFAULT_WORKTREES_DIR = path.join('.forkflow', 'worktrees');

/** True when `child` is `parent` or below it (both absolute and normalised). */
export function isWithin(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/** The folder holding the worktrees: `worktreesDir` (relative to the top level) or the default. */
export function worktreesFolder(toplevel: string, worktreesDir?: string): string {
  return path.resolve(toplevel, worktreesDir ?? DEFAULT_WORKTREES_DIR);
}

/** Where create records how it made a worktree (next to it, outside its checkout). */
export function recordPath(worktreePath: string): string {
  return `${worktreePath}.json`;
}

/**
 * Maps an absolute path inside the parent's checkout (`wt.repoRoot`) to the same path
 * inside the agent's worktree, so a fork can be told where its inherited paths now are.
 * Relative paths, paths outside `wt.repoRoot` and paths already inside `wt.path` (which
 * by default sits under the repository root) are returned unchanged. Paths are compared
 * after normalising `.` and `..`, without resolving symlinks: pass paths spelled like
 * `wt.repoRoot` (the canonical top level).
 *
 * @example translatePath('/repo/src/a.ts', wt) // '/repo/.forkflow/worktrees/fork-1/src/a.ts'
 */
export function translatePath(p: string, wt: Worktree): string {
  if (!path.isAbsolute(p)) return p;
  const abs = path.resolve(p);
  if (!isWithin(abs, wt.repoRoot) || isWithin(abs, wt.path)) return p;
  return path.join(wt.path, path.relative(wt.repoRoot, abs));
}
