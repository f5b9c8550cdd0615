/**
 * Read confinement for Read, Glob and Grep: a path is read only if, canonically (symlinks
 * and `..` resolved), it lies in the fork's view (sandbox/view.ts) — its workspace, the
 * system's programs and libraries, paths its caller allowed — and outside every protected
 * path. The check is made on the path before opening (for a clear message) and again on
 * the opened descriptor (`/proc/self/fd/N`, where the kernel says what was really opened),
 * so a symlink swapped in between reads nothing outside.
 */
import { readlinkSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import fg from 'fast-glob';
import { errnoCode } from './outcome';
import { procFdAvailable } from './contained-write';
import { canonicalish, canSee, viewFor, within, type FsView } from './sandbox/view';
import type { ToolContext } from './types';

/** The fork's view: the one its caller set, else its workspace and the system only. */
export function viewOf(ctx: ToolContext): FsView {
  return ctx.view ?? viewFor(canonicalish(ctx.root), [], []);
}

/** Why `shown` may not be read, for the model. */
export function deniedMessage(view: FsView, shown: string, canonical: string): string {
  if (view.protected.some((h) => within(canonical, h)) || view.hidden.some((h) => within(canonical, h))) {
    return `Denied: ${shown} is protected (forkflow's own state, or a path this worker keeps private); no tool may read it.`;
  }
  const allowed = view.readPaths.length > 0 ? `, the paths its caller allowed (${view.readPaths.join(', ')})` : '';
  return `Denied: ${shown} resolves to ${canonical}, outside what this agent may read: its workspace ${view.root}${allowed} and the system's programs and libraries. Work with files inside the workspace.`;
}

/** The canonical form of an absolute path and whether the view shows it (a missing path is judged by its parent). */
export async function locate(view: FsView, absolute: string): Promise<{ canonical: string; visible: boolean; exists: boolean }> {
  try {
    const canonical = await realpath(absolute);
    return { canonical, visible: canSee(view, canonical), exists: true };
  } catch (err) {
    const code = errnoCode(err);
    const canonical = code === 'ELOOP' ? absolute : canonicalish(absolute);
    return { canonical, visible: canSee(view, canonical), exists: false };
  }
}

/** Whether what descriptor `fd` really opened is visible (always true where /proc cannot tell). */
export function descriptorVisible(view: FsView, fd: number): boolean {
  if (!procFdAvailable()) return true;
  try {
    return canSee(view, readlinkSync(`/proc/self/fd/${fd}`));
  } catch {
    return false;
  }
}

/** Glob patterns (relative to `cwd`) that keep a walk out of the protected paths below it. */
export function hiddenPatterns(view: FsView, cwd: string): string[] {
  return [...view.protected, ...view.hidden]
    .filter((h) => h !== cwd && within(h, cwd) && !within(view.root, h))
    .flatMap((h) => {
      const rel = fg.escapePath(path.relative(cwd, h).split(path.sep).join('/'));
      return [rel, `${rel}/**`];
    });
}

/**
 * Why a write to the canonical path `canonical` (inside the write scope `scopeDir`) is refused
 * whatever the write policy, or null: protected and hidden paths are not written either, and
 * nor is git's own directory — a repository's config and hooks name programs that git,
 * the worker's included, runs.
 */
export function writeRefusal(view: FsView, scopeDir: string, canonical: string): string | null {
  if (view.protected.some((h) => within(canonical, h)) || view.hidden.some((h) => h !== scopeDir && within(canonical, h) && !within(scopeDir, h))) {
    return `Denied: ${canonical} is protected (forkflow's own state); no tool writes there.`;
  }
  if (path.relative(scopeDir, canonical).split(path.sep).includes('.git')) {
    return `Denied: ${canonical} is inside a git directory; change a repository with git commands, not by writing its files.`;
  }
  return null;
}
