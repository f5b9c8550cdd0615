/**
 * The environment a Bash tool call runs with. Never the worker's own: that holds API keys
 * (ANTHROPIC_API_KEY, TEMPORAL_API_KEY, cloud credentials) a model could print with `env`.
 * Only what commands need to behave normally passes through. For commands admitted as
 * read-only, git is also kept from reading config that could run programs and from
 * writing: no system or global config, no optional locks (`status` would rewrite the
 * index), and command-scope settings (which outrank the repository's own config) that
 * turn off fsmonitor, hooks, signature checks (gpg), every network transport (also the
 * lazy fetch of partial clones), the index refresh `git diff` writes, and repositories
 * discovered as bare directories inside the workspace (their config is just files).
 * The classifier refuses any command that sets or unsets these variables.
 *
 * Inside the OS sandbox, `HOME` and `TMPDIR` point into its private /tmp (the worker's own
 * are not there), and a call run as an unprivileged user trusts the workspace's
 * repository although another user owns it (`safe.directory`).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

const PASS_THROUGH = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'TZ', 'TMPDIR'];

/**
 * Toolchain homes that default to a folder of `$HOME`: inside the sandbox `$HOME` is a
 * private empty folder, so they are named where they really are (the sandbox shows them
 * read-only, sandbox/view.ts).
 */
const TOOL_HOMES: ReadonlyArray<readonly [variable: string, folder: string]> = [
  ['RUSTUP_HOME', '.rustup'],
  ['CARGO_HOME', '.cargo'],
  ['PYENV_ROOT', '.pyenv'],
  ['GOPATH', 'go'],
];

/** Git settings in the command scope (GIT_CONFIG_COUNT), for read-only commands. */
export const READ_ONLY_GIT_CONFIG: ReadonlyArray<readonly [key: string, value: string]> = [
  ['safe.bareRepository', 'explicit'],
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  ['diff.autoRefreshIndex', 'false'],
  ['log.showSignature', 'false'],
  ['gpg.program', 'false'],
  ['gpg.ssh.program', 'false'],
  ['gpg.x509.program', 'false'],
  ['protocol.allow', 'never'],
  ['core.sshCommand', 'false'],
  ['credential.helper', ''],
];

/** How the environment is shaped: read-only protections, and where the sandbox puts HOME. */
export interface ShellEnvOptions {
  readOnly: boolean;
  /** `$HOME` inside the sandbox (its private /tmp holds it); absent outside the sandbox. */
  sandboxHome?: string;
  /** The call runs as another user than the repository's owner (git would refuse it as "dubious"). */
  foreignOwner?: boolean;
}

export function shellEnvironment(source: NodeJS.ProcessEnv, opts: ShellEnvOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(source)) {
    if (value !== undefined && (PASS_THROUGH.includes(key) || key.startsWith('LC_'))) env[key] = value;
  }
  // No pagers or credential prompts: nobody can answer them.
  Object.assign(env, { PAGER: 'cat', GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' });
  if (opts.sandboxHome !== undefined) {
    for (const [variable, folder] of TOOL_HOMES) {
      const where = source[variable] ?? (source.HOME ? path.join(source.HOME, folder) : undefined);
      if (where && existsSync(where)) env[variable] = where;
    }
    Object.assign(env, { HOME: opts.sandboxHome, TMPDIR: '/tmp' });
  }
  const config: (readonly [string, string])[] = opts.readOnly ? [...READ_ONLY_GIT_CONFIG] : [];
  if (opts.foreignOwner) config.push(['safe.directory', '*']);
  if (opts.readOnly) {
    // An empty or relative PATH entry (`.`, `bin`) would let a file in the workspace
    // stand in for an allowed program such as `ls` or `git`.
    if (env.PATH !== undefined) env.PATH = env.PATH.split(':').filter((dir) => dir.startsWith('/')).join(':');
    Object.assign(env, {
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_OPTIONAL_LOCKS: '0',
      GIT_NO_LAZY_FETCH: '1',
      GIT_PROTOCOL_FROM_USER: '0',
    });
  }
  if (config.length > 0) {
    env.GIT_CONFIG_COUNT = String(config.length);
    config.forEach(([key, value], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = key;
      env[`GIT_CONFIG_VALUE_${i}`] = value;
    });
  }
  return env;
}
