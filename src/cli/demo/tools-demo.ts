/**
 * The demo's third act: bring your own tools. An order desk's own worker (forkflow's helper,
 * `createToolWorker`, on a task queue of the desk's) serves `lookup_order`; an MCP server
 * (the reference filesystem server over stdio, when it is installed) lists this repository;
 * an agent calls both, each call a durable activity: on the desk's queue, and on the worker
 * holding the MCP session.
 */
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import type { OperatorConsent } from '../../activities/consent';
import type { ForkflowClient, ForkResult } from '../../client';
import { blocksOf } from '../../shared/messages-api/anthropic';
import type { McpServers } from '../../shared/tools/mcp';
import { createToolWorker, defineTool, toolRoutes } from '../../worker/tools';
import { truncate } from '../output';

export interface ToolsDemoOptions {
  client: ForkflowClient;
  offline: boolean;
  runId: string;
  /** The Temporal server's address (the desk's worker connects to it). */
  address: string;
  namespace: string;
  workspace: string;
  link: (workflowId: string) => string;
  say: (line: string) => void;
}

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Look an order up by its id: its status and when it shipped.',
  input: z.object({ order_id: z.string().min(1).describe('The order id, like A-100.') }),
  readOnly: true,
  run: ({ order_id }) => JSON.stringify({ order_id, status: 'shipped', shipped_on: '2026-03-03', items: 2 }),
});

/** The reference filesystem server over stdio, when it is installed (a dev dependency of forkflow). */
function filesystemServer(workspace: string): McpServers | undefined {
  try {
    const pkg = require.resolve('@modelcontextprotocol/server-filesystem/package.json');
    return { repo: { command: process.execPath, args: [pkg.replace(/package\.json$/, 'dist/index.js'), workspace], include: ['list_directory', 'read_text_file'] } };
  } catch {
    return undefined;
  }
}

/**
 * The demo worker's consent: exactly the filesystem server this demo starts, on this
 * workspace (a stdio MCP command runs only with its worker's consent: docs/guides/security-model.md).
 */
export function demoConsent(workspace: string): OperatorConsent {
  const server = filesystemServer(workspace)?.repo;
  const rule = server && 'command' in server ? [{ command: server.command, args: server.args ?? [], moreArgs: false, env: [], cwd: [], text: 'the demo\'s filesystem server' }] : [];
  return { mcpCommands: rule, allowBypassPermissions: false };
}

function prompt(offline: boolean, workspace: string, withMcp: boolean): string {
  if (!offline) {
    return `A customer asks about order A-100. Look it up with lookup_order${withMcp ? `, list the top level of ${workspace} with mcp__repo__list_directory,` : ''} and answer in two sentences.`;
  }
  return [
    'A customer asks about order A-100.',
    '@sleep 300 @tool lookup_order {"order_id":"A-100"}',
    ...(withMcp ? [`@sleep 300 @tool mcp__repo__list_directory ${JSON.stringify({ path: workspace })}`] : []),
    '@pace 40 @reply Order A-100 shipped on 3 March 2026 with two items; the repository was listed by an MCP server.',
  ].join('\n');
}

export async function runToolsDemo(o: ToolsDemoOptions): Promise<ForkResult> {
  const desk = `${o.client.taskQueue}-order-desk`;
  const mcpServers = filesystemServer(o.workspace);
  const agentId = `demo-${o.runId}-tools`;
  o.say(`\n8. Your own tools: an order desk's worker serves lookup_order on "${desk}"${mcpServers ? '; the filesystem MCP server (stdio) lists this repository' : ' (the filesystem MCP server is not installed here: npm i -D @modelcontextprotocol/server-filesystem)'}`);
  const connection = await NativeConnection.connect({ address: o.address });
  const worker = await createToolWorker({ connection, namespace: o.namespace, taskQueue: desk, tools: [lookupOrder] });
  const running = worker.run();
  try {
    const handle = await o.client.start({ agentId, forkLabel: 'tools', prompt: prompt(o.offline, o.workspace, mcpServers !== undefined), routes: toolRoutes([lookupOrder], desk), ...(mcpServers ? { mcpServers } : {}), maxTurns: 6 });
    const result = await handle.result();
    const transcript = await o.client.transcript(agentId);
    const uses = transcript.flatMap((m) => (m.role === 'assistant' ? blocksOf(m) : [])).flatMap((b) => (b.type === 'tool_use' ? [b] : []));
    const results = new Map(transcript.flatMap((m) => (m.role === 'user' ? blocksOf(m) : [])).flatMap((b) => (b.type === 'tool_result' ? [[b.tool_use_id, b] as const] : [])));
    for (const use of uses) {
      const r = results.get(use.id);
      const text = typeof r?.content === 'string' ? r.content : JSON.stringify(r?.content ?? '');
      o.say(`   ${r?.is_error ? '✗' : '←'} ${use.name}: ${truncate(text.replace(/\s+/g, ' '), 90)}`);
    }
    const status = await handle.status().catch(() => undefined);
    for (const s of status?.mcpServers ?? []) o.say(`   MCP server ${s.name}: ${s.state}, ${s.tools} tools${s.sessionQueue ? `, session on ${s.sessionQueue}` : ''}`);
    o.say(`   ${agentId} ${result.status} after ${result.turns} turns: ${result.text}`);
    o.say(`   ${o.link(agentId)}`);
    return result;
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
  }
}
