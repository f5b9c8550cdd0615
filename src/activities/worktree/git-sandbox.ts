/**
 * How the worker's own git runs (worktree add, status, remove, branch -D). A repository a
 * fork worked in is the fork's to shape: `.gitattributes` naming a filter, a file that
 * `include.path` pulls into the config, a repository the fork made itself. What that config
 * names — a smudge or clean filter, a textconv — git runs; so the worker's git runs inside the
 * OS sandbox, like a fork's Bash call (tools/sandbox/): no network, none of the worker's
 * environment (no provider key, only PATH, the locale and git's own settings), a private
 * HOME, the repository read-only but for the directories the call itself must write, the
 * worker's protected paths masked, the git directory's config, hooks and `info/` read-only.
 * Inside it, hooks and fsmonitor stay off (command-scope settings) and no system or global
 * config is read.
 *
 * A worker without the sandbox (its operator opted out) runs git directly, with the same
 * environment minus nothing but HOME's global config; its forks' shell commands then run
 * outside any sandbox too, so nothing more is exposed (docs/security-model.md).
 */
import { accessSync, constants, lstatSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { bwrapArgs, SANDBOX_HOME, type Mask } from '../tools/sandbox/bwrap-args';
import { protectedPaths } from '../tools/sandbox/protected';
import { sandboxAvailability } from '../tools/sandbox/probe';
import { hiddenInside, systemEntries, within } from '../tools/sandbox/view';
import { realDirBelow } from '../tools/worktree-access';
import { BRANCH_PREFIX } from './names';

/**
 * What one call of the worker's git writes: `worktrees` — git's worktree records and
 * forkflow's branches (worktree add, remove, prune); `all` — the whole git directory but its
 * config, hooks and `info/` (branch -D rewrites `packed-refs`); `read` (the default) nothing.
 * `folder`, the worktrees folder, is mounted too (writable unless the call only reads): git
 * lists a worktree it cannot see as prunable.
 */
export interface GitWrites {
  gitDir?: 'read' | 'worktrees' | 'all';
  folder?: string;
}

/** Command-scope settings (they outrank every config file): nothing that runs a program of the repository's. */
const SETTINGS: ReadonlyArray<readonly [string, string]> = [
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  ['core.sshCommand', 'false'],
  ['core.pager', 'cat'],
  ['credential.helper', ''],
  ['protocol.allow', 'never'],
  ['submodule.recurse', 'false'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
];

/** Variables the worker's git gets from the worker's environment: nothing else (no key, no token). */
const PASS = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'TZ', 'TMPDIR']);

/**
 * The environment of the worker's git: PATH, HOME and the user's names (outside the sandbox),
 * git's own settings, no GIT_* of the worker's (GIT_DIR from a hook or an IDE would point git
 * elsewhere), and none of the worker's secrets.
 */
export function gitEnv(base: NodeJS.ProcessEnv = process.env, inSandbox = false): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) if (PASS.has(key) && value !== undefined) env[key] = value;
  if (env.PATH !== undefined) env.PATH = env.PATH.split(':').filter((d) => d.startsWith('/')).join(':');
  const settings = inSandbox ? [...SETTINGS, ['safe.directory', '*'] as const] : SETTINGS;
  Object.assign(env, {
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_CONFIG_NOSYSTEM: '1',
    // `git status` would otherwise refresh and rewrite the index; nobody needs that here.
    GIT_OPTIONAL_LOCKS: '0',
    GIT_CONFIG_COUNT: String(settings.length),
    LC_ALL: 'C',
    ...(inSandbox ? { HOME: SANDBOX_HOME, TMPDIR: '/tmp', GIT_CONFIG_GLOBAL: '/dev/null' } : {}),
  });
  settings.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/** The working tree around `dir` and its git directory, found as git finds them (no GIT_DIR). */
export function repoDirsOf(dir: string): { top: string; common: string } | undefined {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const dotGit = path.join(d, '.git');
    try {
      const st = lstatSync(dotGit);
      if (st.isDirectory()) return { top: realpathSync(d), common: realpathSync(dotGit) };
      if (st.isFile()) {
        const named = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim();
        if (!named) return undefined;
        const admin = path.resolve(d, named);
        let common = admin;
        try {
          common = path.resolve(admin, readFileSync(path.join(admin, 'commondir'), 'utf8').trim());
        } catch {
          // a git directory of its own (a submodule's)
        }
        return { top: realpathSync(d), common: realpathSync(common) };
      }
    } catch {
      // not here
    }
    if (d === path.dirname(d)) return undefined;
  }
}

function findGit(env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(':')) {
    if (!dir.startsWith('/')) continue;
    try {
      accessSync(path.join(dir, 'git'), constants.X_OK);
      return realpathSync(path.join(dir, 'git'));
    } catch {
      // not here
    }
  }
  return undefined;
}

/** How to start one git call: the program, its arguments, its environment. */
export interface GitLaunch {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  sandboxed: boolean;
}

/** The directories `writes` opens for writing (made first; one reached through a symlink is left out). */
function writableDirs(common: string, writes: GitWrites | undefined): string[] {
  if (!writes?.gitDir || writes.gitDir === 'read') return [];
  const dirs =
    writes.gitDir === 'all'
      ? [common]
      : [realDirBelow(common, 'worktrees'), realDirBelow(common, `refs/heads/${BRANCH_PREFIX}`), realDirBelow(common, `logs/refs/heads/${BRANCH_PREFIX}`)];
  if (writes.folder) dirs.push(writes.folder);
  return dirs.filter((d): d is string => d !== undefined);
}

function readOnlyGuards(common: string): Mask[] {
  return ['config', 'config.worktree', 'hooks', 'info'].flatMap((name) => {
    try {
      return [{ path: path.join(common, name), dir: lstatSync(path.join(common, name)).isDirectory(), readOnly: true }];
    } catch {
      return [];
    }
  });
}

/**
 * The launch of `git args` in `cwd`: inside the sandbox when this worker has it (and git lies
 * in what the sandbox shows), else directly. Undefined when git is not installed.
 */
export async function gitLaunch(args: readonly string[], cwd: string, writes?: GitWrites, env: NodeJS.ProcessEnv = process.env): Promise<GitLaunch | undefined> {
  const git = findGit(env);
  if (!git) return undefined;
  const availability = await sandboxAvailability();
  const repo = repoDirsOf(cwd);
  const system = systemEntries();
  const visible = system.some((e) => e.kind === 'bind' && within(git, e.source));
  if (!availability.available || !repo || !visible) return { file: git, args: [...args], env: gitEnv(env), sandboxed: false };
  const writable = writableDirs(repo.common, writes);
  const reads = [repo.top, repo.common, ...(writes?.folder ? [writes.folder] : [])].filter((d, i, all) => all.indexOf(d) === i && !writable.includes(d));
  const mounted = [...reads, ...writable];
  const hidden = hiddenInside({ root: repo.top, readPaths: reads, protected: protectedPaths(env), hidden: [] }, mounted).flatMap((p): Mask[] => {
    try {
      return [{ path: p, dir: lstatSync(p).isDirectory() }];
    } catch {
      return [];
    }
  });
  const guards = writable.includes(repo.common) ? readOnlyGuards(repo.common) : [];
  const root = realpathSync(cwd);
  const spec = { root, writable, readPaths: reads, masks: [...hidden, ...guards], system, tmpBytes: 64 * 1024 ** 2 };
  return { file: availability.path, args: [...bwrapArgs(spec), git, ...args], env: gitEnv(env, true), sandboxed: true };
}
