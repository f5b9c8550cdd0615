/** translatePath: parent-checkout paths mapped into the worktree, everything else untouched. */
import path from 'node:path';
import { translatePath, type Worktree } from '../../../src/activities/worktree';

const wt: Worktree = {
  repoRoot: '/work/app',
  path: '/work/app/.forkflow/worktrees/fork-1',
  branch: 'forkflow/fork-1',
  baseCommit: 'a'.repeat(40),
};

describe('translatePath', () => {
  it.each([
    ['/work/app/src/a.ts', '/work/app/.forkflow/worktrees/fork-1/src/a.ts'],
    ['/work/app', '/work/app/.forkflow/worktrees/fork-1'],
    ['/work/app/', '/work/app/.forkflow/worktrees/fork-1'],
    ['/work/app/src/../README.md', '/work/app/.forkflow/worktrees/fork-1/README.md'],
    ['/work/app/.forkflow/other/x', '/work/app/.forkflow/worktrees/fork-1/.forkflow/other/x'],
  ])('maps %s into the worktree', (from, to) => {
    expect(translatePath(from, wt)).toBe(to);
  });

  it.each([
    ['outside the repository', '/etc/passwd'],
    ['a sibling with the same prefix', '/work/application/x.ts'],
    ['the parent folder', '/work'],
    ['a relative path', 'src/a.ts'],
    ['a path escaping by ..', '/work/app/../secret'],
    ['already in the worktree', '/work/app/.forkflow/worktrees/fork-1/src/a.ts'],
    ['the worktree itself', '/work/app/.forkflow/worktrees/fork-1'],
  ])('leaves %s unchanged', (_what, p) => {
    expect(translatePath(p, wt)).toBe(p);
  });

  it('maps into a worktree outside the repository', () => {
    const outside: Worktree = { ...wt, path: '/trees/fork-1' };
    expect(translatePath('/work/app/src/a.ts', outside)).toBe(path.join('/trees/fork-1', 'src/a.ts'));
    expect(translatePath('/trees/fork-1/x', outside)).toBe('/trees/fork-1/x');
  });
});
