/** createWorktree → agent work → finishWorktree, on a real repository: what counts as a change. */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createWorktree, finishWorktree, type Worktree } from '../../../src/activities/worktree';
import { branchExists, commitAll, gitIn, testRepo, worktreePaths, type TestRepo } from './kit';

let repo: TestRepo;
let wt: Worktree;
beforeEach(async () => {
  repo = testRepo();
  wt = await createWorktree({ repoRoot: repo.root, agentId: 'fork-alpha' });
});
afterEach(() => repo.remove());

describe('createWorktree', () => {
  it('checks out a new branch named from the agent id at the base commit', () => {
    expect(wt).toEqual({
      path: path.join(repo.root, '.forkflow', 'worktrees', 'fork-alpha'),
      branch: 'forkflow/fork-alpha',
      baseCommit: repo.head,
      repoRoot: repo.root,
    });
    expect(worktreePaths(repo.root)).toEqual([repo.root, wt.path]);
    expect(gitIn(wt.path, 'symbolic-ref', 'HEAD')).toBe('refs/heads/forkflow/fork-alpha');
    expect(gitIn(wt.path, 'rev-parse', 'HEAD')).toBe(repo.head);
    expect(readFileSync(path.join(wt.path, 'src/a.ts'), 'utf8')).toBe('export const a = 1;\n');
    expect(gitIn(wt.path, 'status', '--porcelain')).toBe('');
  });

  it('leaves the parent checkout clean, without touching its ignore files', () => {
    expect(repo.git('status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(readFileSync(path.join(repo.root, '.gitignore'), 'utf8')).toBe('*.log\n');
  });

  it('starts from baseRef when given', async () => {
    const first = repo.head;
    repo.write('src/b.ts', 'export const b = 2;\n');
    commitAll(repo.root, 'second');
    const other = await createWorktree({ repoRoot: repo.root, agentId: 'fork-beta', baseRef: first });
    expect(other.baseCommit).toBe(first);
    expect(gitIn(other.path, 'rev-parse', 'HEAD')).toBe(first);
    expect(existsSync(path.join(other.path, 'src/b.ts'))).toBe(false);
  });

  it('accepts a subdirectory of the repository and uses its top level', async () => {
    const other = await createWorktree({ repoRoot: path.join(repo.root, 'src'), agentId: 'fork-sub' });
    expect(other.repoRoot).toBe(repo.root);
    expect(other.path).toBe(path.join(repo.root, '.forkflow', 'worktrees', 'fork-sub'));
  });

  it('puts worktrees in worktreesDir when given (outside the repository too)', async () => {
    const outside = path.join(path.dirname(repo.root), 'trees');
    const other = await createWorktree({ repoRoot: repo.root, agentId: 'fork-out', worktreesDir: outside });
    expect(other.path).toBe(path.join(outside, 'fork-out'));
    expect(gitIn(other.path, 'rev-parse', 'HEAD')).toBe(repo.head);
    expect(existsSync(path.join(outside, '.gitignore'))).toBe(false);
    expect(await finishWorktree(other)).toEqual({ kind: 'removed' });
    expect(existsSync(other.path)).toBe(false);
  });
});

describe('finishWorktree', () => {
  it('removes worktree and branch when nothing changed', async () => {
    expect(await finishWorktree(wt)).toEqual({ kind: 'removed' });
    expect(existsSync(wt.path)).toBe(false);
    expect(branchExists(repo.root, wt.branch)).toBe(false);
    expect(worktreePaths(repo.root)).toEqual([repo.root]);
    expect(repo.git('worktree', 'list', '--porcelain')).not.toContain('prunable');
    expect(existsSync(`${wt.path}.json`)).toBe(false);
    expect(repo.git('status', '--porcelain', '--untracked-files=all')).toBe('');
  });

  it('keeps it when a tracked file was edited', async () => {
    repo.write('src/a.ts', 'export const a = 42;\n', wt.path);
    expect(await finishWorktree(wt)).toEqual({ kind: 'kept', path: wt.path, branch: wt.branch, changedFiles: ['src/a.ts'], commits: 0 });
    expect(existsSync(wt.path)).toBe(true);
    expect(branchExists(repo.root, wt.branch)).toBe(true);
  });

  it('keeps it when a tracked file was deleted or a change only staged', async () => {
    rmSync(path.join(wt.path, 'README.md'));
    repo.write('src/staged.ts', 'x\n', wt.path);
    gitIn(wt.path, 'add', 'src/staged.ts');
    const outcome = await finishWorktree(wt);
    expect(outcome).toMatchObject({ kind: 'kept', changedFiles: ['README.md', 'src/staged.ts'], commits: 0 });
  });

  it('keeps it when an untracked file was added, listing files inside new folders', async () => {
    repo.write('notes/new/todo.md', 'todo\n', wt.path);
    repo.write('z.txt', 'z\n', wt.path);
    expect(await finishWorktree(wt)).toMatchObject({ kind: 'kept', changedFiles: ['notes/new/todo.md', 'z.txt'], commits: 0 });
  });

  it('keeps it with the commit count when the branch has a commit and the tree is clean', async () => {
    repo.write('src/a.ts', 'export const a = 3;\n', wt.path);
    repo.write('src/c.ts', 'export const c = 3;\n', wt.path);
    commitAll(wt.path, 'agent work');
    expect(gitIn(wt.path, 'status', '--porcelain')).toBe('');
    expect(await finishWorktree(wt)).toEqual({ kind: 'kept', path: wt.path, branch: wt.branch, changedFiles: ['src/a.ts', 'src/c.ts'], commits: 1 });
  });

  it('counts commits and uncommitted files together', async () => {
    repo.write('one.txt', '1\n', wt.path);
    commitAll(wt.path, 'one');
    repo.write('two.txt', '2\n', wt.path);
    commitAll(wt.path, 'two');
    repo.write('three.txt', '3\n', wt.path);
    expect(await finishWorktree(wt)).toMatchObject({ kind: 'kept', changedFiles: ['one.txt', 'three.txt', 'two.txt'], commits: 2 });
  });

  it('counts commits only a detached HEAD reaches, which removal would lose', async () => {
    gitIn(wt.path, 'checkout', '--quiet', '--detach');
    repo.write('detached.txt', 'd\n', wt.path);
    commitAll(wt.path, 'on a detached HEAD');
    expect(await finishWorktree(wt)).toMatchObject({ kind: 'kept', changedFiles: ['detached.txt'], commits: 1 });
  });

  it('does not count ignored files, and removes them with the worktree', async () => {
    repo.write('build.log', 'noise\n', wt.path);
    repo.write('deep/dir/trace.log', 'noise\n', wt.path);
    expect(gitIn(wt.path, 'status', '--porcelain', '--ignored')).toContain('build.log');
    expect(await finishWorktree(wt)).toEqual({ kind: 'removed' });
    expect(existsSync(wt.path)).toBe(false);
    expect(branchExists(repo.root, wt.branch)).toBe(false);
  });

  it('does not count commits the base already has (branch reset backwards) when the tree is clean', async () => {
    const older = repo.head;
    repo.write('later.txt', 'l\n');
    commitAll(repo.root, 'later on main');
    const fromLater = await createWorktree({ repoRoot: repo.root, agentId: 'fork-reset' });
    gitIn(fromLater.path, 'reset', '--quiet', '--hard', older);
    expect(await finishWorktree(fromLater)).toEqual({ kind: 'removed' });
    expect(branchExists(repo.root, fromLater.branch)).toBe(false);
  });

  it('leaves other worktrees and the parent branch alone', async () => {
    const other = await createWorktree({ repoRoot: repo.root, agentId: 'fork-other' });
    repo.write('keep.txt', 'k\n', other.path);
    expect(await finishWorktree(wt)).toEqual({ kind: 'removed' });
    expect(worktreePaths(repo.root)).toEqual([repo.root, other.path]);
    expect(existsSync(path.join(other.path, 'keep.txt'))).toBe(true);
    expect(repo.git('rev-parse', 'main')).toBe(repo.head);
  });
});
