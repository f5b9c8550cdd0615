/**
 * An MCP server for the tests whose one tool, `screenshot`, returns a PNG of about as many
 * base64 characters as its first argument says (1,000,000 by default): noise pixels, made by
 * the test kit's PNG encoder, a different image on every call. What a browser or desktop
 * tool hands back each turn.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { pngOfBase64Size } from '../media';

const size = Number(process.argv[2] ?? 1_000_000);
let calls = 0;
const server = new Server({ name: 'screenshots', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [{ name: 'screenshot', description: 'A screenshot of the screen, as a PNG.', inputSchema: { type: 'object' as const, properties: {} }, annotations: { readOnlyHint: true, idempotentHint: true } }],
}));
server.setRequestHandler(CallToolRequestSchema, () => {
  calls += 1;
  return { content: [{ type: 'text' as const, text: `screenshot ${calls}` }, { type: 'image' as const, mimeType: 'image/png', data: pngOfBase64Size(size, calls).toString('base64') }] };
});
void server.connect(new StdioServerTransport());
