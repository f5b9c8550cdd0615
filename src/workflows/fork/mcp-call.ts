/**
 * A call of an MCP server's tool: one `mcpCall` activity on the worker holding the server's
 * stdio session (an HTTP server: any worker), heartbeating. When the session is gone — its
 * worker lost (heartbeat, or nobody takes the call from that worker's queue), or the server
 * process exited — the server is opened again elsewhere and:
 * - a call that never reached it runs on the new session, and its result tells the model the
 *   server was started again (state from earlier calls is gone);
 * - a call that may have partly run runs again when the tool is idempotent (its result tells
 *   the model the server was started again: the call is the same, the server's state is not),
 *   and otherwise gets "interrupted, it may have partly run" once, saying the server was
 *   started again.
 */
import { isCancellation, workflowInfo } from '@temporalio/workflow';
import type { ToolUseBlock } from '../../shared/messages-api/anthropic';
import { toMs } from '../../shared/base/duration';
import { isHttpServer, MCP_DEFAULTS } from '../../shared/tools/mcp';
import { MCP_MAX_RESULT_BYTES, type McpCallResult } from '../../shared/tools/mcp-io';
import type { ToolTraits } from '../../shared/tools/table';
import { ACTIVITY_PROFILES } from '../../shared/wire/constants';
import { mcp } from '../activities';
import type { ForkAgent } from './agent';
import { callFailure, seconds } from './call-failures';
import { openServer } from './mcp-servers';
import { resultBlock, type ToolOutcome } from './service-call';
import { errorResult } from './tool-results';

/** Attempts of one call of an idempotent tool across lost sessions. */
const MCP_ATTEMPTS = 3;
/** A stdio session's call waits this long for its holder; longer means the holder is gone. */
const SESSION_SCHEDULE_TO_START_MS = 10_000;
/** An HTTP server's call waits this long for any worker. */
const HTTP_SCHEDULE_TO_START_MS = 60_000;

const RESTARTED = 'its session was started again, so state from earlier calls of it is gone';

type Lost = { lost: true; inFlight: boolean; reason: string };

const failed = (use: ToolUseBlock, message: string): ToolOutcome => ({ block: errorResult(use.id, message), outcome: 'error' });

/** One attempt: the activity's answer, or what was lost. */
async function callOnce(agent: ForkAgent, use: ToolUseBlock, input: Record<string, unknown>, home: { server: string; tool: string }, lane: number, attempt: number): Promise<McpCallResult | Lost> {
  const config = agent.input.mcpServers![home.server]!;
  const record = agent.mcp.record(home.server);
  const session = record?.ok ? record.session : undefined;
  const timeoutMs = toMs(config.timeout ?? MCP_DEFAULTS.timeout);
  const queue = session?.queue ?? workflowInfo().taskQueue;
  try {
    return await mcp.mcpCall.executeWithOptions(
      {
        taskQueue: queue,
        scheduleToStartTimeout: isHttpServer(config) ? HTTP_SCHEDULE_TO_START_MS : SESSION_SCHEDULE_TO_START_MS,
        startToCloseTimeout: timeoutMs + 15_000,
        heartbeatTimeout: ACTIVITY_PROFILES.tool.heartbeatMs,
        summary: `turn ${agent.turns} · ${use.name}${session ? ` · on ${session.queue}` : ''}${attempt > 1 ? ` · attempt ${attempt}` : ''}`,
      },
      [{ agentId: agent.agentId, server: home.server, config, ...(session ? { session: { id: session.id } } : {}), tool: home.tool, name: use.name, input, toolUseId: use.id, turn: agent.turns, ...(lane <= 63 ? { lane } : {}), attempt, timeoutMs, maxResultBytes: MCP_MAX_RESULT_BYTES }],
    );
  } catch (err) {
    if (isCancellation(err)) throw err;
    const why = callFailure(err);
    if (why.kind === 'unserved') return { lost: true, inFlight: false, reason: session ? `the worker holding it (task queue "${session.queue}") is gone` : `no worker took the call from task queue "${queue}" within ${seconds(HTTP_SCHEDULE_TO_START_MS)}` };
    if (why.kind === 'lost') return { lost: true, inFlight: true, reason: why.how === 'heartbeat' ? 'the worker running the call was lost' : `it ran past its ${seconds(timeoutMs + 15_000)} limit` };
    return { kind: 'result', isError: true, content: `${use.name} failed: ${why.message}` };
  }
}

/** Opens a stdio server again after its session was lost; an error text when it does not come up. */
async function reopen(agent: ForkAgent, server: string, tellModel: boolean): Promise<string | undefined> {
  const fresh = await openServer(agent, server, { required: false });
  if (!fresh.ok) return fresh.error;
  agent.mcp.restarted(server, fresh, { tellModel });
  agent.notice(`MCP server "${server}" was started again at turn ${agent.turns} (its session was lost).`);
  return undefined;
}

/** Runs `use` (with `input`, after any PreToolUse rewrite) on its MCP server. */
export async function runMcpTool(agent: ForkAgent, use: ToolUseBlock, input: Record<string, unknown>, tool: ToolTraits & { home: { kind: 'mcp'; server: string; tool: string } }, lane: number): Promise<ToolOutcome> {
  const { server } = tool.home;
  const record = agent.mcp.record(server);
  if (!record?.ok) return failed(use, `${use.name} is not available: ${record ? record.error : `MCP server "${server}" is not open for this agent`}`);
  const http = isHttpServer(agent.input.mcpServers![server]!);
  agent.doing(`tool ${use.name}`);
  for (let attempt = 1; ; attempt++) {
    const result = await callOnce(agent, use, input, tool.home, lane, attempt);
    if (!('lost' in result)) {
      if (result.kind === 'result') {
        if (result.listChanged) agent.mcp.listChanged(server);
        const told = agent.mcp.takeUntold(server);
        const content = told ? prefixed(`[MCP server "${server}" was started again before this call: ${RESTARTED}.]`, result.content) : result.content;
        return resultBlock(use.id, content, result.isError);
      }
      // The holder answered that it no longer has the session (or the server died in the call).
      const lostNow: Lost = { lost: true, inFlight: result.inFlight, reason: result.reason };
      const outcome = await afterLoss(agent, use, tool, lostNow, attempt, http);
      if (outcome) return outcome;
      continue;
    }
    const outcome = await afterLoss(agent, use, tool, result, attempt, http);
    if (outcome) return outcome;
  }
}

/** After a lost session: open the server again and say whether (undefined) the call runs once more. */
async function afterLoss(agent: ForkAgent, use: ToolUseBlock, tool: ToolTraits & { home: { kind: 'mcp'; server: string } }, lost: Lost, attempt: number, http: boolean): Promise<ToolOutcome | undefined> {
  const { server } = tool.home;
  const rerun = !lost.inFlight || tool.idempotent;
  // The re-run's result tells the model the server was restarted: a call that never reached
  // it, and an idempotent one that did (the call is safe again; the server's state is gone).
  if (!http) {
    const error = await reopen(agent, server, !lost.inFlight || rerun);
    if (error) return failed(use, `${use.name} was not run: MCP server "${server}" was lost (${lost.reason}) and could not be started again: ${error}`);
  }
  if (rerun && attempt < MCP_ATTEMPTS) return undefined;
  if (!rerun) {
    return failed(use, `${use.name} was interrupted: ${lost.reason}; it may have partly run. It was not run again: check its effect before you run it again.${http ? '' : ` MCP server "${server}": ${RESTARTED}.`}`);
  }
  return failed(use, `${use.name} failed: ${lost.reason}, ${attempt} time(s).`);
}

function prefixed(note: string, content: Extract<McpCallResult, { kind: 'result' }>['content']): Extract<McpCallResult, { kind: 'result' }>['content'] {
  return typeof content === 'string' ? `${note}\n${content}` : [{ type: 'text', text: note }, ...content];
}
