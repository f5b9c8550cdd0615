/**
 * The MCP activities:
 * - `mcpOpen` (on the agent's tool queue, at its start): connects to a server, lists its tools
 *   and returns the record the workflow keeps (a stdio session stays open on this worker, and
 *   its calls come back through this worker's session queue);
 * - `mcpCall`: one `tools/call`, heartbeating, with the server's progress on the live stream;
 * - `mcpClose`: ends a stdio session (its process) when the agent ends.
 * A server's failures come back as data (an error record, an `is_error` result, or
 * `session-lost` for the workflow to open the server again), never as a retried activity.
 */
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { toMs } from '../../shared/base/duration';
import { isHttpServer, MCP_DEFAULTS, type McpServerConfig, type McpServerRecord, type McpStdioServer } from '../../shared/tools/mcp';
import type { McpCallInput, McpCallResult, McpCloseInput, McpOpenInput } from '../../shared/tools/mcp-io';
import { startHeartbeat } from '../heartbeat';
import { NO_CONSENT, type OperatorConsent } from '../consent';
import { connectMcp, listAllTools, type McpConnection } from './connect';
import { mcpLaunchDecision } from './consent';
import type { McpHost } from './host';
import { ProgressSender } from './progress';
import { recordTools } from './records';
import { mcpResultContent } from './results';

const RETRY_CONNECT_MS = 500;

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const startTimeoutOf = (config: McpServerConfig) => toMs(config.startTimeout ?? MCP_DEFAULTS.startTimeout);

/** Connects and lists once; a required server (`waitMs`) is tried again until it answers or the time is up. */
async function openOnce(host: McpHost, input: McpOpenInput, launch: { scratchBase?: string; program?: string }, signal: AbortSignal): Promise<{ connection: McpConnection; record: McpServerRecord }> {
  const { config, server } = input;
  const timeoutMs = startTimeoutOf(config);
  const connection = isHttpServer(config) ? await host.httpConnection(config, timeoutMs) : await connectMcp(config, { ...launch, timeoutMs, signal });
  try {
    const tools = await listAllTools(connection, timeoutMs);
    const record = recordTools(server, config, tools);
    const info = connection.client.getServerVersion();
    return { connection, record: record.ok && info ? { ...record, serverInfo: { name: info.name, version: info.version } } : record };
  } catch (err) {
    if (isHttpServer(config)) host.dropHttp(config);
    else await connection.close();
    const more = connection.diagnostics();
    throw new Error(`could not list its tools (${messageOf(err)})${more ? `: ${more}` : ''}`);
  }
}

/**
 * `scratchBase`: under it, a stdio server whose config names no `cwd` runs in a fresh private
 * directory of its own, never the agent's workspace (default: the worker's state directory,
 * which no tool sees; see connect.ts). `consent`: the stdio commands this worker's operator
 * allows (default: none; consent.ts).
 */
export function createMcpActivities(deps: { host?: McpHost; scratchBase?: string; consent?: OperatorConsent }) {
  const hostOf = (): McpHost => {
    if (!deps.host) throw ApplicationFailure.create({ type: 'McpUnavailable', message: 'this worker was built without MCP support (createForkflowWorker / createWorkspaceWorker add it)', nonRetryable: true });
    return deps.host;
  };

  const activities = {
    async mcpOpen(input: McpOpenInput): Promise<McpServerRecord> {
      const ctx = Context.current();
      const host = hostOf();
      const stopBeat = startHeartbeat();
      const until = Date.now() + (input.waitMs ?? 0);
      const stdio = !isHttpServer(input.config);
      let last = '';
      try {
        let program: string | undefined;
        if (stdio) {
          // The operator's consent first: a refused command is an answer, never retried.
          const config = input.config as McpStdioServer;
          let launch;
          try {
            launch = await mcpLaunchDecision(input.server, config, deps.consent ?? NO_CONSENT);
          } catch (err) {
            return { server: input.server, ok: false, error: `MCP server "${input.server}" could not be started: ${messageOf(err)}` };
          }
          if (!launch.ok) {
            ctx.log.warn('refused to start an MCP server the operator has not allowed', { agentId: input.agentId, server: input.server, command: config.command });
            return { server: input.server, ok: false, error: launch.message };
          }
          program = launch.command;
          await host.serveSessions();
        }
        for (;;) {
          try {
            const { connection, record } = await openOnce(host, input, { ...(deps.scratchBase ? { scratchBase: deps.scratchBase } : {}), ...(program ? { program } : {}) }, ctx.cancellationSignal);
            if (!record.ok || !stdio) {
              if (!record.ok && stdio) await connection.close();
              return record;
            }
            const session = host.add({ agentId: input.agentId, server: input.server, connection });
            return { ...record, session: { queue: host.sessionQueue, id: session.id } };
          } catch (err) {
            if (ctx.cancellationSignal.aborted) throw new CancelledFailure('mcpOpen cancelled');
            last = messageOf(err);
          }
          if (Date.now() + RETRY_CONNECT_MS >= until) break;
          await new Promise((resolve) => setTimeout(resolve, RETRY_CONNECT_MS));
        }
        const waited = input.waitMs ? ` (tried for ${Math.round(input.waitMs / 1000)} s)` : '';
        return { server: input.server, ok: false, error: `MCP server "${input.server}" is unavailable${waited}: ${last}` };
      } finally {
        stopBeat();
      }
    },

    async mcpCall(input: McpCallInput): Promise<McpCallResult> {
      const ctx = Context.current();
      const host = hostOf();
      const { config } = input;
      let connection: McpConnection;
      if (input.session) {
        const session = host.get(input.session.id);
        if (!session) return { kind: 'session-lost', inFlight: false, reason: `this worker does not hold the session of MCP server "${input.server}" (it was restarted, or the server exited)` };
        connection = session.connection;
      } else if (isHttpServer(config)) {
        try {
          connection = await host.httpConnection(config, startTimeoutOf(config));
        } catch (err) {
          return { kind: 'result', isError: true, content: `MCP server "${input.server}" is unreachable: ${messageOf(err)}` };
        }
      } else {
        return { kind: 'session-lost', inFlight: false, reason: `no session of MCP server "${input.server}" was named` };
      }
      const progress = input.lane ? ProgressSender.open({ agentId: input.agentId, turn: input.turn, toolUseId: input.toolUseId, name: input.name, lane: input.lane, attempt: input.attempt }) : undefined;
      const stopBeat = startHeartbeat();
      try {
        const raw = await connection.client.callTool({ name: input.tool, arguments: input.input }, undefined, {
          timeout: input.timeoutMs,
          signal: ctx.cancellationSignal,
          ...(progress ? { onprogress: (p: { progress: number; total?: number; message?: string }) => progress.progress(p) } : {}),
        });
        const result = mcpResultContent(raw, input.name, input.maxResultBytes);
        if (connection.listChanged) result.listChanged = true;
        return result;
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure(`${input.name} cancelled`);
        // The server went away under the call (a stdio process that exited): it may have partly run.
        if (connection.closed && input.session) {
          await host.close(input.session.id);
          const more = connection.diagnostics();
          return { kind: 'session-lost', inFlight: true, reason: `MCP server "${input.server}" exited during the call${more ? ` (${more})` : ''}` };
        }
        if (isHttpServer(config) && (connection.closed || (err instanceof StreamableHTTPError && err.code === 404))) host.dropHttp(config);
        if (err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number)) {
          return { kind: 'result', isError: true, content: `${input.name} did not answer within ${Math.round(input.timeoutMs / 1000)} s; it may have partly run.` };
        }
        return { kind: 'result', isError: true, content: `${input.name} failed: ${messageOf(err)}` };
      } finally {
        stopBeat();
      }
    },

    async mcpClose(input: McpCloseInput): Promise<boolean> {
      return hostOf().close(input.session.id);
    },
  };
  // The session queue serves the calls and closes of the sessions this host holds.
  if (deps.host) deps.host.sessionActivities = { mcpCall: (input: McpCallInput) => activities.mcpCall(input), mcpClose: (input: McpCloseInput) => activities.mcpClose(input) };
  return activities;
}
