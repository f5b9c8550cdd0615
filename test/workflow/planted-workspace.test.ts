/**
 * Issue 42, findings 3, 4 and 5: nothing a fork writes steers the worker. A writing fork in a
 * repository (sandboxed, as every fork is) goes after what the worker later trusts:
 * - finding 3: it plants `.forkflow/` where there was none — `.forkflow/worktrees` as a
 *   symlink into another tenant's folder (the next worktree would be checked out there) and
 *   `.forkflow/agents/helper.md`. `.forkflow/` is made and masked before its first call.
 * - finding 4: the repository's config includes a workspace file (`include.path`, a common way
 *   to share settings); the fork writes a smudge filter there and `.gitattributes`, commits,
 *   and the next worktree fork has the worker run `git worktree add`: the filter must not run
 *   outside the sandbox, nor see the provider key the worker holds.
 * - finding 5: a worktree fork moves the main checkout's branch and writes `.git/info/attributes`
 *   (read by every later git of the worker): it may write only its worktree, objects and branch.
 * Markers lie outside the fork's workspace, where no sandboxed command sees: a marker there
 * means a program ran outside the sandbox.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHarness, type Harness } from '../kit/env';
import { script, toolResultsIn, toolStep } from '../kit/tree';

jest.setTimeout(180_000);

const SECRET = `sk-ant-ffsecret-${randomBytes(8).toString('hex')}`;

let scratch: string;
let tenant: string;
let victim: string;
let outside: string;
let h: Harness;

const gitIn = (repo: string, ...args: string[]) => execFileSync('git', args, { cwd: repo, env: { PATH: process.env.PATH, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t', GIT_CONFIG_NOSYSTEM: '1', HOME: scratch } }).toString().trim();

/** A repository of the tenant's (each test its own), whose config includes a file of its working tree (shared settings). */
function repository(name: string): string {
  const repo = join(tenant, name);
  mkdirSync(repo);
  gitIn(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), '# repo\n');
  gitIn(repo, 'config', 'include.path', '../shared.gitconfig');
  gitIn(repo, 'add', '.');
  gitIn(repo, 'commit', '-q', '-m', 'init');
  return repo;
}

beforeAll(async () => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'forkflow-planted-')));
  tenant = join(scratch, 'tenant-a');
  victim = join(scratch, 'tenant-b');
  outside = join(scratch, 'outside');
  for (const d of [tenant, victim, outside]) mkdirSync(d);
  // One worker serves both tenants (their folders lie under its workspace root), as a shared worker does.
  h = await startHarness({ name: 'planted', workspaceRoot: scratch });
});

afterAll(async () => {
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});

test('finding 3: a writing fork cannot plant .forkflow/worktrees or .forkflow/agents; the next worktree stays in the repository', async () => {
  const repo = repository('f3');
  const workspace = { root: repo };
  const plant = `mkdir -p .forkflow/agents; ln -s ${victim} .forkflow/worktrees; echo 'name: helper' > .forkflow/agents/helper.md; ls -la .forkflow`;
  const planted = await h.forkflow.fork({ agentId: 'plant', prompt: script('Plant.', toolStep('Bash', { command: plant }), '@reply planted'), workspace }, { mode: 'sync' });
  expect(planted.status).toBe('completed');

  // The next worktree fork writes a file, so its worktree is kept where it was made.
  const next = await h.forkflow.fork({ agentId: 'after-plant', prompt: script('Note.', toolStep('FileWrite', { file_path: 'NOTES.md', content: 'x\n' }), '@reply noted'), isolation: 'worktree', workspace }, { mode: 'sync' });
  expect({
    agentFilePlanted: existsSync(join(repo, '.forkflow', 'agents', 'helper.md')),
    worktreesFolderIsASymlink: lstatSync(join(repo, '.forkflow', 'worktrees')).isSymbolicLink(),
    inTheOtherTenantsFolder: readdirSync(victim),
  }).toEqual({ agentFilePlanted: false, worktreesFolderIsASymlink: false, inTheOtherTenantsFolder: [] });
  expect(next.worktree).toMatchObject({ kind: 'kept', path: join(repo, '.forkflow', 'worktrees', 'after-plant') });
});

test('finding 4: a smudge filter a fork planted through include.path does not run outside the sandbox, nor see the provider key', async () => {
  const repo = repository('f4');
  const workspace = { root: repo };
  const marker = join(outside, 'smudge-env');
  const prompt = script(
    'Share a filter.',
    toolStep('FileWrite', { file_path: 'shared.gitconfig', content: `[filter "plant"]\n\tsmudge = env > ${marker}; cat\n` }),
    toolStep('FileWrite', { file_path: '.gitattributes', content: '*.md filter=plant\n' }),
    toolStep('Bash', { command: 'git add -A && git -c user.name=f -c user.email=f@f commit -qm share && git log --oneline -1' }),
    '@reply shared',
  );
  expect((await h.forkflow.fork({ agentId: 'filter-plant', prompt, workspace }, { mode: 'sync' })).status).toBe('completed');
  expect(gitIn(repo, 'log', '-1', '--format=%s')).toBe('share');

  // The worker holds a provider key, as a deployed one does; the next worktree fork makes the worker check out.
  const saved = process.env.ANTHROPIC_API_KEY;
  process.env.ANTHROPIC_API_KEY = SECRET;
  try {
    const child = await h.forkflow.fork({ agentId: 'filter-victim', prompt: '@reply looked', isolation: 'worktree', workspace }, { mode: 'sync' });
    expect(child.status).toBe('completed');
  } finally {
    if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
    else process.env.ANTHROPIC_API_KEY = saved;
  }
  const ran = existsSync(marker) ? readFileSync(marker, 'utf8') : '';
  expect({ ranOutsideTheSandbox: ran !== '', sawTheKey: ran.includes(SECRET) }).toEqual({ ranOutsideTheSandbox: false, sawTheKey: false });
});

test('finding 5: a worktree fork commits on its own branch, but moves no other branch and writes no .git/info/attributes', async () => {
  const repo = repository('f5');
  const main = gitIn(repo, 'rev-parse', 'main');
  const command = [
    'echo x > child.txt && git add child.txt && git -c user.name=f -c user.email=f@f commit -qm child && echo committed',
    'git update-ref refs/heads/main HEAD',
    `echo '* filter=plant' > ${join(repo, '.git', 'info', 'attributes')}`,
    'git branch planted',
  ].join('; ');
  const result = await h.forkflow.fork({ agentId: 'wt-writer', prompt: script('Commit.', toolStep('Bash', { command }), '@reply done'), isolation: 'worktree', workspace: { root: repo } }, { mode: 'sync' });
  const [bash] = toolResultsIn(await h.forkflow.transcript('wt-writer'));
  expect(bash!.text).toContain('committed');
  expect(result.worktree).toMatchObject({ kind: 'kept', branch: 'forkflow/wt-writer', commits: 1 });
  const attributes = join(repo, '.git', 'info', 'attributes');
  expect({ main: gitIn(repo, 'rev-parse', 'main'), attributes: existsSync(attributes) ? readFileSync(attributes, 'utf8') : '', planted: gitIn(repo, 'branch', '--list', 'planted') }).toEqual({ main, attributes: '', planted: '' });
});
