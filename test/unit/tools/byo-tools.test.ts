/**
 * The pure parts of bring-your-own tools: which route serves a name, what a route's attempts
 * are, MCP names and annotations as traits, which servers `requiredMcpServers` names, the
 * tool table's order (built-in > MCP > route), `${VAR}` expansion on the worker, and the
 * contract's shapes as other languages see them.
 */
import { expandRecord, expandVars, McpConfigVariableError, sharedWithMcp } from '../../../src/activities/mcp/env';
import { recordTools } from '../../../src/activities/mcp/records';
import { mcpResultContent } from '../../../src/activities/mcp/results';
import { forkInputSchema } from '../../../src/shared/wire/fork-input';
import { hooksFor, hooksSchema, mergeHooks } from '../../../src/shared/tools/hooks';
import { mcpServerOf, mcpServersSchema, mcpToolName, mcpToolNature, requiredServers } from '../../../src/shared/tools/mcp';
import { attemptPolicy, routeFor, routeSchema, routesSchema } from '../../../src/shared/tools/routes';
import { serviceContractJsonSchemas, serviceToolCallSchema, serviceToolResultSchema } from '../../../src/shared/tools/service-contract';
import { png } from '../../kit/media';
import { ToolTable } from '../../../src/shared/tools/table';

const route = (r: Record<string, unknown>) => routeSchema.parse(r);

test('routes: an exact name beats a prefix, the longest prefix beats a shorter one, the first route among equals', () => {
  const all = route({ tools: ['*'], taskQueue: 'catch-all' });
  const crm = route({ tools: ['crm_*'], taskQueue: 'crm' });
  const deals = route({ tools: ['crm_deals_*'], taskQueue: 'deals' });
  const exact = route({ tools: ['crm_deals_close'], taskQueue: 'closer' });
  const again = route({ tools: ['crm_*'], taskQueue: 'crm-2' });
  const routes = [all, crm, deals, exact, again];
  expect(routeFor(routes, 'crm_deals_close')?.taskQueue).toBe('closer');
  expect(routeFor(routes, 'crm_deals_open')?.taskQueue).toBe('deals');
  expect(routeFor(routes, 'crm_contacts')?.taskQueue).toBe('crm');
  expect(routeFor(routes, 'weather')?.taskQueue).toBe('catch-all');
  expect(routeFor([crm], 'weather')).toBeUndefined();
  expect(routesSchema.safeParse([{ tools: ['bad name'], taskQueue: 'q' }]).success).toBe(false);
});

test("a route's attempts: one for a tool that is not idempotent, its retry for one that is (read-only ones are)", () => {
  expect(attemptPolicy(route({ tools: ['a'], taskQueue: 'q' }))).toEqual({ maximumAttempts: 1, initialIntervalMs: 1000, timeoutMs: 60_000, scheduleToStartMs: 30_000 });
  expect(attemptPolicy(route({ tools: ['a'], taskQueue: 'q', readOnly: true })).maximumAttempts).toBe(3);
  expect(attemptPolicy(route({ tools: ['a'], taskQueue: 'q', readOnly: true, idempotent: false })).maximumAttempts).toBe(1);
  expect(attemptPolicy(route({ tools: ['a'], taskQueue: 'q', idempotent: true, retry: { maximumAttempts: 5 }, heartbeat: '5s', timeout: '2m' }))).toEqual({ maximumAttempts: 5, initialIntervalMs: 1000, timeoutMs: 120_000, heartbeatMs: 5000, scheduleToStartMs: 30_000 });
});

test('MCP names: mcp__<server>__<tool>, characters the provider refuses replaced, long ones cut with a hash', () => {
  expect(mcpToolName('github', 'create_issue')).toBe('mcp__github__create_issue');
  expect(mcpToolName('fs', 'read.file/v2')).toBe('mcp__fs__read_file_v2');
  const long = mcpToolName('srv', 'x'.repeat(200));
  expect(long).toHaveLength(128);
  expect(long).not.toBe(mcpToolName('srv', `${'x'.repeat(199)}y`));
  expect(mcpServerOf('mcp__my-server__tool')).toBe('my-server');
  expect(mcpServerOf('mcp__a_b__tool')).toBe('a_b');
  expect(mcpServerOf('lookup_order')).toBeUndefined();
  expect(mcpServersSchema.safeParse({ 'a__b': { command: 'x' } }).success).toBe(false);
  expect(mcpServersSchema.safeParse({ ok: { type: 'http', url: 'file:///etc/passwd' } }).success).toBe(false);
});

test('MCP annotations become traits (the spec\'s defaults: not read-only, destructive); a config override wins', () => {
  const t = (annotations?: Record<string, boolean>) => ({ name: 'mcp__s__t', tool: 't', inputSchema: { type: 'object' }, ...(annotations ? { annotations } : {}) });
  expect(mcpToolNature(t())).toEqual({ readOnly: false, idempotent: false, destructive: true });
  expect(mcpToolNature(t({ readOnlyHint: true }))).toEqual({ readOnly: true, idempotent: true, destructive: false });
  expect(mcpToolNature(t({ idempotentHint: true, destructiveHint: false }))).toEqual({ readOnly: false, idempotent: true, destructive: false });
  expect(mcpToolNature(t({ readOnlyHint: true }), { readOnly: false, idempotent: false })).toEqual({ readOnly: false, idempotent: false, destructive: true });
});

test('requiredMcpServers: names and prefixes over the configured servers; a name that matches none is reported', () => {
  expect(requiredServers(['git*', 'docs'], ['github', 'gitlab', 'docs', 'jira'])).toEqual({ servers: ['github', 'gitlab', 'docs'], unknown: [] });
  expect(requiredServers(['slack'], ['docs'])).toEqual({ servers: [], unknown: ['slack'] });
  expect(requiredServers(undefined, ['docs'])).toEqual({ servers: [], unknown: [] });
});

test('the tool table: built-in names win, then MCP tools by exact name, then routes', () => {
  const records = recordTools('fs', {} as never, [
    { name: 'read', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
    { name: 'write', inputSchema: { type: 'object' } },
    { name: 'broken', inputSchema: { type: 'string' } as never },
  ]);
  expect(records).toMatchObject({ ok: true, skipped: ['broken: its input schema is not a JSON Schema object'] });
  const table = new ToolTable([route({ tools: ['*'], taskQueue: 'svc' })], { records: [records] });
  expect(table.lookup('Read')?.home).toEqual({ kind: 'builtin' });
  expect(table.lookup('mcp__fs__read')).toMatchObject({ home: { kind: 'mcp', server: 'fs', tool: 'read' }, readOnly: true, effect: 'none' });
  expect(table.lookup('mcp__fs__write')).toMatchObject({ readOnly: false, idempotent: false, effect: 'external', destructive: true });
  expect(table.lookup('anything')).toMatchObject({ home: { kind: 'service' }, readOnly: false, effect: 'external' });
});

test('a server listing more tools than allowed is refused whole, naming the way out', () => {
  const tools = Array.from({ length: 130 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' as const } }));
  expect(recordTools('many', {} as never, tools)).toEqual({ server: 'many', ok: false, error: expect.stringContaining('lists 130 tools, more than the 128') as string });
  expect(recordTools('many', { include: ['t1*'] } as never, tools)).toMatchObject({ ok: true });
  const picked = recordTools('many', { include: ['t1*'] } as never, tools);
  expect(picked.ok && picked.tools.map((t) => t.name).slice(0, 2)).toEqual(['mcp__many__t1', 'mcp__many__t10']);
});

test('a tool schema nested past MAX_JSON_DEPTH is left out and said so, not recorded for every request to hash', () => {
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < 5_000; i++) deep = { type: 'object', properties: { x: deep } };
  const records = recordTools('deep', {} as never, [
    { name: 'fine', inputSchema: { type: 'object' } },
    { name: 'abyss', inputSchema: deep as never },
  ]);
  expect(records).toMatchObject({ ok: true, skipped: ['abyss: its input schema is nested deeper than 64 levels (MAX_JSON_DEPTH)'] });
  expect(records.ok && records.tools.map((t) => t.tool)).toEqual(['fine']);
});

test('MCP results: text joined, images kept, what the API cannot carry named, an oversized one an error', () => {
  expect(mcpResultContent({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, 'x', 100)).toEqual({ kind: 'result', isError: false, content: 'a\nb' });
  const data = png(2, 2).toString('base64');
  expect(mcpResultContent({ content: [{ type: 'image', mimeType: 'image/png', data }], isError: true }, 'x', 100)).toEqual({ kind: 'result', isError: true, content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }] });
  // Bytes that are not the PNG they claim to be never reach a request: a line says why.
  const fake = mcpResultContent({ content: [{ type: 'image', mimeType: 'image/png', data: 'AAAA' }] }, 'x', 1000);
  expect(fake.content).toEqual(expect.stringMatching(/^\[an image \(image\/png\) refused: /));
  expect(mcpResultContent({ content: [{ type: 'audio', mimeType: 'audio/wav', data: 'x' }] }, 'x', 100).content).toBe('[audio (audio/wav) the model cannot be given]');
  expect(mcpResultContent({ content: [], structuredContent: { n: 1 } }, 'x', 100).content).toBe('{"n":1}');
  expect(mcpResultContent({ content: [{ type: 'text', text: 'y'.repeat(101) }] }, 'big', 100)).toMatchObject({ isError: true, content: expect.stringContaining('big returned 101 bytes, more than the 100') as string });
});

test('${VAR} in an MCP config expands on the worker; an unset variable without a default names itself', () => {
  const env = { FORKFLOW_MCP_VARS: 'TOKEN, MISSING,EMPTY', TOKEN: 'abc', EMPTY: '' };
  expect(expandVars('Bearer ${TOKEN}', env)).toBe('Bearer abc');
  expect(expandVars('${MISSING:-fallback}/${EMPTY:-x}', env)).toBe('fallback/x');
  expect(expandRecord({ A: '${TOKEN}' }, env)).toEqual({ A: 'abc' });
  expect(() => expandVars('${MISSING}', env)).toThrow(McpConfigVariableError);
  expect(() => expandVars('${MISSING}', env)).toThrow('${MISSING} is not set on this worker');
});

test('${VAR} reaches only what the worker shares: a fork input cannot read the worker\'s keys through a config', () => {
  const env = { ANTHROPIC_API_KEY: 'sk-secret', MCP_DOCS_TOKEN: 'd', FORKFLOW_MCP_VARS: 'CRM_TOKEN', CRM_TOKEN: 'c' };
  expect(() => expandVars('https://evil.example/?k=${ANTHROPIC_API_KEY}', env)).toThrow('is not shared with MCP configs');
  // A default does not turn a refusal into a silent value either.
  expect(() => expandVars('${ANTHROPIC_API_KEY:-x}', env)).toThrow(McpConfigVariableError);
  expect(expandVars('${MCP_DOCS_TOKEN}/${CRM_TOKEN}', env)).toBe('d/c');
  expect(sharedWithMcp('CRM_TOKENS', env)).toBe(false);
});

test('hooks: matchers pick the tool events; merging puts the nearer level first', () => {
  const hooks = hooksSchema.parse({ PreToolUse: [{ taskQueue: 'a', matcher: 'crm_*' }, { taskQueue: 'b' }], Stop: [{ taskQueue: 'c' }] });
  expect(hooksFor(hooks, 'PreToolUse', 'crm_x').map((h) => h.taskQueue)).toEqual(['a', 'b']);
  expect(hooksFor(hooks, 'PreToolUse', 'Read').map((h) => h.taskQueue)).toEqual(['b']);
  expect(hooksFor(hooks, 'PostToolUse', 'Read')).toEqual([]);
  expect(mergeHooks({ Stop: [{ taskQueue: 'own' }] }, hooks)?.Stop?.map((h) => h.taskQueue)).toEqual(['own', 'c']);
  expect(hooksSchema.safeParse({ PreToolUse: [{ command: './x.sh' }] }).success).toBe(false);
});

test('the contract as JSON Schema, and a fork input with every new field', () => {
  const schemas = serviceContractJsonSchemas() as { activities: Record<string, string>; toolCall: { required: string[] }; toolResult: { required: string[] } };
  expect(schemas.activities).toEqual({ tool: 'forkflow.callTool', hook: 'forkflow.hook' });
  expect(schemas.toolCall.required.sort()).toEqual(['agent_id', 'attempt', 'input', 'root_id', 'tool', 'tool_use_id', 'turn', 'v'].sort());
  expect(schemas.toolResult.required).toEqual(['content']);
  expect(serviceToolCallSchema.safeParse({ v: 1, tool: 't', input: [], tool_use_id: 'x', agent_id: 'a', root_id: 'r', turn: 1, attempt: 1 }).success).toBe(false);
  expect(serviceToolResultSchema.safeParse({ content: [{ type: 'image', source: { type: 'url', url: 'x' } }] }).success).toBe(false);
  expect(serviceToolResultSchema.safeParse({ content: 'ok', extra: 1 }).success).toBe(true);
  const input = forkInputSchema.safeParse({
    prompt: 'p',
    routes: [{ tools: ['lookup_*'], taskQueue: 'orders', readOnly: true }],
    mcpServers: { fs: { command: 'mcp-fs', args: ['/srv'] }, web: { type: 'http', url: 'https://mcp.example/mcp', headers: { Authorization: 'Bearer ${T}' } } },
    requiredMcpServers: ['fs'],
    hooks: { PreToolUse: [{ taskQueue: 'policy' }] },
  });
  expect(input.success).toBe(true);
});
