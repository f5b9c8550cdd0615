/** Failures become a named WorktreeError with a code, a retry hint and a message that says what to do. */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createWorktree, finishWorktree, isWorktreeError, WorktreeError, type WorktreeErrorCode } from '../../../src/activities/worktree';
import { branchExists, gitIn, testRepo, worktreePaths, type TestRepo } from './kit';
import { rejectionOf } from '../../kit/wait';

let repo: TestRepo & { scratch: string };
beforeEach(() => {
  repo = testRepo();
});
afterEach(() => repo.remove());

/** Runs `fn`, which must fail with a WorktreeError of `code`; returns the error. */
async function failure(code: WorktreeErrorCode, fn: () => Promise<unknown>): Promise<WorktreeError> {
  const err = await rejectionOf(fn());
  expect(err).toBeInstanceOf(WorktreeError);
  expect((err as WorktreeError).code).toBe(code);
  expect((err as WorktreeError).name).toBe('WorktreeError');
  return err as WorktreeError;
}

describe('createWorktree refuses', () => {
  it('a directory that is not a git repository', async () => {
    const plain = path.join(repo.scratch, 'plain');
    mkdirSync(plain);
    const err = await failure('not-a-repo', () => createWorktree({ repoRoot: plain, agentId: 'a' }));
    expect(err.message).toContain(plain);
    expect(err.message).toContain('git init');
    expect(err.retryable).toBe(false);
  });

  it('a path that does not exist', async () => {
    const err = await failure('not-a-repo', () => createWorktree({ repoRoot: path.join(repo.scratch, 'missing'), agentId: 'a' }));
    expect(err.message).toContain('is not a directory');
  });

  it('a repository without a commit, saying to commit first', async () => {
    const empty = path.join(repo.scratch, 'empty');
    mkdirSync(empty);
    gitIn(empty, 'init', '--quiet');
    const err = await failure('invalid-base', () => createWorktree({ repoRoot: empty, agentId: 'a' }));
    expect(err.message).toContain('no commit yet');
  });

  it('a baseRef that names no commit, or looks like an option', async () => {
    const unknown = await failure('invalid-base', () => createWorktree({ repoRoot: repo.root, agentId: 'a', baseRef: 'no-such-branch' }));
    expect(unknown.message).toContain('"no-such-branch"');
    await failure('invalid-spec', () => createWorktree({ repoRoot: repo.root, agentId: 'a', baseRef: '--orphan' }));
    expect(worktreePaths(repo.root)).toEqual([repo.root]);
  });

  it('an empty agent id, before running git', async () => {
    await failure('invalid-agent-id', () => createWorktree({ repoRoot: repo.root, agentId: '' }));
  });

  it('a worktreesDir at the repository top level (its .gitignore of * would hide the whole repository)', async () => {
    await failure('invalid-spec', () => createWorktree({ repoRoot: repo.root, agentId: 'a', worktreesDir: '.' }));
    await failure('invalid-spec', () => createWorktree({ repoRoot: repo.root, agentId: 'a', worktreesDir: '..' }));
  });
});

describe('finishWorktree refuses', () => {
  it('a branch forkflow did not create, and leaves it alone', async () => {
    const wt = await createWorktree({ repoRoot: repo.root, agentId: 'a' });
    await failure('invalid-worktree', () => finishWorktree({ ...wt, branch: 'main' }));
    expect(branchExists(repo.root, 'main')).toBe(true);
  });

  it("the repository's main working tree", async () => {
    const err = await failure('invalid-worktree', () => finishWorktree({ path: repo.root, branch: 'forkflow/x', baseCommit: repo.head, repoRoot: repo.root }));
    expect(err.message).toContain('main working tree');
  });

  it('a base that is not a full commit id, or relative paths', async () => {
    const wt = await createWorktree({ repoRoot: repo.root, agentId: 'a' });
    await failure('invalid-worktree', () => finishWorktree({ ...wt, baseCommit: 'HEAD' }));
    await failure('invalid-worktree', () => finishWorktree({ ...wt, path: 'relative/dir' }));
    expect(worktreePaths(repo.root)).toEqual([repo.root, wt.path]);
  });

  it('a worktree someone locked', async () => {
    const wt = await createWorktree({ repoRoot: repo.root, agentId: 'a' });
    repo.git('worktree', 'lock', '--reason', 'on a USB stick', wt.path);
    const err = await failure('invalid-worktree', () => finishWorktree(wt));
    expect(err.message).toContain('on a USB stick');
    expect(worktreePaths(repo.root)).toEqual([repo.root, wt.path]);
  });
});

describe('the git environment', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  });

  it('reports git missing from PATH as git-missing', async () => {
    process.env.PATH = path.join(repo.scratch, 'no-bin');
    const err = await failure('git-missing', () => createWorktree({ repoRoot: repo.root, agentId: 'a' }));
    expect(err.message).toContain('install git');
  });

  it("ignores the caller's GIT_DIR and GIT_WORK_TREE", async () => {
    const other = path.join(repo.scratch, 'other');
    mkdirSync(other);
    gitIn(other, 'init', '--quiet');
    process.env.GIT_DIR = path.join(other, '.git');
    process.env.GIT_WORK_TREE = other;
    process.env.GIT_INDEX_FILE = path.join(other, 'bogus-index');
    const wt = await createWorktree({ repoRoot: repo.root, agentId: 'a' });
    expect(wt.repoRoot).toBe(repo.root);
    expect(wt.baseCommit).toBe(repo.head);
    delete process.env.GIT_DIR;
    delete process.env.GIT_WORK_TREE;
    delete process.env.GIT_INDEX_FILE;
    expect(worktreePaths(repo.root)).toEqual([repo.root, wt.path]);
    expect(worktreePaths(other)).toEqual([other]);
  });
});

describe('isWorktreeError', () => {
  it('matches by class and, when given, by code', () => {
    const err = new WorktreeError('git-failed', 'x');
    expect(isWorktreeError(err)).toBe(true);
    expect(isWorktreeError(err, 'git-failed')).toBe(true);
    expect(isWorktreeError(err, 'not-a-repo')).toBe(false);
    expect(isWorktreeError(new Error('x'))).toBe(false);
    expect(err.retryable).toBe(true);
  });
});
