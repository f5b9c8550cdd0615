/**
 * For a worker without the OS sandbox (its operator opted out), whose own git runs directly:
 * the repository's config must not pull in a file its forks can write. `.git/` itself is
 * beyond every tool's reach (no tool writes into a git directory, tools/visible.ts), but an
 * `include.path` (or `includeIf.<cond>.path`) naming a file of the working tree would let a
 * fork's FileWrite define a filter that this git then runs, with `.gitattributes` to name it.
 * Reading config runs nothing, and the directives sit in `.git/config`, which no fork can
 * change: checked before each git call, the answer cannot be raced.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** Include directives of the repository's own config whose file lies outside its git directory. */
export function includesOutsideGitDir(git: string, common: string, env: NodeJS.ProcessEnv): string[] {
  let out: string;
  try {
    out = execFileSync(git, ['config', '--local', '--list', '-z'], { cwd: common, env: { PATH: env.PATH ?? '/usr/bin:/bin', GIT_DIR: common, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 });
  } catch {
    return [];
  }
  return out
    .split('\0')
    .filter(Boolean)
    .flatMap((entry) => {
      const [key = '', value = ''] = entry.split('\n', 2);
      if (!/^include(if\..*)?\.path$/i.test(key)) return [];
      const target = value.startsWith('~/') ? path.join(env.HOME ?? '/', value.slice(2)) : path.resolve(common, value);
      return target === common || target.startsWith(`${common}/`) ? [] : [`${key} = ${value}`];
    });
}
