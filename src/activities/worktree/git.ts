/**
 * Running `git` for the worktree functions: `execFile` (no shell, so no quoting to get
 * wrong), inside the OS sandbox with a fixed environment (git-sandbox.ts), and failures
 * turned into {@link WorktreeError}s.
 */
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { WorktreeError } from './errors';
import { gitLaunch, repoDirsOf, type GitWrites } from './git-sandbox';
import { includesOutsideGitDir } from './plain-git-check';

export { gitEnv, type GitWrites } from './git-sandbox';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Enough for `git status` listing about a million untracked paths. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
/** A bound so a hung git cannot hold the per-repository lock forever; checkouts of big trees fit. */
const GIT_TIMEOUT_MS = 10 * 60 * 1000;

const GIT_MISSING = 'git is not installed or not on the PATH of this worker: install git (2.18 or newer) where the workspace lives.';

/**
 * Runs `git args…` in `cwd`, inside the OS sandbox where the worker has it (git-sandbox.ts),
 * writing only what `writes` opens. Resolves with the exit code whatever it is (callers decide
 * which codes are fine); rejects only when git could not run at all.
 */
export async function git(args: readonly string[], cwd: string, writes?: GitWrites): Promise<GitResult> {
  const launch = await gitLaunch(args, cwd, writes);
  if (!launch) throw new WorktreeError('git-missing', GIT_MISSING);
  const repo = launch.sandboxed ? undefined : repoDirsOf(cwd);
  const includes = repo ? includesOutsideGitDir(launch.file, repo.common, process.env) : [];
  if (includes.length > 0) {
    throw new WorktreeError('unsafe-repository', `The worker's git runs outside the OS sandbox here (the worker cannot sandbox, by its operator's choice), and ${repo!.common}/config includes files of the working tree, which forks can write: ${includes.join('; ')}. Move the included settings into the git directory or outside the workspace, or give the worker the sandbox.`);
  }
  return new Promise((resolve, reject) => {
    execFile(
      launch.file,
      launch.args,
      { cwd, env: launch.env, encoding: 'utf8', maxBuffer: MAX_OUTPUT_BYTES, timeout: GIT_TIMEOUT_MS, windowsHide: true },
      (err, stdout, stderr) => {
        if (err === null) {
          resolve({ code: 0, stdout, stderr });
        } else if (typeof err.code === 'number') {
          resolve({ code: err.code, stdout, stderr });
        } else if (err.code === 'ENOENT') {
          // The cwd is checked before any call (see gitToplevel), so ENOENT means git itself.
          reject(new WorktreeError('git-missing', GIT_MISSING, { cause: err }));
        } else {
          const why = err.killed ? `killed after ${GIT_TIMEOUT_MS / 1000} s or for output over ${MAX_OUTPUT_BYTES} bytes` : err.message;
          reject(new WorktreeError('git-failed', `git ${args.join(' ')} in ${cwd} failed: ${why}`, { cause: err }));
        }
      },
    );
  });
}

/** Runs git and returns stdout; a non-zero exit becomes a `git-failed` error with git's message. */
export async function gitOk(args: readonly string[], cwd: string, writes?: GitWrites): Promise<string> {
  const r = await git(args, cwd, writes);
  if (r.code !== 0) throw gitFailed(args, cwd, r);
  return r.stdout;
}

/** A `git-failed` error quoting git's own words (stderr, else stdout, else the exit code). */
export function gitFailed(args: readonly string[], cwd: string, r: GitResult): WorktreeError {
  const said = r.stderr.trim() || r.stdout.trim() || `exit code ${r.code}`;
  return new WorktreeError('git-failed', `git ${args.join(' ')} in ${cwd} failed: ${said}`);
}

/**
 * The top level of the working tree that contains `dir`, as git prints it (symlinks
 * resolved). A subdirectory of a repository is accepted and means that repository.
 */
export async function gitToplevel(dir: string): Promise<string> {
  const abs = path.resolve(dir);
  const info = await stat(abs).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new WorktreeError('not-a-repo', `${abs} is not a directory: pass the root of a git repository as repoRoot.`);
  }
  const r = await git(['rev-parse', '--show-toplevel'], abs);
  const top = r.stdout.trim();
  if (r.code !== 0 || top === '') {
    const said = r.stderr.trim() || 'no working tree';
    throw new WorktreeError('not-a-repo', `${abs} is not inside a git working tree (git said: ${said}). Worktree isolation needs a non-bare git repository with at least one commit; run \`git init\` and commit, or turn isolation off.`);
  }
  return path.resolve(top);
}
