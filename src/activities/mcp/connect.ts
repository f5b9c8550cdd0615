/**
 * One connection to an MCP server through the official SDK: a stdio server started as a
 * process of this worker, or a streamable HTTP server. It keeps what an error message needs
 * (the end of the server's stderr, what it sent that was not MCP) and whether the server
 * said its tool list changed.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { isHttpServer, type McpServerConfig } from '../../shared/tools/mcp';
import { defaultStateDir } from '../tools/sandbox/protected';
import { expandRecord, expandVars } from './env';
import { makeScratch, removeScratch } from './scratch';

/** The most of a server's stderr (and of its stray output) kept for error messages. */
const TAIL_CHARS = 2_000;
/** Pages of a tool list read at most (a server that pages forever is cut off). */
const MAX_LIST_PAGES = 50;

function tail(text: string): string {
  return text.length > TAIL_CHARS ? `…${text.slice(-TAIL_CHARS)}` : text;
}

export interface McpConnection {
  readonly client: Client;
  /** Set when the server sent `notifications/tools/list_changed`. */
  listChanged: boolean;
  /** Set once the transport closed (the process exited, the HTTP session ended). */
  closed: boolean;
  /** What went wrong, for messages: the server's stderr and protocol errors, most recent last. */
  diagnostics(): string;
  close(): Promise<void>;
}

function clientFor(): Client {
  return new Client({ name: 'forkflow', version: '1' }, { capabilities: {} });
}

/**
 * Connects and initializes within `timeoutMs`. Throws with the server's own words (stderr,
 * stray output) when it exits, speaks something other than MCP, or does not answer. A stdio
 * server starts `opts.program` when given (the path the operator's consent matched).
 */
export async function connectMcp(config: McpServerConfig, opts: { scratchBase?: string; program?: string; timeoutMs: number; signal?: AbortSignal }): Promise<McpConnection> {
  const client = clientFor();
  const scratch = !isHttpServer(config) && !config.cwd ? await makeScratch(opts.scratchBase ?? join(defaultStateDir(), 'mcp-servers')) : undefined;
  let stderr = '';
  let errors = '';
  const state = { listChanged: false, closed: false };
  const transport = isHttpServer(config)
    ? new StreamableHTTPClientTransport(new URL(expandVars(config.url)), { requestInit: { headers: expandRecord(config.headers) } })
    : new StdioClientTransport({
        // The program the operator's consent matched (mcp/consent.ts), not a name looked up again.
        command: opts.program ?? expandVars(config.command),
        args: (config.args ?? []).map((a) => expandVars(a)),
        env: { ...getDefaultEnvironment(), ...expandRecord(config.env) },
        cwd: config.cwd ?? scratch,
        stderr: 'pipe',
      });
  if (transport instanceof StdioClientTransport) transport.stderr?.on('data', (chunk: Buffer) => (stderr = tail(stderr + chunk.toString())));
  const diagnostics = () => [stderr.trim() ? `stderr: ${stderr.trim()}` : '', errors.trim()].filter(Boolean).join('; ');
  client.onerror = (err) => {
    errors = tail(`${errors}${errors ? '; ' : ''}${err.message}`);
  };
  client.onclose = () => {
    state.closed = true;
  };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    state.listChanged = true;
  });
  const connection: McpConnection = {
    client,
    get listChanged() {
      return state.listChanged;
    },
    set listChanged(v: boolean) {
      state.listChanged = v;
    },
    get closed() {
      return state.closed;
    },
    diagnostics,
    async close() {
      state.closed = true;
      await client.close().catch(() => undefined);
      if (scratch) await removeScratch(scratch);
    },
  };
  try {
    await client.connect(transport, { timeout: opts.timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) });
  } catch (err) {
    await connection.close();
    const why = err instanceof Error ? err.message : String(err);
    const more = diagnostics();
    throw new Error(`could not start a session (${why})${more ? `: ${more}` : ''}`);
  }
  return connection;
}

/** The server's whole tool list (all pages, within `timeoutMs` each). */
export async function listAllTools(connection: McpConnection, timeoutMs: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const result = await connection.client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (!cursor) return tools;
  }
  throw new Error(`its tool list did not end after ${MAX_LIST_PAGES} pages`);
}
