/**
 * A worker without the OS sandbox (its operator turned it off) runs its own git directly: then
 * it refuses a repository whose config includes a file of the working tree (a fork's FileWrite
 * could define a filter there), and its git still gets none of the worker's secrets.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createWorktree, finishWorktree, isWorktreeError } from '../../../src/activities/worktree';
import { gitLaunch } from '../../../src/activities/worktree/git-sandbox';
import { testRepo, type TestRepo } from './kit';

// Before anything probes the sandbox (once per module registry, so once per test file); put back after.
const savedSandbox = process.env.FORKFLOW_SANDBOX;
process.env.FORKFLOW_SANDBOX = 'off';
afterAll(() => {
  if (savedSandbox === undefined) delete process.env.FORKFLOW_SANDBOX;
  else process.env.FORKFLOW_SANDBOX = savedSandbox;
});

let repo: TestRepo;
beforeEach(() => {
  repo = testRepo();
});
afterEach(() => repo.remove());

test('without the sandbox, a repository whose config includes a working-tree file is refused, naming the include', async () => {
  expect(await gitLaunch(['status'], repo.root)).toMatchObject({ sandboxed: false });
  repo.git('config', 'include.path', '../shared.gitconfig');
  const err = await createWorktree({ repoRoot: repo.root, agentId: 'a' }).catch((e: unknown) => e);
  expect(isWorktreeError(err, 'unsafe-repository')).toBe(true);
  expect((err as Error).message).toContain('include.path = ../shared.gitconfig');
});

test('without the sandbox, the worker\'s git runs the operator\'s own filter with no secret in its environment', async () => {
  repo.git('config', 'filter.x.smudge', 'env > smudged-env; cat');
  repo.write('.gitattributes', 'README.md filter=x\n');
  repo.git('add', '.gitattributes');
  repo.git('commit', '-qm', 'attributes');
  const saved = process.env.ANTHROPIC_API_KEY;
  process.env.ANTHROPIC_API_KEY = 'sk-ant-worker-key';
  try {
    const wt = await createWorktree({ repoRoot: repo.root, agentId: 'b' });
    const seen = readFileSync(path.join(wt.path, 'smudged-env'), 'utf8');
    expect(seen).not.toContain('sk-ant');
    expect(seen).toContain('GIT_CONFIG_KEY_0=core.hooksPath');
    expect(existsSync(path.join(wt.path, 'README.md'))).toBe(true);
    await finishWorktree(wt);
  } finally {
    if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
    else process.env.ANTHROPIC_API_KEY = saved;
  }
});
