/**
 * An agent's MCP servers over its life: opened when it starts (one `mcpOpen` activity per
 * server, side by side; their tool lists recorded, so the tools offered are the same bytes on
 * every turn, replay and sibling), waited for when required (the start is refused, with the
 * server's own words, when one does not come up), and their stdio sessions closed when it
 * ends. A continuing run takes the records over (its sessions stay open). An agent without
 * `mcpServers` schedules nothing here.
 */
import { isCancellation, workflowInfo } from '@temporalio/workflow';
import type { ToolDefinition } from '../../shared/messages-api/anthropic';
import { toMs } from '../../shared/base/duration';
import { FAILURE, failure } from '../../shared/wire/failures';
import { isHttpServer, MCP_DEFAULTS, mcpToolDefinition, requiredServers, type McpServerConfig, type McpServerRecord } from '../../shared/tools/mcp';
import { mcp } from '../activities';
import type { ForkAgent } from './agent';
import { callFailure } from './call-failures';

/** Where a server is opened: a stdio one on the agent's tool queue (its workspace's host), an HTTP one anywhere. */
export function openQueue(agent: ForkAgent, config: McpServerConfig): string {
  return isHttpServer(config) ? workflowInfo().taskQueue : (agent.toolQueue ?? workflowInfo().taskQueue);
}

/** Opens one server; every failure is a record saying why (the caller decides whether it is fatal). */
export async function openServer(agent: ForkAgent, server: string, opts: { required: boolean }): Promise<McpServerRecord> {
  const config = agent.input.mcpServers![server]!;
  const startMs = toMs(config.startTimeout ?? MCP_DEFAULTS.startTimeout);
  // A required server is waited for (about 30 s by default: its startTimeout), retrying.
  const waitMs = opts.required ? startMs : 0;
  try {
    return await mcp.mcpOpen.executeWithOptions(
      {
        taskQueue: openQueue(agent, config),
        scheduleToStartTimeout: 60_000,
        startToCloseTimeout: waitMs + 3 * startMs + 10_000,
        retry: { maximumAttempts: 2, initialInterval: '1s' },
        summary: `start MCP server ${server}`,
      },
      [{ agentId: agent.agentId, server, config, ...(agent.workspaceRoot ? { cwd: agent.workspaceRoot } : {}), ...(waitMs ? { waitMs } : {}) }],
    );
  } catch (err) {
    if (isCancellation(err)) throw err;
    const why = callFailure(err);
    const text = why.kind === 'unserved' ? `no worker took it from task queue "${openQueue(agent, config)}"` : why.kind === 'lost' ? 'the worker starting it was lost' : why.message;
    return { server, ok: false, error: `MCP server "${server}" could not be started: ${text}` };
  }
}

/**
 * Opens the agent's servers at its start (a continuing run has them from its carried state).
 * A required server that does not come up refuses the start with a `McpServerUnavailable`
 * failure naming it and why; the others are reported in the status and offered no tools.
 */
export async function openMcpServers(agent: ForkAgent): Promise<void> {
  const servers = agent.input.mcpServers;
  const names = Object.keys(servers ?? {});
  if (names.length === 0 || agent.mcp.size > 0) return;
  const { servers: required, unknown } = requiredServers(agent.input.requiredMcpServers, names);
  if (unknown.length > 0) {
    throw failure(FAILURE.mcpServerUnavailable, `requiredMcpServers names ${unknown.map((u) => `"${u}"`).join(', ')}, but this agent has no such MCP server (it has ${names.map((n) => `"${n}"`).join(', ')}). It was not started.`);
  }
  agent.doing(`starting MCP servers (${names.join(', ')})`);
  const records = await Promise.all(names.map((server) => openServer(agent, server, { required: required.includes(server) })));
  for (const r of records) agent.mcp.set(r);
  agent.doing(undefined);
  const missing = records.filter((r): r is Extract<McpServerRecord, { ok: false }> => !r.ok && required.includes(r.server));
  if (missing.length > 0) {
    await closeMcpSessions(agent);
    throw failure(FAILURE.mcpServerUnavailable, `This agent requires MCP server(s) that did not start, so it was not started: ${missing.map((m) => m.error).join(' ')}`);
  }
}

/** Tool definitions of the recorded servers, in configured order (what a fresh agent is offered besides its own). */
export function mcpToolDefinitions(records: readonly McpServerRecord[]): ToolDefinition[] {
  return records.flatMap((r) => (r.ok ? r.tools.map(mcpToolDefinition) : []));
}

/** Ends the agent's stdio sessions (their processes). A holder already gone has nothing to close. */
export async function closeMcpSessions(agent: ForkAgent): Promise<void> {
  await Promise.all(
    agent.mcp.all.map(async (r) => {
      if (!r.ok || !r.session) return;
      try {
        await mcp.mcpClose.executeWithOptions({ taskQueue: r.session.queue, scheduleToStartTimeout: 5_000, startToCloseTimeout: 30_000, summary: `stop MCP server ${r.server}` }, [{ session: { id: r.session.id } }]);
      } catch (err) {
        if (isCancellation(err)) throw err;
      }
    }),
  );
}
