/**
 * Walking the workspace the way a developer expects search tools to: `.git` and
 * `node_modules` are skipped, the root `.gitignore` is honoured, symlinks are not
 * followed (no loops, no wandering out of the tree), protected paths of the fork's view are
 * neither entered nor listed, and the walk stops promptly when the call is cancelled.
 * Shared by Glob and Grep.
 */
import { readFile, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import fg from 'fast-glob';
import ignore from 'ignore';
import { errnoCode, fail, messageOf, ToolAbortError } from './outcome';
import { resolveReadPath } from './paths';
import { canSee, type FsView } from './sandbox/view';
import type { ToolOutcome } from './types';
import { deniedMessage, hiddenPatterns, locate } from './visible';

/** Directories never searched, whatever the pattern. */
export const ALWAYS_SKIPPED = ['**/.git/**', '**/node_modules/**'];

/** A predicate telling whether an absolute path is ignored by the root `.gitignore`. */
export type IgnoredPredicate = (absolute: string) => boolean;

/** Loads `<root>/.gitignore` (none is fine). Paths outside the root are never ignored. */
export async function loadRootIgnore(root: string): Promise<IgnoredPredicate> {
  let rules: string;
  try {
    rules = await readFile(path.join(root, '.gitignore'), 'utf8');
  } catch {
    return () => false;
  }
  const ig = ignore().add(rules);
  return (absolute) => {
    const rel = path.relative(root, absolute);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return false;
    try {
      return ig.ignores(rel.split(path.sep).join('/'));
    } catch {
      return false;
    }
  };
}

/** A file found by the walk. */
export interface WalkedFile {
  path: string;
  stats: Stats;
}

/** Where and how to walk. */
export interface WalkOptions {
  /** Directory patterns are relative to (canonical). */
  cwd: string;
  root: string;
  /** What the fork may see: protected paths are skipped. */
  view: FsView;
  signal: AbortSignal;
  /** Match patterns without a slash against the basename (ripgrep's `--glob`). */
  baseNameMatch?: boolean;
  /** Called for every file seen, for heartbeats. */
  onEntry?: () => void;
}

/**
 * Yields the files matching `patterns` (fast-glob syntax; a leading `!` excludes) under
 * `opts.cwd`, with absolute paths and lstat-like stats, in no particular order.
 * Throws `ToolAbortError` when the signal fires.
 */
export async function* walkFiles(patterns: string[], opts: WalkOptions): AsyncGenerator<WalkedFile> {
  const ignored = await loadRootIgnore(opts.root);
  const stream = fg.stream(patterns, {
    cwd: opts.cwd,
    absolute: true,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    suppressErrors: true,
    stats: true,
    unique: true,
    baseNameMatch: opts.baseNameMatch ?? false,
    ignore: [...ALWAYS_SKIPPED, ...hiddenPatterns(opts.view, opts.cwd)],
  });
  try {
    for await (const raw of stream as AsyncIterable<fg.Entry>) {
      if (opts.signal.aborted) throw new ToolAbortError();
      opts.onEntry?.();
      if (raw.stats === undefined || ignored(raw.path) || !canSee(opts.view, raw.path)) continue;
      yield { path: raw.path, stats: raw.stats };
    }
  } finally {
    (stream as unknown as { destroy?: () => void }).destroy?.();
  }
}

/**
 * Resolves the `path` argument of Glob/Grep: an existing directory or file in the fork's
 * view, as its canonical path.
 */
export async function resolveSearchPath(root: string, given: string | undefined, tool: string, view: FsView): Promise<{ ok: true; path: string; isFile: boolean } | { ok: false; outcome: ToolOutcome }> {
  const located = resolveReadPath(root, given ?? '.');
  if (!located.ok) return { ok: false, outcome: fail(located.message) };
  const where = await locate(view, located.path);
  if (!where.visible) return { ok: false, outcome: fail(deniedMessage(view, given ?? root, where.canonical)) };
  try {
    const st = await stat(where.canonical);
    if (!st.isDirectory() && !st.isFile()) return { ok: false, outcome: fail(`${given ?? root} is neither a file nor a directory.`) };
    return { ok: true, path: where.canonical, isFile: st.isFile() };
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      return { ok: false, outcome: fail(`Path not found: ${given ?? root}. Call ${tool} without "path" to search the whole workspace, or use Glob to find the directory.`) };
    }
    return { ok: false, outcome: fail(`Cannot search ${given ?? root}: ${messageOf(err)}`) };
  }
}
