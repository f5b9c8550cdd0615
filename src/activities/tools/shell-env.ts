/**
 * The environment a Bash tool call runs with. Never the worker's own: that holds API keys
 * (ANTHROPIC_API_KEY, TEMPORAL_API_KEY, cloud credentials) a model could print with `env`.
 * Only what commands need to behave normally passes through; for commands admitted as
 * read-only, git is also kept from reading config that could run programs (fsmonitor,
 * external diff, filters) and from taking optional locks.
 */
const PASS_THROUGH = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'TZ', 'TMPDIR'];

export function shellEnvironment(source: NodeJS.ProcessEnv, opts: { readOnly: boolean }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(source)) {
    if (value !== undefined && (PASS_THROUGH.includes(key) || key.startsWith('LC_'))) env[key] = value;
  }
  // No pagers or credential prompts: nobody can answer them.
  Object.assign(env, { PAGER: 'cat', GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' });
  if (opts.readOnly) Object.assign(env, { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_OPTIONAL_LOCKS: '0' });
  return env;
}
