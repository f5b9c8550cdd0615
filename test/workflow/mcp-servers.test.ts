/**
 * MCP servers of an agent, through the official SDK: two reference servers from npm (the
 * filesystem server over stdio, the "everything" server over streamable HTTP), and hostile
 * ones (exits at start, speaks no JSON-RPC, lists 500 tools). The tool list is recorded once
 * at the agent's start; calls are heartbeating activities on the worker holding the session;
 * progress reaches the live stream; every failure is a clear error, never a retry loop.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import type { StreamEvent } from '../../src/shared/streams/stream-events';
import { startHarness, tempDir, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';
import { everythingStdio, filesystemServer, hostileServer, startEverythingHttp, testServersConsent, type HttpMcpServer } from '../kit/mcp/servers';
import { bodyOf } from '../kit/requests';
import { agentStep, script, toolResultsIn, toolStep } from '../kit/tree';
import { rejectionOf } from '../kit/wait';

const E = temporal.api.enums.v1.EventType;

let h: Harness;
let docs: string;
let http: HttpMcpServer;
beforeAll(async () => {
  // The worker's operator allows the test servers, and `node -e <script>` (a server that dies at start).
  h = await startHarness({ name: 'mcp', consent: testServersConsent([`${process.execPath} -e *`]) });
  docs = tempDir('mcp-docs');
  mkdirSync(join(docs, 'sub'));
  writeFileSync(join(docs, 'readme.txt'), 'hello from the docs\n');
  http = await startEverythingHttp();
});
afterAll(async () => {
  await h.close();
  await http.stop();
});

async function historyOf(id: string) {
  return (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
}
const scheduled = (events: Awaited<ReturnType<typeof historyOf>>, type: string) => events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type).map((e) => e.activityTaskScheduledEventAttributes!);
const noTaskFailures = (events: Awaited<ReturnType<typeof historyOf>>) => expect(events.filter((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toEqual([]);

test('a stdio server (server-filesystem) and an HTTP one (server-everything): tools named mcp__<server>__<tool>, listed once, called on the worker holding the session', async () => {
  const prompt = script(
    'Use the servers.',
    toolStep('mcp__fs__read_text_file', { path: join(docs, 'readme.txt') }),
    `@tools ${JSON.stringify([{ name: 'mcp__everything__echo', input: { message: 'hi' } }, { name: 'mcp__everything__get-sum', input: { a: 2, b: 3 } }])}`,
    '@reply used them',
  );
  const mcpServers = { fs: filesystemServer(docs), everything: { type: 'http' as const, url: http.url, include: ['echo', 'get-sum', 'trigger-long-running-operation'] } };
  const result = await h.forkflow.fork({ agentId: 'mcp-basic', prompt, mcpServers, requiredMcpServers: ['fs', 'everything'] }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 'used them', toolUses: 3 });
  const [read, echo, sum] = toolResultsIn(await h.forkflow.transcript('mcp-basic'));
  expect(read).toEqual({ isError: false, text: 'hello from the docs\n' });
  expect(echo).toEqual({ isError: false, text: 'Echo: hi' });
  expect(sum).toEqual({ isError: false, text: 'The sum of 2 and 3 is 5.' });

  // Every request offered the same tool bytes, the servers' tools after forkflow's own.
  const requests = h.model.log.entries().filter((e) => JSON.stringify(e.body).includes('Use the servers.')).map(bodyOf);
  expect(requests.length).toBe(3);
  const toolsOf = (i: number) => JSON.stringify(requests[i]!.tools);
  expect(toolsOf(1)).toBe(toolsOf(0));
  expect(toolsOf(2)).toBe(toolsOf(0));
  const names = requests[0]!.tools!.map((t) => t.name);
  expect(names).toEqual(expect.arrayContaining(['Read', 'mcp__fs__read_text_file', 'mcp__fs__write_file', 'mcp__everything__echo', 'mcp__everything__get-sum']));
  expect(names.filter((n) => n.startsWith('mcp__everything__'))).toHaveLength(3);

  const events = await historyOf('mcp-basic');
  noTaskFailures(events);
  const opens = scheduled(events, 'mcpOpen');
  expect(opens).toHaveLength(2);
  const calls = scheduled(events, 'mcpCall');
  expect(calls).toHaveLength(3);
  // The stdio call went to the session's own queue (its worker), the HTTP ones to the agent's queue.
  expect(calls[0]!.taskQueue!.name).toMatch(new RegExp(`^${h.taskQueue}@mcp-`));
  expect(calls[1]!.taskQueue!.name).toBe(h.taskQueue);
  expect(calls[0]!.heartbeatTimeout).toBeTruthy();
  // The stdio session ended with the agent.
  const closes = scheduled(events, 'mcpClose');
  expect(closes).toHaveLength(1);
  expect(closes[0]!.taskQueue!.name).toBe(calls[0]!.taskQueue!.name);
  await recordHistory(h.client.workflow.getHandle('mcp-basic'), 'mcp-servers');
});

test('annotations decide: a read-only fork runs read_text_file (readOnlyHint) and refuses write_file', async () => {
  const prompt = script('Read only.', toolStep('mcp__fs__write_file', { path: join(docs, 'new.txt'), content: 'x' }), toolStep('mcp__fs__list_directory', { path: docs }), '@reply listed');
  const result = await h.forkflow.fork({ agentId: 'mcp-readonly', prompt, mcpServers: { fs: filesystemServer(docs) }, toolFilter: 'readOnly' }, { mode: 'sync' });
  expect(result.status).toBe('completed');
  const [write, list] = toolResultsIn(await h.forkflow.transcript('mcp-readonly'));
  expect(write).toMatchObject({ isError: true, text: expect.stringContaining('mcp__fs__write_file is denied: this agent is read-only') as string });
  expect(list).toMatchObject({ isError: false, text: expect.stringContaining('readme.txt') as string });
  expect(scheduled(await historyOf('mcp-readonly'), 'mcpCall')).toHaveLength(1);
});

test("a server's progress notifications reach the live stream", async () => {
  const prompt = script('Long op.', toolStep('mcp__everything__trigger-long-running-operation', { duration: 1.5, steps: 3 }), '@reply finished');
  const handle = await h.forkflow.start({ agentId: 'mcp-progress', prompt, mcpServers: { everything: everythingStdio() } });
  const events: StreamEvent[] = [];
  for await (const e of handle.stream()) events.push(e);
  const progress = events.filter((e): e is Extract<StreamEvent, { type: 'tool-progress' }> => e.type === 'tool-progress');
  expect(progress.length).toBeGreaterThanOrEqual(1);
  expect(progress.at(-1)).toMatchObject({ name: 'mcp__everything__trigger-long-running-operation', total: 3 });
  expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));
  const seqs = events.map((e) => e.seq);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  expect(events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
});

test('a required server that exits at start refuses the start, naming it and what it said; a non-required one is reported and the agent runs', async () => {
  const dying = { command: process.execPath, args: ['-e', 'process.stderr.write("no licence key\\n"); process.exit(3)'], startTimeout: '2s' };
  const refused = await rejectionOf(h.forkflow.fork({ agentId: 'mcp-required', prompt: '@reply never', mcpServers: { licensed: dying }, requiredMcpServers: ['licensed'] }, { mode: 'sync' }));
  expect(String(refused)).toContain('requires MCP server(s) that did not start');
  expect(String(refused)).toContain('MCP server "licensed" is unavailable (tried for 2 s)');
  expect(String(refused)).toContain('no licence key');
  noTaskFailures(await historyOf('mcp-required'));

  const handle = await h.forkflow.start({ agentId: 'mcp-optional', prompt: script('Go.', toolStep('mcp__licensed__anything', {}), '@reply went on'), mcpServers: { licensed: dying }, idleTimeout: '1m' });
  const { waitFor } = await import('../kit/wait');
  const status = await waitFor(async () => { const s = await handle.status(); return s.state === 'idle' ? s : undefined; }, 'the agent to finish');
  expect(status.mcpServers).toEqual([expect.objectContaining({ name: 'licensed', state: 'unavailable', tools: 0, error: expect.stringContaining('no licence key') as string })]);
  const [r] = toolResultsIn(await h.forkflow.transcript('mcp-optional'));
  expect(r).toMatchObject({ isError: true, text: expect.stringContaining('Tool "mcp__licensed__anything" is not available') as string });
  await handle.cancel();
});

test('a server that sends malformed JSON-RPC, and one that lists 500 tools: clear errors; include takes the few it needs', async () => {
  const handle = await h.forkflow.start({
    agentId: 'mcp-hostile',
    prompt: script('Go.', toolStep('mcp__few__tool_7', { text: 'seven' }), '@reply ok'),
    mcpServers: { garbled: hostileServer('malformed-server', [], { startTimeout: '2s' }), crowded: hostileServer('many-tools-server', ['500']), few: hostileServer('many-tools-server', ['500'], { include: ['tool_7', 'tool_8'] }) },
    idleTimeout: '1m',
  });
  const { waitFor } = await import('../kit/wait');
  const status = await waitFor(async () => { const s = await handle.status(); return s.state === 'idle' ? s : undefined; }, 'the agent to finish', 60_000);
  const byName = Object.fromEntries((status.mcpServers ?? []).map((s) => [s.name, s]));
  expect(byName.garbled).toMatchObject({ state: 'unavailable', error: expect.stringContaining('could not start a session') as string });
  expect(byName.garbled!.error).toMatch(/JSON|not valid|Unexpected/i);
  expect(byName.crowded).toMatchObject({ state: 'unavailable', error: expect.stringContaining('lists 500 tools, more than the 128 an agent is offered from one server') as string });
  expect(byName.few).toMatchObject({ state: 'ready', tools: 2 });
  const [r] = toolResultsIn(await h.forkflow.transcript('mcp-hostile'));
  expect(r).toEqual({ isError: false, text: 'tool_7: {"text":"seven"}' });
  noTaskFailures(await historyOf('mcp-hostile'));
  await handle.cancel();
});

describe('agent trees', () => {
  test("a fork child inherits its caller's servers: it calls the parent's MCP tool through a session of its own", async () => {
    const child = script('Read the docs.', toolStep('mcp__fs__read_text_file', { path: join(docs, 'readme.txt') }), '@reply child read them');
    const prompt = script('Delegate.', agentStep({ description: 'read docs', prompt: child, run_in_background: true }), '@reply waiting', '@reply after the report');
    const root = await h.forkflow.startAgent({ agentId: 'mcp-tree', prompt, mcpServers: { fs: filesystemServer(docs) } });
    expect(await root.result()).toMatchObject({ status: 'completed', text: 'after the report' });
    const childId = 'mcp-tree.fork-1';
    expect(await h.forkflow.result(childId)).toMatchObject({ status: 'completed', text: 'child read them' });
    expect(toolResultsIn(await h.forkflow.transcript(childId)).at(-1)).toEqual({ isError: false, text: 'hello from the docs\n' });
    const events = await historyOf(childId);
    expect(scheduled(events, 'mcpOpen')).toHaveLength(1);
    expect(scheduled(events, 'mcpClose')).toHaveLength(1);
  });

  test("a named agent gets the caller's servers its tools allow, and its own", async () => {
    const agents = [
      {
        name: 'echoer',
        description: 'Echoes.',
        systemPrompt: 'You echo.',
        sourceFile: 'echoer.md',
        tools: ['mcp__everything__*'],
        mcpServers: [{ everything: everythingStdio({ include: ['echo'] }) }],
      },
    ];
    const child = script('Echo it.', toolStep('mcp__everything__echo', { message: 'from the named agent' }), '@reply echoed');
    const prompt = script('Ask the echoer.', agentStep({ description: 'echo', prompt: child, subagent_type: 'echoer', run_in_background: true }), '@reply waiting', '@reply got it');
    const root = await h.forkflow.startAgent({ agentId: 'mcp-named', prompt, mcpServers: { fs: filesystemServer(docs) }, subAgents: { agents } });
    expect(await root.result()).toMatchObject({ status: 'completed' });
    const childId = 'mcp-named.spawn-1';
    const input = (await h.client.workflow.getHandle(childId).fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const started = JSON.parse(Buffer.from(input!.data!).toString()) as { mcpServers: Record<string, unknown>; tools: { name: string }[] };
    // Not the caller's filesystem server (its tools are not in the echoer's list); its own everything server.
    expect(Object.keys(started.mcpServers)).toEqual(['everything']);
    expect(toolResultsIn(await h.forkflow.transcript(childId)).at(-1)).toEqual({ isError: false, text: 'Echo: from the named agent' });
    const own = h.model.log.entries().find((e) => JSON.stringify(bodyOf(e).system ?? '').includes('You echo.'));
    const offered = bodyOf(own!).tools!.map((t) => t.name);
    expect(offered).toContain('mcp__everything__echo');
    expect(offered.some((n) => n.startsWith('mcp__fs__'))).toBe(false);
  });
});

test('across continue-as-new the stdio session is carried, not opened again; the last run closes it', async () => {
  const read = toolStep('mcp__fs__read_text_file', { path: join(docs, 'readme.txt') });
  const prompt = script('Read twice.', read, read, '@reply read twice');
  const handle = await h.forkflow.start({ agentId: 'mcp-can', prompt, mcpServers: { fs: filesystemServer(docs) }, continueAsNew: { turnsPerRun: 1 } });
  expect(await handle.result()).toMatchObject({ status: 'completed', text: 'read twice' });
  const first = (await h.client.workflow.getHandle('mcp-can', handle.runId).fetchHistory()).events ?? [];
  const last = await historyOf('mcp-can');
  expect(scheduled(first, 'mcpOpen')).toHaveLength(1);
  expect(scheduled(first, 'mcpClose')).toHaveLength(0);
  expect(scheduled(last, 'mcpOpen')).toHaveLength(0);
  const queues = [...scheduled(first, 'mcpCall'), ...scheduled(last, 'mcpCall')].map((c) => c.taskQueue!.name);
  expect(new Set(queues).size).toBe(1);
  expect(scheduled(last, 'mcpClose')).toHaveLength(1);
  expect(toolResultsIn(await h.forkflow.transcript('mcp-can')).map((r) => r.text)).toEqual(['hello from the docs\n', 'hello from the docs\n']);
});
