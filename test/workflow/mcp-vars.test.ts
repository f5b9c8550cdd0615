/**
 * A token the worker's operator shares with MCP configs goes only where the operator says
 * (issue 42, finding 5). Whoever starts a fork writes its MCP configs: with MCP_CRM_TOKEN
 * set on the worker, a start naming an HTTP server of its own choosing with
 * `Authorization: Bearer ${MCP_CRM_TOKEN}` received the token; now the variable expands only
 * for a host listed for it in FORKFLOW_MCP_VAR_HOSTS, and the server hears nothing. A stdio
 * server's arguments with the token put it in `ps` for every local user; now a variable there
 * is refused (its env is the place). The agent runs on without the server, saying why.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import { startHarness, tempDir, type Harness } from '../kit/env';
import { waitFor } from '../kit/wait';

const TOKEN = `crm-secret-${process.pid}`;
let h: Harness;
let server: Server;
let url: string;
const heard: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  process.env.MCP_CRM_TOKEN = TOKEN;
  h = await startHarness({ name: 'mcp-vars' });
  server = createServer((req, res) => {
    heard.push(req.headers);
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
});
afterAll(async () => {
  delete process.env.MCP_CRM_TOKEN;
  delete process.env.FORKFLOW_MCP_VAR_HOSTS;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await h?.close();
});

/** The reason the agent's status gives for server `name`, once it has one. */
async function mcpError(agentId: string, name: string): Promise<string> {
  return waitFor(async () => (await h.forkflow.status(agentId)).mcpServers?.find((s) => s.name === name && s.error)?.error, `the status of ${name}`);
}

test('a shared token in a header to a host the operator did not list is not sent', async () => {
  const mcpServers = { crm: { type: 'http' as const, url, headers: { Authorization: 'Bearer ${MCP_CRM_TOKEN}' }, startTimeout: '5s' } };
  const result = await h.forkflow.fork({ agentId: 'mcp-var-leak', prompt: '@reply done', mcpServers }, { mode: 'sync' });
  expect(result.status).toBe('completed');
  const error = await mcpError('mcp-var-leak', 'crm');
  expect(JSON.stringify(heard)).not.toContain(TOKEN);
  expect(heard).toEqual([]);
  expect(error).toContain('${MCP_CRM_TOKEN} may be sent only to the hosts this worker\'s operator names for it, and 127.0.0.1 is not one');
  // Listed for that host, it goes (the server then answers badly, which is its own business).
  process.env.FORKFLOW_MCP_VAR_HOSTS = 'MCP_CRM_TOKEN=127.0.0.1';
  try {
    await h.forkflow.fork({ agentId: 'mcp-var-listed', prompt: '@reply done', mcpServers }, { mode: 'sync' });
    expect(heard.map((hd) => hd.authorization)).toContain(`Bearer ${TOKEN}`);
  } finally {
    delete process.env.FORKFLOW_MCP_VAR_HOSTS;
  }
});

test('a shared token in a stdio server\'s arguments is refused: it would be in every local user\'s ps', async () => {
  const out = join(tempDir('mcp-args'), 'argv.txt');
  const mcpServers = { crm: { command: 'sh', args: ['-c', `echo "$0" > ${out}`, '${MCP_CRM_TOKEN}'], startTimeout: '5s' } };
  await h.forkflow.fork({ agentId: 'mcp-var-args', prompt: '@reply done', mcpServers }, { mode: 'sync' });
  const error = await mcpError('mcp-var-args', 'crm');
  expect(existsSync(out) ? readFileSync(out, 'utf8') : '').not.toContain(TOKEN);
  expect(error).toContain("${MCP_CRM_TOKEN} in a stdio server's command or arguments is refused");
});
