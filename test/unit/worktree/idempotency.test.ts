/**
 * Retries and crashes: the same call twice gives the same answer, leftovers of a crashed
 * attempt are completed, and anything else in the way is reported instead of replaced.
 * Parallel calls on one repository are serialised.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createWorktree, finishWorktree, isWorktreeError, type Worktree } from '../../../src/activities/worktree';
import { branchExists, commitAll, gitIn, testRepo, worktreePaths, type TestRepo } from './kit';

let repo: TestRepo;
beforeEach(() => {
  repo = testRepo();
});
afterEach(() => repo.remove());

const spec = (agentId = 'fork-1', extra: { baseRef?: string } = {}) => ({ repoRoot: repo.root, agentId, ...extra });

/** The rejection of `p`, which must reject. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

describe('createWorktree twice for one agent', () => {
  it('returns the same worktree and leaves its work alone', async () => {
    const first = await createWorktree(spec());
    repo.write('wip.txt', 'in progress\n', first.path);
    const second = await createWorktree(spec());
    expect(second).toEqual(first);
    expect(worktreePaths(repo.root)).toEqual([repo.root, first.path]);
    expect(readFileSync(path.join(first.path, 'wip.txt'), 'utf8')).toBe('in progress\n');
  });

  it('returns a kept worktree with commits to a resumed agent, with its original base', async () => {
    const first = await createWorktree(spec());
    repo.write('done.txt', 'done\n', first.path);
    commitAll(first.path, 'agent work');
    expect(await finishWorktree(first)).toMatchObject({ kind: 'kept', commits: 1 });
    expect(await createWorktree(spec('fork-1', { baseRef: first.baseCommit }))).toEqual(first);
  });

  it('refuses clearly when the existing worktree was made from another base', async () => {
    const first = await createWorktree(spec());
    repo.write('later.txt', 'l\n');
    const later = commitAll(repo.root, 'main moved on');
    const err = await rejection(createWorktree(spec()));
    expect(isWorktreeError(err, 'stale-worktree')).toBe(true);
    const message = (err as Error).message;
    expect(message).toContain(`created from ${first.baseCommit}`);
    expect(message).toContain(later);
    expect(message).toContain('worktree remove --force');
    expect((err as { retryable: boolean }).retryable).toBe(false);
    expect(worktreePaths(repo.root)).toEqual([repo.root, first.path]);
  });

  it('refuses a foreign, non-empty directory where the worktree should go', async () => {
    const dir = path.join(repo.root, '.forkflow', 'worktrees', 'fork-1');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'mine.txt'), 'not yours\n');
    const err = await rejection(createWorktree(spec()));
    expect(isWorktreeError(err, 'stale-worktree')).toBe(true);
    expect((err as Error).message).toContain('is not a git worktree');
    expect(readFileSync(path.join(dir, 'mine.txt'), 'utf8')).toBe('not yours\n');
  });

  it('refuses a branch of that name that does not start at the base', async () => {
    repo.git('branch', 'forkflow/fork-1');
    repo.write('more.txt', 'm\n');
    commitAll(repo.root, 'main moved on');
    const err = await rejection(createWorktree(spec()));
    expect(isWorktreeError(err, 'stale-worktree')).toBe(true);
    expect((err as Error).message).toContain('already exists');
  });
});

describe('recovery from a crash half way', () => {
  it('create: reuses a branch that was made before the checkout', async () => {
    repo.git('branch', 'forkflow/fork-1', repo.head);
    const wt = await createWorktree(spec());
    expect(gitIn(wt.path, 'symbolic-ref', 'HEAD')).toBe('refs/heads/forkflow/fork-1');
    expect(await finishWorktree(wt)).toEqual({ kind: 'removed' });
  });

  it('create: replaces a checkout git left locked "initializing"', async () => {
    const wt = await createWorktree(spec());
    repo.git('worktree', 'lock', '--reason', 'initializing', wt.path);
    rmSync(path.join(wt.path, 'README.md')); // a checkout that never completed
    expect(await createWorktree(spec())).toEqual(wt);
    expect(existsSync(path.join(wt.path, 'README.md'))).toBe(true);
    expect(repo.git('worktree', 'list', '--porcelain')).not.toContain('locked');
  });

  it('create: checks the worktree out again after its directory was deleted', async () => {
    const wt = await createWorktree(spec());
    rmSync(wt.path, { recursive: true, force: true });
    expect(await createWorktree(spec())).toEqual(wt);
    expect(gitIn(wt.path, 'rev-parse', 'HEAD')).toBe(repo.head);
  });

  it('finish: twice gives "removed" both times', async () => {
    const wt = await createWorktree(spec());
    expect(await finishWorktree(wt)).toEqual({ kind: 'removed' });
    expect(await finishWorktree(wt)).toEqual({ kind: 'removed' });
  });

  it('finish: twice on a changed worktree gives the same "kept" both times', async () => {
    const wt = await createWorktree(spec());
    repo.write('x.txt', 'x\n', wt.path);
    const first = await finishWorktree(wt);
    expect(first.kind).toBe('kept');
    expect(await finishWorktree(wt)).toEqual(first);
  });

  it('finish: completes a removal interrupted after the checkout was partly deleted', async () => {
    const wt = await createWorktree(spec());
    const record = JSON.parse(readFileSync(`${wt.path}.json`, 'utf8')) as object;
    writeFileSync(`${wt.path}.json`, JSON.stringify({ ...record, removing: true }));
    rmSync(path.join(wt.path, 'src'), { recursive: true }); // git deletes the checkout first
    expect(await finishWorktree(wt)).toEqual({ kind: 'removed' });
    expect(existsSync(wt.path)).toBe(false);
    expect(branchExists(repo.root, wt.branch)).toBe(false);
  });

  it('finish: deletes a branch left behind by a removal that stopped before it', async () => {
    const wt = await createWorktree(spec());
    repo.git('worktree', 'remove', '--force', wt.path);
    expect(await finishWorktree(wt)).toEqual({ kind: 'removed' });
    expect(branchExists(repo.root, wt.branch)).toBe(false);
  });

  it('finish: copes with the whole worktrees folder having been deleted', async () => {
    const wt = await createWorktree(spec());
    rmSync(path.dirname(wt.path), { recursive: true, force: true });
    expect(await finishWorktree(wt)).toEqual({ kind: 'removed' });
    expect(branchExists(repo.root, wt.branch)).toBe(false);
    expect(worktreePaths(repo.root)).toEqual([repo.root]);
  });

  it('finish: restores the checkout of a branch with commits whose directory was deleted, and keeps it', async () => {
    const wt = await createWorktree(spec());
    repo.write('work.txt', 'w\n', wt.path);
    commitAll(wt.path, 'agent work');
    rmSync(wt.path, { recursive: true, force: true });
    expect(await finishWorktree(wt)).toEqual({ kind: 'kept', path: wt.path, branch: wt.branch, changedFiles: ['work.txt'], commits: 1 });
    expect(readFileSync(path.join(wt.path, 'work.txt'), 'utf8')).toBe('w\n');
  });
});

describe('parallel agents on one repository', () => {
  it('creates and finishes several worktrees at once without lock errors', async () => {
    const ids = ['p-1', 'p-2', 'p-3', 'p-4', 'p-5', 'p-6'];
    const wts: Worktree[] = await Promise.all(ids.map((agentId) => createWorktree(spec(agentId))));
    expect(new Set(wts.map((w) => w.path)).size).toBe(ids.length);
    expect(worktreePaths(repo.root).sort()).toEqual([repo.root, ...wts.map((w) => w.path)].sort());
    for (const w of wts) expect(gitIn(w.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe(w.branch);
    repo.write('changed.txt', 'c\n', wts[0]!.path);
    const outcomes = await Promise.all(wts.map((w) => finishWorktree(w)));
    expect(outcomes.map((o) => o.kind)).toEqual(['kept', 'removed', 'removed', 'removed', 'removed', 'removed']);
    expect(worktreePaths(repo.root)).toEqual([repo.root, wts[0]!.path]);
  });

  it('gives one worktree to concurrent creates for the same agent', async () => {
    const [a, b] = await Promise.all([createWorktree(spec()), createWorktree(spec())]);
    expect(a).toEqual(b);
    expect(worktreePaths(repo.root)).toHaveLength(2);
  });
});
