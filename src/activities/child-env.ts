/**
 * The worker's secrets, kept out of the programs it starts. Most children get an environment
 * built from an allow-list (a Bash call: tools/shell-env.ts; the worker's git:
 * worktree/git-sandbox.ts; a stdio MCP server: the MCP SDK's default plus what its operator
 * allowed). Where a child needs the worker's environment as a whole (pip installing the
 * Temporal CLI through the host's proxy settings, the dev server), this takes the secrets out:
 * provider keys, tokens, passwords, key files, and forkflow's own keys.
 */

/** Names that hold a secret, or say where one is. */
const SECRET_NAME = /(?:API_?KEY|_KEYS?|_KEY_(?:FILE|DATA|PATH)|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|_AUTH)$/i;
/** Whole families that carry credentials. */
const SECRET_PREFIX = /^(?:ANTHROPIC_|OPENAI_|AWS_SECRET|AWS_SESSION|FORKFLOW_ENCRYPTION_|FORKFLOW_CODEC_|TEMPORAL_TLS_CLIENT_KEY|GOOGLE_APPLICATION_CREDENTIALS)/i;

/** Whether the variable `name` holds (or points at) a secret. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) || SECRET_PREFIX.test(name);
}

/** `env` without the variables that hold secrets (the worker's provider keys first of all). */
export function withoutSecrets(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !isSecretName(name)));
}
