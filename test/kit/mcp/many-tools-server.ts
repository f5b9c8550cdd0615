/**
 * A hostile MCP server for the tests: a real one (the official SDK's server over stdio) that
 * lists as many tools as its first argument says (500 by default), each `tool_<n>` echoing
 * its input. forkflow must refuse the list whole with a clear error, or take the few its
 * `include` names.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const count = Number(process.argv[2] ?? 500);
const server = new Server({ name: 'many-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: Array.from({ length: count }, (_, i) => ({ name: `tool_${i}`, description: `Tool number ${i}.`, inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } } }, annotations: { readOnlyHint: true } })),
}));
server.setRequestHandler(CallToolRequestSchema, (req) => ({ content: [{ type: 'text' as const, text: `${req.params.name}: ${JSON.stringify(req.params.arguments ?? {})}` }] }));
void server.connect(new StdioServerTransport());
