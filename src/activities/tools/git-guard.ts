/**
 * Repositories whose configuration runs programs, for Bash calls that must not write and run
 * outside the sandbox (an explicit opt-out, containment `classifier-only`). `git status`,
 * `diff`, `log -p` and `show` run a repository's clean/smudge filters, textconv drivers and
 * external diff programs (`diff.external`, `diff.<driver>.command`), and the classifier,
 * which sees only the command, cannot know: a fork that once wrote the workspace could have
 * planted them. So before such a call runs git, every repository within its reach (the
 * workspace's own and any nested below it, at any depth) has its configuration
 * read — reading config runs nothing — and the call is refused if any of them names a
 * program. Inside the sandbox none of this is needed: such a program runs contained.
 */
import { execFile } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

/** Keys whose value is a program git runs on its own during reading commands. */
const PROGRAM_KEYS = /^(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|diff\.external)$/i;

/**
 * How much the walk for nested repositories reads. It has no depth limit and enters
 * `node_modules` (a fork can plant a repository 20 levels down, or in a package folder, and
 * `git -C` it); a workspace with more directories than this is refused rather than half
 * checked.
 */
const WALK = { maxDirs: 50_000 } as const;
/** `.forkflow/` is the worker's, masked from every fork: nothing there was planted by one. */
const SKIP = new Set(['.forkflow']);

/** Git directories at or below `root` (and the one `root` itself is inside); undefined past the walk's bound. */
async function repositories(root: string): Promise<string[] | undefined> {
  const found: string[] = [];
  // The repository the workspace lives in may start above it.
  for (let dir = root; ; dir = path.dirname(dir)) {
    if (await stat(path.join(dir, '.git')).then(() => true, () => false)) {
      found.push(dir);
      break;
    }
    if (dir === path.dirname(dir)) break;
  }
  // Breadth first, iteratively: a deep tree costs no stack.
  const queue = [root];
  for (let i = 0; i < queue.length; i++) {
    if (i >= WALK.maxDirs) return undefined;
    const dir = queue[i]!;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (e.name === '.git' && dir !== root) found.push(dir);
      if (e.isDirectory() && !e.isSymbolicLink() && e.name !== '.git' && !SKIP.has(e.name)) queue.push(path.join(dir, e.name));
    }
  }
  return found;
}

/** `key=value` lines of a repository's local configuration, includes resolved. */
function localConfig(repo: string): Promise<string[]> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['config', '--local', '--includes', '--list', '-z'],
      { cwd: repo, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_OPTIONAL_LOCKS: '0' }, maxBuffer: 4 * 1024 * 1024, timeout: 10_000 },
      (err, stdout) => resolve(err ? [] : stdout.split('\0').filter(Boolean)),
    );
  });
}

/**
 * A refusal naming the program-running settings git would obey for `command` in `root`, or
 * `null` when none is set (or the command does not run git).
 */
export async function gitProgramsRefusal(command: string, root: string): Promise<string | null> {
  if (!/\bgit\b/.test(command)) return null;
  const repos = await repositories(root);
  if (repos === undefined) return `Denied: this worker runs shell commands without the OS sandbox, and this workspace holds more than ${WALK.maxDirs} folders, too many to check every repository in it for programs its configuration would have git run. Use Read, Glob and Grep instead.`;
  const offenders: string[] = [];
  for (const repo of repos) {
    for (const line of await localConfig(repo)) {
      const key = line.split('\n', 1)[0]!;
      if (PROGRAM_KEYS.test(key)) offenders.push(`${key} in ${repo}`);
    }
  }
  if (offenders.length === 0) return null;
  return `Denied: this worker runs shell commands without the OS sandbox, and git here would run programs the repository's configuration names (${offenders.slice(0, 5).join('; ')}). Use Read, Glob and Grep instead.`;
}
