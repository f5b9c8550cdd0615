/**
 * Operator consent: what this worker's operator allows a start input to make the worker run.
 * A start input (or an agent definition inside it) only asks — for a stdio MCP server's
 * command, for `bypassPermissions` — and whoever can reach the Temporal frontend can write a
 * start input, so the answer is the worker's, from its own configuration (src/worker/consent.ts
 * reads FORKFLOW_MCP_COMMANDS, FORKFLOW_ALLOW_BYPASS_PERMISSIONS and FORKFLOW_AGENT_DIRS, and
 * the `forkflow worker` flags). The activities that would run the program consult it here and
 * refuse by name, saying what the operator must set.
 */
import type { McpStdioServer } from '../shared/tools/mcp';

/**
 * One allow-list entry for stdio MCP commands (see src/activities/mcp/consent.ts for the
 * matching rule and src/worker/consent.ts for how an operator writes it).
 */
export interface McpCommandRule {
  /** Absolute path of the program, as the operator wrote it. */
  command: string;
  /** One pattern per argument: a literal, `*` (any one argument) or `prefix*`. */
  args: readonly string[];
  /** The arguments may go on past `args` (the rule ended with `...`). */
  moreArgs: boolean;
  /** Environment variables a start input may set for it: names, or prefixes ending in `*`. */
  env: readonly string[];
  /** Working directories a start input may name: absolute directories, `dir/*` (inside it), or `*`. */
  cwd: readonly string[];
  /** The rule as the operator wrote it (for messages and logs). */
  text: string;
}

/** What this worker's operator allows a start input to make it run. */
export interface OperatorConsent {
  /** Stdio MCP commands this worker may start (nothing by default). */
  mcpCommands: readonly McpCommandRule[];
  /**
   * The stdio servers declared by agent definitions in the directories the operator named:
   * such a server starts when a start input names it exactly as written there.
   */
  agentServers?: () => Promise<readonly McpStdioServer[]>;
  /** Bash may run outside the OS sandbox for an agent in `bypassPermissions` mode (off by default). */
  allowBypassPermissions: boolean;
}

/** A worker whose operator allowed nothing: no stdio MCP command, no bypass. */
export const NO_CONSENT: OperatorConsent = Object.freeze({ mcpCommands: [], allowBypassPermissions: false });

/** The settings that grant consent, named in every refusal. */
export const CONSENT_SETTINGS = {
  mcpCommands: 'FORKFLOW_MCP_COMMANDS (or `forkflow worker --mcp-command`)',
  agentDirs: 'FORKFLOW_AGENT_DIRS (or `forkflow worker --agent-dir`)',
  bypass: 'FORKFLOW_ALLOW_BYPASS_PERMISSIONS=1 (or `forkflow worker --allow-bypass-permissions`)',
} as const;

/** Why a Bash call of an agent in `bypassPermissions` mode does not run on this worker. */
export function bypassRefusal(): string {
  return (
    'Bash is refused: this agent runs in bypassPermissions mode (shell commands outside the OS sandbox), ' +
    "which its starter asked for, but this worker's operator has not allowed that. The operator can start the worker with " +
    `${CONSENT_SETTINGS.bypass}; otherwise start the agent in another permission mode. Read, Glob, Grep, FileEdit and FileWrite still work.`
  );
}
