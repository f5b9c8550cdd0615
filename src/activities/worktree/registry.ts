/**
 * What exists already: git's list of worktrees, branch tips, and the small record that
 * `createWorktree` leaves next to each worktree (git does not remember which commit a
 * branch started from, and a retried or resumed agent must get the same base back).
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { git, gitOk } from './git';
import { recordPath } from './paths';

/** One entry of `git worktree list --porcelain`. */
export interface WorktreeEntry {
  path: string;
  /** Full ref name (`refs/heads/…`), absent when detached. */
  branch?: string;
  /** Lock reason ('' when locked without one); absent when not locked. */
  locked?: string;
  /** Git would prune this entry (its directory is gone). */
  prunable: boolean;
}

/**
 * Undoes git's C-style quoting of a path (`"a\303\251\n"`), which git uses for paths
 * with unusual characters. Unquoted input is returned as is.
 */
export function unquoteGitPath(s: string): string {
  if (!s.startsWith('"') || !s.endsWith('"') || s.length < 2) return s;
  const simple: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  const bytes: number[] = [];
  const body = s.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] ?? '';
    if (ch !== '\\') {
      bytes.push(...Buffer.from(ch, 'utf8'));
      continue;
    }
    const next = body[i + 1] ?? '';
    const octal = /^[0-7]{3}/.exec(body.slice(i + 1));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += 3;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Parses `git worktree list --porcelain` (the line format, which git versions before 2.36 also have). */
export function parseWorktreeList(out: string): WorktreeEntry[] {
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | undefined;
  for (const line of out.split('\n')) {
    const space = line.indexOf(' ');
    const key = space < 0 ? line : line.slice(0, space);
    const value = space < 0 ? '' : line.slice(space + 1);
    if (key === 'worktree') {
      current = { path: path.resolve(unquoteGitPath(value)), prunable: false };
      entries.push(current);
    } else if (current && key === 'branch') {
      current.branch = value;
    } else if (current && key === 'locked') {
      current.locked = value;
    } else if (current && key === 'prunable') {
      current.prunable = true;
    }
  }
  return entries;
}

/**
 * The worktrees git knows for the repository at `toplevel`; the main working tree comes first.
 * Those in `folder` are seen as they are (git runs in the sandbox, where only what it is shown exists).
 */
export async function listWorktrees(toplevel: string, folder?: string): Promise<WorktreeEntry[]> {
  return parseWorktreeList(await gitOk(['worktree', 'list', '--porcelain'], toplevel, folder ? { folder } : undefined));
}

/** The commit `refs/heads/<branch>` points at, or undefined when there is no such branch. */
export async function branchTip(toplevel: string, branch: string): Promise<string | undefined> {
  const r = await git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], toplevel);
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/** True when `ancestor` is reachable from `descendant` (equal counts). */
export async function isAncestor(toplevel: string, ancestor: string, descendant: string): Promise<boolean> {
  const r = await git(['merge-base', '--is-ancestor', ancestor, descendant], toplevel);
  return r.code === 0;
}

/** The record kept next to a worktree. */
export interface WorktreeRecord {
  agentId?: string;
  branch: string;
  baseCommit: string;
  /** Set by `finishWorktree` once it decided to remove, so a retry after a crash finishes the job. */
  removing?: true;
}

/** The record next to `worktreePath`, or undefined when there is none or it is unreadable. */
export async function readRecord(worktreePath: string): Promise<WorktreeRecord | undefined> {
  try {
    const raw = JSON.parse(await readFile(recordPath(worktreePath), 'utf8')) as Partial<WorktreeRecord> | null;
    if (typeof raw?.branch !== 'string' || typeof raw.baseCommit !== 'string') return undefined;
    return {
      ...(typeof raw.agentId === 'string' ? { agentId: raw.agentId } : {}),
      branch: raw.branch,
      baseCommit: raw.baseCommit,
      ...(raw.removing === true ? { removing: true } : {}),
    };
  } catch {
    return undefined; // missing or unreadable: callers treat it as "no record"
  }
}

/** Writes the record whole or not at all (temp file + rename), so a crash never leaves half of one. */
export async function writeRecord(worktreePath: string, record: WorktreeRecord): Promise<void> {
  const file = recordPath(worktreePath);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(record, null, 2)}\n`);
  await rename(tmp, file);
}

/** Deletes the record next to `worktreePath`; a missing one is fine. */
export async function removeRecord(worktreePath: string): Promise<void> {
  await rm(recordPath(worktreePath), { force: true });
}
