/**
 * Inputs and results of the MCP activities (src/activities/mcp/): opening a server for an
 * agent, calling one of its tools, closing its session. JSON-safe; the workflow imports the
 * types only.
 */
import type { McpServerConfig } from './mcp';

export interface McpOpenInput {
  agentId: string;
  server: string;
  config: McpServerConfig;
  /** A stdio server's working directory when its config names none: the agent's workspace. */
  cwd?: string;
  /** A required server: keep trying to connect for this long (ms) before giving up. */
  waitMs?: number;
}

export interface McpCallInput {
  agentId: string;
  server: string;
  config: McpServerConfig;
  /** A stdio server's session (its worker holds it); absent for HTTP servers. */
  session?: { id: string };
  /** The server's own name for the tool, and the name the model called. */
  tool: string;
  name: string;
  input: Record<string, unknown>;
  toolUseId: string;
  turn: number;
  /** Its place in the round (1-based), for progress on the live stream; absent: no progress events. */
  lane?: number;
  /** The call's attempt (a re-run after a lost session is 2, 3…). */
  attempt: number;
  timeoutMs: number;
  maxResultBytes: number;
}

export type McpCallResult =
  | {
      kind: 'result';
      content: string | ({ type: 'text'; text: string } | { type: 'image'; source: { type: 'base64'; media_type: string; data: string } })[];
      isError: boolean;
      /** The server said its tool list changed since the agent started (not re-offered: reported). */
      listChanged?: true;
    }
  /** This worker does not hold the session (its holder was lost, or the server died): `inFlight` when the call had been sent. */
  | { kind: 'session-lost'; inFlight: boolean; reason: string };

export interface McpCloseInput {
  session: { id: string };
}

/** The largest MCP tool result (UTF-8 bytes of its content) handed to the model. */
export const MCP_MAX_RESULT_BYTES = 1 << 20;
