/**
 * What a repository a fork (or a hostile upstream) shaped cannot make the worker's own git do:
 * a committed `.forkflow` symlink does not move the worktrees folder; the worker's git runs in
 * the sandbox (a filter it obeys writes nothing outside what the call may write, and sees no
 * key); a worktree fork's git access is its own worktree, objects and branch.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sandboxAvailability } from '../../../src/activities/tools/sandbox';
import { worktreeGitAccess } from '../../../src/activities/tools/worktree-access';
import { createWorktree, finishWorktree } from '../../../src/activities/worktree';
import { gitLaunch } from '../../../src/activities/worktree/git-sandbox';
import { testRepo, type TestRepo } from './kit';

let repo: TestRepo;
beforeEach(() => {
  repo = testRepo();
});
afterEach(() => repo.remove());

test('a .forkflow symlink in the repository is refused, not followed into another folder', async () => {
  const elsewhere = path.join(path.dirname(repo.root), 'elsewhere');
  mkdirSync(elsewhere);
  symlinkSync(elsewhere, path.join(repo.root, '.forkflow'));
  await expect(createWorktree({ repoRoot: repo.root, agentId: 'a' })).rejects.toMatchObject({ code: 'invalid-spec', message: expect.stringContaining('is a symlink, on the way to the worktrees folder') as string });
  expect(existsSync(path.join(elsewhere, 'worktrees'))).toBe(false);
});

test('the worker\'s git runs in the sandbox, with no key: a smudge filter writes only into the new checkout', async () => {
  if (!(await sandboxAvailability()).available) throw new Error('this test needs the OS sandbox (bubblewrap)');
  const outside = path.join(path.dirname(repo.root), 'outside');
  mkdirSync(outside);
  repo.git('config', 'filter.x.smudge', `env > ${outside}/env; env > smudged-env; cat`);
  repo.write('.gitattributes', 'README.md filter=x\n');
  repo.git('add', '.gitattributes');
  repo.git('commit', '-qm', 'attributes');
  const launch = await gitLaunch(['status'], repo.root, undefined, { PATH: process.env.PATH, HOME: '/root', ANTHROPIC_API_KEY: 'sk-ant-x', OPENAI_API_KEY: 'sk-x' });
  expect(launch).toMatchObject({ sandboxed: true });
  expect(JSON.stringify(launch!.env)).not.toMatch(/sk-/);

  const saved = process.env.ANTHROPIC_API_KEY;
  process.env.ANTHROPIC_API_KEY = 'sk-ant-worker-key';
  let wt;
  try {
    wt = await createWorktree({ repoRoot: repo.root, agentId: 'smudged' });
  } finally {
    if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
    else process.env.ANTHROPIC_API_KEY = saved;
  }
  expect(existsSync(path.join(outside, 'env'))).toBe(false);
  // It ran (inside the sandbox: its private HOME), where the checkout is the only thing it may write.
  const seen = readFileSync(path.join(wt.path, 'smudged-env'), 'utf8');
  expect(seen).toContain('HOME=/tmp/home');
  expect(seen).not.toContain('sk-ant');
  expect(readFileSync(path.join(wt.path, 'README.md'), 'utf8')).toBe(readFileSync(path.join(repo.root, 'README.md'), 'utf8'));
  expect(await finishWorktree(wt)).toMatchObject({ kind: 'kept', changedFiles: ['smudged-env'] });
});

test('a worktree fork writes its objects, its branch and its own git directory; the repository\'s refs, info and config stay read-only', async () => {
  const wt = await createWorktree({ repoRoot: repo.root, agentId: 'child' });
  const common = path.join(repo.root, '.git');
  expect(worktreeGitAccess(wt.path, common)).toEqual({
    common,
    writable: [path.join(common, 'objects'), path.join(common, 'refs', 'heads', 'forkflow'), path.join(common, 'logs', 'refs', 'heads', 'forkflow'), path.join(common, 'worktrees', 'child')],
    readOnly: [path.join(common, 'worktrees', 'child', 'commondir'), path.join(common, 'worktrees', 'child', 'gitdir'), path.join(common, 'objects', 'info')],
  });
  // A link repointed (the .git file of the worktree names another git directory): no git access at all.
  writeFileSync(path.join(wt.path, '.git'), `gitdir: ${common}\n`);
  expect(worktreeGitAccess(wt.path, common)).toBeUndefined();
});
