/** Reading git's worktree list, and repositories reached through unusual paths. */
import { mkdirSync, renameSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { createWorktree, finishWorktree, translatePath } from '../../../src/activities/worktree';
import { parseWorktreeList, unquoteGitPath } from '../../../src/activities/worktree/registry';
import { gitIn, testRepo, worktreePaths } from './kit';

describe('parseWorktreeList', () => {
  it('reads paths, branches, locks and prunable entries', () => {
    const out = [
      'worktree /r',
      'HEAD 1111111111111111111111111111111111111111',
      'branch refs/heads/main',
      '',
      'worktree /r/.forkflow/worktrees/a',
      'HEAD 2222222222222222222222222222222222222222',
      'detached',
      'locked initializing',
      '',
      'worktree /gone',
      'HEAD 3333333333333333333333333333333333333333',
      'branch refs/heads/forkflow/b',
      'locked',
      'prunable gitdir file points to non-existent location',
      '',
    ].join('\n');
    expect(parseWorktreeList(out)).toEqual([
      { path: '/r', branch: 'refs/heads/main', prunable: false },
      { path: '/r/.forkflow/worktrees/a', locked: 'initializing', prunable: false },
      { path: '/gone', branch: 'refs/heads/forkflow/b', locked: '', prunable: true },
    ]);
  });

  it('undoes the C-style quoting git uses for unusual paths', () => {
    expect(unquoteGitPath('"/tmp/caf\\303\\251 \\"x\\"\\\\y\\nz"')).toBe('/tmp/café "x"\\y\nz');
    expect(unquoteGitPath('/plain/path')).toBe('/plain/path');
  });
});

describe('unusual repository paths', () => {
  it('works in a repository whose path has spaces and non-ASCII letters', async () => {
    const repo = testRepo();
    try {
      const odd = path.join(repo.scratch, 'caf\u00e9 r\u00e9po');
      renameSync(repo.root, odd);
      const wt = await createWorktree({ repoRoot: odd, agentId: 'a' });
      expect(wt.repoRoot).toBe(odd);
      expect(worktreePaths(odd)).toEqual([odd, wt.path]);
      expect(await createWorktree({ repoRoot: odd, agentId: 'a' })).toEqual(wt);
      expect(await finishWorktree(wt)).toEqual({ kind: 'removed' });
      expect(worktreePaths(odd)).toEqual([odd]);
    } finally {
      repo.remove();
    }
  });

  it('resolves a repository reached through a symlink to its canonical path', async () => {
    const repo = testRepo();
    try {
      const link = path.join(repo.scratch, 'link');
      symlinkSync(repo.root, link);
      const linkedTrees = path.join(repo.scratch, 'trees-link');
      mkdirSync(path.join(repo.scratch, 'trees'));
      symlinkSync(path.join(repo.scratch, 'trees'), linkedTrees);
      const wt = await createWorktree({ repoRoot: link, agentId: 'a', worktreesDir: linkedTrees });
      expect(wt.repoRoot).toBe(repo.root);
      expect(wt.path).toBe(path.join(repo.scratch, 'trees', 'a'));
      expect(translatePath(path.join(repo.root, 'src/a.ts'), wt)).toBe(path.join(wt.path, 'src/a.ts'));
      expect(await createWorktree({ repoRoot: link, agentId: 'a', worktreesDir: linkedTrees })).toEqual(wt);
      expect(gitIn(wt.path, 'rev-parse', 'HEAD')).toBe(repo.head);
      expect(await finishWorktree(wt)).toEqual({ kind: 'removed' });
    } finally {
      repo.remove();
    }
  });
});
