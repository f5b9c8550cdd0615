/**
 * `createWorktree`: a git worktree on a branch of its own for one agent. Idempotent, so
 * an activity retried after a crash gets the worktree the first attempt made; anything
 * else found in the way is reported, never overwritten.
 */
import { lstat, mkdir, readdir, realpath, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { WorktreeError } from './errors';
import { git, gitOk, gitToplevel } from './git';
import { BRANCH_PREFIX, safeAgentId } from './names';
import { isWithin, worktreesFolder } from './paths';
import { branchTip, isAncestor, listWorktrees, readRecord, writeRecord, type WorktreeEntry, type WorktreeRecord } from './registry';
import { withRepoLock } from './repo-lock';
import type { Worktree, WorktreeSpec } from './types';

function checkSpec(spec: WorktreeSpec): void {
  if (typeof spec?.repoRoot !== 'string' || spec.repoRoot === '') {
    throw new WorktreeError('invalid-spec', 'repoRoot must be a non-empty path to a git repository on this worker.');
  }
  if (spec.baseRef !== undefined && (typeof spec.baseRef !== 'string' || spec.baseRef === '' || spec.baseRef.startsWith('-'))) {
    // A leading dash would be read as an option by git; no commit-ish needs one.
    throw new WorktreeError('invalid-spec', `baseRef must be a branch, tag or commit id, got ${JSON.stringify(spec.baseRef)}; omit it to use HEAD.`);
  }
  if (spec.worktreesDir !== undefined && (typeof spec.worktreesDir !== 'string' || spec.worktreesDir === '')) {
    throw new WorktreeError('invalid-spec', 'worktreesDir must be a non-empty path; omit it for the default .forkflow/worktrees.');
  }
}

async function checkBranchName(branch: string, agentId: string, toplevel: string): Promise<void> {
  const r = await git(['check-ref-format', '--branch', branch], toplevel);
  if (r.code !== 0) {
    throw new WorktreeError('invalid-agent-id', `Agent id ${JSON.stringify(agentId)} gives the branch name ${branch}, which git rejects (${r.stderr.trim()}); use a simpler agent id.`);
  }
}

async function resolveBase(toplevel: string, ref: string): Promise<string> {
  const r = await git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], toplevel);
  if (r.code === 0) return r.stdout.trim();
  const hasCommits = (await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], toplevel)).code === 0;
  const hint = hasCommits ? 'pass an existing branch, tag or commit id, or omit baseRef for HEAD' : 'the repository has no commit yet: make a first commit';
  throw new WorktreeError('invalid-base', `Base ${JSON.stringify(ref)} is not a commit in ${toplevel}: ${hint}.`);
}

/**
 * Makes the worktrees folder and returns its canonical path (git records worktree paths
 * with symlinks resolved; comparing like with like). Inside the repository it gets a
 * `.gitignore` of `*`, which hides the folder, the worktrees and our records from the
 * parent's `git status` without touching the repository's own ignore files.
 *
 * Inside the repository no part of the way to it may be a symlink: the repository is a
 * fork's to write (or a hostile one's to ship), and `.forkflow -> <another tenant's folder>`
 * would have the next worktree checked out there.
 */
async function prepareFolder(toplevel: string, worktreesDir: string | undefined): Promise<string> {
  const folder = worktreesFolder(toplevel, worktreesDir);
  if (isWithin(toplevel, folder)) {
    throw new WorktreeError('invalid-spec', `worktreesDir ${folder} is the repository's top level or above it; pick a folder of its own, such as the default .forkflow/worktrees.`);
  }
  if (isWithin(folder, toplevel)) {
    let dir = toplevel;
    for (const part of path.relative(toplevel, folder).split(path.sep)) {
      dir = path.join(dir, part);
      const st = await lstat(dir).catch(() => undefined);
      if (st?.isSymbolicLink() || (st && !st.isDirectory())) {
        throw new WorktreeError('invalid-spec', `${dir} is ${st.isSymbolicLink() ? 'a symlink' : 'not a directory'}, on the way to the worktrees folder ${folder}: the worker makes worktrees only in a folder of the repository's own. Remove it (a fork or the repository may have planted it).`);
      }
      if (!st) await mkdir(dir).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
    }
  } else {
    await mkdir(folder, { recursive: true });
  }
  const real = await realpath(folder);
  if (isWithin(real, toplevel)) {
    await writeFile(path.join(real, '.gitignore'), '# Made by forkflow: agent worktrees are not part of this repository.\n*\n', { flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
  return real;
}

/** Quoted for a POSIX shell, for the commands error messages suggest. */
function sh(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function stale(wt: Worktree, agentId: string, what: string): WorktreeError {
  const top = sh(wt.repoRoot);
  return new WorktreeError(
    'stale-worktree',
    `Cannot create the worktree of agent ${JSON.stringify(agentId)} at ${wt.path} on ${wt.branch} from ${wt.baseCommit}: ${what}. ` +
      `If that is left over from an earlier run, finish it (finishWorktree) or remove it with ` +
      `\`git -C ${top} worktree remove --force ${sh(wt.path)}; git -C ${top} branch -D ${wt.branch}\`; otherwise use another agent id.`,
  );
}

function recordFits(record: WorktreeRecord | undefined, agentId: string, wt: Worktree): boolean {
  return record !== undefined && record.removing !== true && record.agentId === agentId && record.branch === wt.branch && record.baseCommit === wt.baseCommit;
}

async function isEmptyDir(dir: string): Promise<boolean | undefined> {
  try {
    return (await readdir(dir)).length === 0;
  } catch {
    return undefined; // does not exist (or is not a directory: the add below will say so)
  }
}

/** Returns the existing worktree when it is this agent's, on this base; throws when something else is there. */
async function adopt(entry: WorktreeEntry, wt: Worktree, agentId: string): Promise<Worktree> {
  const ref = `refs/heads/${wt.branch}`;
  if (entry.branch !== ref) throw stale(wt, agentId, `that directory is a worktree on ${entry.branch ?? 'a detached HEAD'}`);
  const record = await readRecord(wt.path);
  if (recordFits(record, agentId, wt)) return wt;
  if (record?.removing) throw stale(wt, agentId, 'finishWorktree was removing it; call finishWorktree again to complete that');
  if (record !== undefined) throw stale(wt, agentId, `it was created from ${record.baseCommit} for agent ${JSON.stringify(record.agentId ?? '?')}`);
  // No record (deleted, or made by hand): adopt it only when nothing can have happened on it yet.
  if ((await branchTip(wt.repoRoot, wt.branch)) !== wt.baseCommit) throw stale(wt, agentId, 'its branch has moved and there is no record of its base');
  await writeRecord(wt.path, { agentId, branch: wt.branch, baseCommit: wt.baseCommit });
  return wt;
}

async function createLocked(spec: WorktreeSpec, agentId: string, top: string): Promise<Worktree> {
  const safe = safeAgentId(agentId);
  const branch = `${BRANCH_PREFIX}${safe}`;
  await checkBranchName(branch, agentId, top);
  const baseCommit = await resolveBase(top, spec.baseRef ?? 'HEAD');
  const folder = await prepareFolder(top, spec.worktreesDir);
  const wt: Worktree = { path: path.join(folder, safe), branch, baseCommit, repoRoot: top };

  let entries = await listWorktrees(top, folder);
  let entry = entries.find((e) => e.path === wt.path);
  if (entry?.locked === 'initializing' || entry?.prunable === true) {
    // `git worktree add` died half way (git locks a new worktree "initializing" until its
    // checkout is complete), or the directory was deleted: nothing there is worth keeping.
    if (entry.locked === 'initializing') await gitOk(['worktree', 'unlock', wt.path], top, { gitDir: 'worktrees' });
    if (!entry.prunable) await gitOk(['worktree', 'remove', '--force', wt.path], top, { gitDir: 'worktrees', folder });
    await gitOk(['worktree', 'prune'], top, { gitDir: 'worktrees' });
    entries = await listWorktrees(top, folder);
    entry = entries.find((e) => e.path === wt.path);
    if (entry) throw stale(wt, agentId, `git keeps a worktree entry there whose directory is missing (locked: ${entry.locked ?? 'no'}); run git worktree unlock and git worktree prune`);
  }
  if (entry) return adopt(entry, wt, agentId);

  const elsewhere = entries.find((e) => e.branch === `refs/heads/${branch}`);
  if (elsewhere) throw stale(wt, agentId, `the branch is checked out in another worktree, ${elsewhere.path}`);
  const empty = await isEmptyDir(wt.path);
  if (empty === false) throw stale(wt, agentId, 'that directory exists and is not a git worktree; move it away');
  if (empty === true) await rmdir(wt.path);

  const tip = await branchTip(top, branch);
  const record = await readRecord(wt.path);
  if (tip === undefined) {
    await writeRecord(wt.path, { agentId, branch, baseCommit });
    await gitOk(['worktree', 'add', '--quiet', '--no-track', '-b', branch, wt.path, baseCommit], top, { gitDir: 'worktrees', folder });
    return wt;
  }
  // The branch outlived its checkout: a crash between creating the branch and the
  // checkout (tip still at the base), or a kept worktree whose directory was deleted
  // (the record says it is ours, and the branch grew from this base).
  const ours = tip === baseCommit || (recordFits(record, agentId, wt) && (await isAncestor(top, baseCommit, tip)));
  if (!ours) throw stale(wt, agentId, `branch ${branch} already exists at ${tip}, not started from this base`);
  await writeRecord(wt.path, { agentId, branch, baseCommit });
  await gitOk(['worktree', 'add', '--quiet', wt.path, branch], top, { gitDir: 'worktrees', folder });
  return wt;
}

/**
 * Creates a git worktree for `spec.agentId` at `<worktreesDir>/<safe id>` on a new branch
 * `forkflow/<safe id>` starting at `spec.baseRef` (default HEAD).
 *
 * Idempotent: when this agent's worktree already exists on the same base commit, it is
 * returned as is (a retried activity, or an agent resumed after its worktree was kept).
 * A worktree or branch of that name from another base, or a foreign directory in the
 * way, is a `stale-worktree` error that says how to clear it. Operations on one
 * repository run one at a time in this process.
 *
 * @throws {WorktreeError} `not-a-repo`, `git-missing`, `invalid-spec`, `invalid-agent-id`,
 *   `invalid-base`, `stale-worktree` (none retryable) or `git-failed` (retryable).
 * @example
 * const wt = await createWorktree({ repoRoot: '/work/app', agentId: 'fork-review-1a2b' });
 * // wt.path === '/work/app/.forkflow/worktrees/fork-review-1a2b', wt.branch === 'forkflow/fork-review-1a2b'
 */
export async function createWorktree(spec: WorktreeSpec): Promise<Worktree> {
  checkSpec(spec);
  safeAgentId(spec.agentId); // a bad id fails before any git call
  const top = await gitToplevel(spec.repoRoot);
  return withRepoLock(top, () => createLocked(spec, spec.agentId, top));
}
