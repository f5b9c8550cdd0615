/**
 * Repositories whose configuration runs programs, for Bash calls that must not write and run
 * outside the sandbox (an explicit opt-out, containment `classifier-only`). `git status`,
 * `diff`, `log -p` and `show` run a repository's clean/smudge filters, textconv drivers and
 * external diff programs (`diff.external`, `diff.<driver>.command`), and the classifier,
 * which sees only the command, cannot know: a fork that once wrote the workspace could have
 * planted them. So before such a call runs git, every repository within its reach (the
 * workspace's own and any nested below it, found by a bounded walk) has its configuration
 * read — reading config runs nothing — and the call is refused if any of them names a
 * program. Inside the sandbox none of this is needed: such a program runs contained.
 */
import { execFile } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

/** Keys whose value is a program git runs on its own during reading commands. */
const PROGRAM_KEYS = /^(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|diff\.external)$/i;

/** How far the walk for nested repositories looks. */
const WALK = { maxDepth: 6, maxEntries: 20_000 } as const;
const SKIP = new Set(['node_modules', '.forkflow']);

/** Git directories at or below `root` (and the one `root` itself is inside). */
async function repositories(root: string): Promise<string[]> {
  const found: string[] = [];
  // The repository the workspace lives in may start above it.
  for (let dir = root; ; dir = path.dirname(dir)) {
    if (await stat(path.join(dir, '.git')).then(() => true, () => false)) {
      found.push(dir);
      break;
    }
    if (dir === path.dirname(dir)) break;
  }
  let seen = 0;
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > WALK.maxDepth || seen > WALK.maxEntries) return;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      seen++;
      if (e.name === '.git' && dir !== root) found.push(dir);
      if (e.isDirectory() && !e.isSymbolicLink() && e.name !== '.git' && !SKIP.has(e.name)) await walk(path.join(dir, e.name), depth + 1);
    }
  };
  await walk(root, 0);
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
  const offenders: string[] = [];
  for (const repo of await repositories(root)) {
    for (const line of await localConfig(repo)) {
      const key = line.split('\n', 1)[0]!;
      if (PROGRAM_KEYS.test(key)) offenders.push(`${key} in ${repo}`);
    }
  }
  if (offenders.length === 0) return null;
  return `Denied: this worker runs shell commands without the OS sandbox, and git here would run programs the repository's configuration names (${offenders.slice(0, 5).join('; ')}). Use Read, Glob and Grep instead.`;
}
