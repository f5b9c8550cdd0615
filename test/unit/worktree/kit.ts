/**
 * Test kit for the worktree tests: a real temporary git repository with one commit, and
 * a `git` helper for looking at it independently of the code under test.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Our own git environment: no user or system config, so a developer's settings (signing, hooks) cannot interfere. */
function testEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
}

/** Runs git in `cwd` and returns trimmed stdout; throws on a non-zero exit. */
export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    env: testEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/** Exit code of a git command (for checks such as `check-ref-format`). */
export function gitStatusCode(cwd: string, ...args: string[]): number {
  try {
    gitIn(cwd, ...args);
    return 0;
  } catch (err) {
    return (err as { status?: number }).status ?? -1;
  }
}

export interface TestRepo {
  /** Canonical path of the repository's top level. */
  root: string;
  /** The commit HEAD points at after setup. */
  head: string;
  /** Writes a file (creating parents) relative to `dir` (default: the repository). */
  write(rel: string, content: string, dir?: string): string;
  git(...args: string[]): string;
  remove(): void;
}

/**
 * A repository with `README.md`, `src/a.ts` and a `.gitignore` ignoring `*.log`,
 * all committed on `main`. Other temporary directories can be made under `scratch`.
 */
export function testRepo(): TestRepo & { scratch: string } {
  const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'forkflow-worktree-')));
  const root = path.join(scratch, 'repo');
  mkdirSync(root);
  const write = (rel: string, content: string, dir = root): string => {
    const p = path.join(dir, rel);
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, content);
    return p;
  };
  gitIn(root, 'init', '--quiet', '--initial-branch=main');
  write('README.md', '# test\n');
  write('src/a.ts', 'export const a = 1;\n');
  write('.gitignore', '*.log\n');
  gitIn(root, 'add', '-A');
  gitIn(root, 'commit', '--quiet', '-m', 'initial');
  return {
    root,
    scratch,
    head: gitIn(root, 'rev-parse', 'HEAD'),
    write,
    git: (...args) => gitIn(root, ...args),
    remove: () => rmSync(scratch, { recursive: true, force: true }),
  };
}

/** Commits everything in `dir` with `message`; returns the new commit id. */
export function commitAll(dir: string, message: string): string {
  gitIn(dir, 'add', '-A');
  gitIn(dir, 'commit', '--quiet', '-m', message);
  return gitIn(dir, 'rev-parse', 'HEAD');
}

/** Paths of the repository's worktrees, from `git worktree list --porcelain`. */
export function worktreePaths(root: string): string[] {
  return gitIn(root, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length));
}

/** Whether `refs/heads/<branch>` exists. */
export function branchExists(root: string, branch: string): boolean {
  return gitStatusCode(root, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`) === 0;
}
