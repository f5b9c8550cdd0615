/**
 * A service's own tools, routed to its task queue and served by forkflow's TypeScript helper
 * on a worker of its own: the call is one `forkflow.callTool` activity there with the
 * documented input; the same rules as built-in tools apply (read-only agents, approvals,
 * budgets); every way a service can fail — a bad input, a throw, a queue nobody serves, no
 * answer, 5 MB — is an error result the model reads, with no activity or workflow-task retry.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { createToolWorker, defineHook, toolRoutes } from '../../src/worker/tools';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';
import { LEDGER, orderDeskHooks, orderDeskTools } from '../kit/service-tools';
import { agentStep, script, toolResultsIn, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';
import { rawHistory, referenceCount } from '../kit/raw-history';

const E = temporal.api.enums.v1.EventType;

let h: Harness;
let toolQueue: string;
let stateDir: string;
let connection: NativeConnection;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  h = await startHarness({ name: 'service-tools' });
  stateDir = tempDir('service-state');
  toolQueue = uniqueTaskQueue('order-desk');
  connection = await NativeConnection.connect({ address: h.env.address });
  worker = await createToolWorker({ connection, namespace: h.env.namespace, taskQueue: toolQueue, tools: orderDeskTools(stateDir) });
  running = worker.run();
});
afterAll(async () => {
  worker.shutdown();
  await running;
  await connection.close();
  await h.close();
});

const routes = () => toolRoutes(orderDeskTools(stateDir), toolQueue);
const ledger = () => readFileSync(join(stateDir, LEDGER), 'utf8').split('\n').filter(Boolean);

async function historyOf(id: string) {
  return (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
}

function scheduled(events: Awaited<ReturnType<typeof historyOf>>, type: string) {
  return events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type).map((e) => e.activityTaskScheduledEventAttributes!);
}

test('a routed call is one forkflow.callTool activity on the service queue, with the documented input; its result reaches the model', async () => {
  const prompt = script('Check an order.', toolStep('lookup_order', { order_id: 'A-100' }), '@reply looked it up');
  const result = await h.forkflow.fork({ agentId: 'svc-lookup', prompt, routes: routes() }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 'looked it up', toolUses: 1 });
  const [r] = toolResultsIn(await h.forkflow.transcript('svc-lookup'));
  expect(r).toEqual({ isError: false, text: 'order A-100: shipped, 2 items' });

  const events = await historyOf('svc-lookup');
  const calls = scheduled(events, 'forkflow.callTool');
  expect(calls).toHaveLength(1);
  expect(calls[0]!.taskQueue?.name).toBe(toolQueue);
  expect(calls[0]!.retryPolicy?.maximumAttempts).toBe(1);
  const input = JSON.parse(Buffer.from(calls[0]!.input!.payloads![0]!.data!).toString()) as Record<string, unknown>;
  expect(input).toEqual({ v: 1, tool: 'lookup_order', input: { order_id: 'A-100' }, tool_use_id: expect.stringMatching(/^toolu_/) as string, agent_id: 'svc-lookup', root_id: 'svc-lookup', turn: 1, attempt: 1 });
  // The model was offered the tool's own definition (from its zod schema).
  const bodies = h.model.log.entries().map((e) => e.body as { tools?: { name: string }[] } | undefined);
  const offered = bodies.flatMap((b) => b?.tools ?? []).find((t) => t.name === 'lookup_order');
  expect(offered).toMatchObject({ description: 'Look an order up by its id.', input_schema: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] } });
  await recordHistory(h.client.workflow.getHandle('svc-lookup'), 'service-tool-lookup');
});

test('a read-only fork refuses a routed tool not declared read-only, and runs one that is', async () => {
  const prompt = script('Read only.', toolStep('refund_order', { order_id: 'A-1', amount: 5 }), toolStep('lookup_order', { order_id: 'A-2' }), '@reply done');
  const result = await h.forkflow.fork({ agentId: 'svc-readonly', prompt, routes: routes(), toolFilter: 'readOnly' }, { mode: 'sync' });
  expect(result.status).toBe('completed');
  const [refund, lookup] = toolResultsIn(await h.forkflow.transcript('svc-readonly'));
  expect(refund).toMatchObject({ isError: true, text: expect.stringContaining('refund_order is denied: this agent is read-only') as string });
  expect(lookup).toEqual({ isError: false, text: 'order A-2: shipped, 2 items' });
  expect(scheduled(await historyOf('svc-readonly'), 'forkflow.callTool')).toHaveLength(1);
  expect(ledger().filter((l) => l.startsWith('refund_order'))).toEqual([]);
});

test('input that fails the schema, an unknown tool of the service, and a tool that throws: error results, one attempt each', async () => {
  const prompt = script(
    'Try.',
    toolStep('refund_order', { order_id: 'A-3', amount: 'lots' }),
    toolStep('explode', {}),
    '@reply tried',
  );
  const result = await h.forkflow.fork({ agentId: 'svc-errors', prompt, routes: routes() }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 'tried' });
  const [bad, threw] = toolResultsIn(await h.forkflow.transcript('svc-errors'));
  expect(bad).toMatchObject({ isError: true, text: 'Invalid input for refund_order: amount: must be a number. Fix the input and call it again.' });
  expect(threw).toMatchObject({ isError: true, text: expect.stringContaining('explode failed in its service') as string });
  expect(threw!.text).toContain('inventory database is down');
  const events = await historyOf('svc-errors');
  expect(scheduled(events, 'forkflow.callTool')).toHaveLength(2);
  expect(events.filter((e) => e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_FAILED)).toHaveLength(1);
  expect(events.filter((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toEqual([]);
});

test('a queue nobody serves is an error after the route\'s schedule-to-start limit; the fork goes on', async () => {
  const prompt = script('Route nowhere.', toolStep('ghost_tool', { q: 1 }), '@reply carried on');
  const result = await h.forkflow.fork({ agentId: 'svc-unserved', prompt, routes: [{ tools: ['ghost_*'], taskQueue: uniqueTaskQueue('nobody'), scheduleToStart: '1s' }] }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 'carried on' });
  const [r] = toolResultsIn(await h.forkflow.transcript('svc-unserved'));
  expect(r).toMatchObject({ isError: true, text: expect.stringMatching(/ghost_tool was not run: no worker took it from task queue "test-nobody-.*" within 1 s/) as string });
  const events = await historyOf('svc-unserved');
  expect(scheduled(events, 'forkflow.callTool')).toHaveLength(1);
  expect(events.filter((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toEqual([]);
});

test('a tool that never answers: a non-idempotent one is interrupted once, an idempotent one tried its attempts', async () => {
  const prompt = script('Wait.', toolStep('hang', {}), '@reply gave up');
  const result = await h.forkflow.fork({ agentId: 'svc-hang', prompt, routes: [{ tools: ['hang'], taskQueue: toolQueue, timeout: '1s' }] }, { mode: 'sync' });
  expect(result.status).toBe('completed');
  const [r] = toolResultsIn(await h.forkflow.transcript('svc-hang'));
  expect(r).toMatchObject({ isError: true, text: expect.stringContaining('hang was interrupted: no answer within its 1 s limit') as string });
  expect(r!.text).toContain('it may have partly run. It was not run again');
  expect(scheduled(await historyOf('svc-hang'), 'forkflow.callTool')).toHaveLength(1);

  const idem = script('Wait again.', toolStep('hang', {}), '@reply gave up again');
  await h.forkflow.fork({ agentId: 'svc-hang-idem', prompt: idem, routes: [{ tools: ['hang'], taskQueue: toolQueue, timeout: '1s', idempotent: true, retry: { maximumAttempts: 2, initialInterval: '100ms' } }] }, { mode: 'sync' });
  const [again] = toolResultsIn(await h.forkflow.transcript('svc-hang-idem'));
  expect(again).toMatchObject({ isError: true, text: expect.stringContaining('hang failed: no answer within its 1 s limit (its worker may have been lost), 2 time(s)') as string });
  const calls = scheduled(await historyOf('svc-hang-idem'), 'forkflow.callTool');
  expect(calls.map((c) => (JSON.parse(Buffer.from(c.input!.payloads![0]!.data!).toString()) as { attempt: number }).attempt)).toEqual([1, 2]);
});

test('a 5 MB result is a clear error (over the route\'s limit); the worker and the fork go on', async () => {
  const prompt = script('Big.', toolStep('huge', {}), toolStep('lookup_order', { order_id: 'A-5' }), '@reply survived');
  const result = await h.forkflow.fork({ agentId: 'svc-huge', prompt, routes: routes() }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 'survived' });
  const [big, after] = toolResultsIn(await h.forkflow.transcript('svc-huge'));
  expect(big).toMatchObject({ isError: true, text: 'huge produced 5242880 bytes, more than the 4194304 it may return: ask for less.' });
  expect(after).toEqual({ isError: false, text: 'order A-5: shipped, 2 items' });
});

test('a 600 KB result reaches the model whole, through external storage (history keeps a reference)', async () => {
  const prompt = script('Report.', toolStep('big_report', {}), '@reply read it');
  expect(await h.forkflow.fork({ agentId: 'svc-big', prompt, routes: routes() }, { mode: 'sync' })).toMatchObject({ status: 'completed', text: 'read it' });
  const [big] = toolResultsIn(await h.forkflow.transcript('svc-big'));
  expect(big).toEqual({ isError: false, text: 'y'.repeat(600_000) });
  const history = await rawHistory(h.client, 'svc-big');
  expect(referenceCount(history)).toBeGreaterThan(0);
  expect(history.bytes).toBeLessThan(200_000);
});

test('under bubble a routed write waits for approval (a read-only one does not); tool calls count against the budget', async () => {
  const prompt = script('Refund.', toolStep('lookup_order', { order_id: 'A-9' }), toolStep('refund_order', { order_id: 'A-9', amount: 20 }), toolStep('lookup_order', { order_id: 'A-10' }), '@reply refunded');
  const handle = await h.forkflow.start({ agentId: 'svc-bubble', prompt, routes: routes(), permissionMode: 'bubble', budget: { maxTokens: 50_000, maxToolCalls: 2 } });
  const pending = await waitFor(async () => (await handle.status()).approvals[0], 'the approval request');
  expect(pending.tool).toBe('refund_order');
  // The read-only lookup ran without asking; the refund has not run.
  expect(ledger().some((l) => l.startsWith('refund_order'))).toBe(false);
  await h.forkflow.approve('svc-bubble', pending.requestId);
  // Two calls spend the budget of two: the fork stops there, as it would after two built-in calls.
  expect(await handle.result()).toMatchObject({ status: 'completed', stopReason: 'budget_exhausted', toolUses: 2 });
  const [lookup, refund] = toolResultsIn(await h.forkflow.transcript('svc-bubble'));
  expect(lookup).toEqual({ isError: false, text: 'order A-9: shipped, 2 items' });
  expect(refund).toEqual({ isError: false, text: 'refunded 20 on A-9' });
  expect(ledger().filter((l) => l.startsWith('refund_order'))).toHaveLength(1);
});

describe('hooks', () => {
  let hookQueue: string;
  let hookWorker: Worker;
  let hookRunning: Promise<void>;
  beforeAll(async () => {
    hookQueue = uniqueTaskQueue('policy');
    hookWorker = await createToolWorker({ connection, namespace: h.env.namespace, taskQueue: hookQueue, tools: [], hooks: orderDeskHooks(stateDir) });
    hookRunning = hookWorker.run();
  });
  afterAll(async () => {
    hookWorker.shutdown();
    await hookRunning;
  });

  test('PreToolUse denies and rewrites, PostToolUse and SubagentStart add context, Stop sends the agent back once, SubagentStop hears the end', async () => {
    const at = () => [{ taskQueue: hookQueue }];
    const prompt = script(
      'Serve the customer.',
      toolStep('refund_order', { order_id: 'A-20', amount: 500 }),
      toolStep('lookup_order', { order_id: 'legacy-7' }),
      '@reply all done',
    );
    const hooks = { PreToolUse: at(), PostToolUse: at(), SubagentStart: at(), Stop: at(), SubagentStop: at() };
    // The Stop hook's message is the agent's next user turn (its script: a reply).
    const result = await h.forkflow.fork({ agentId: 'svc-hooks', prompt, routes: routes(), hooks }, { mode: 'sync' });
    expect(result).toMatchObject({ status: 'completed', text: 'goodbye' });
    const transcript = await h.forkflow.transcript('svc-hooks');
    const [denied, rewritten] = toolResultsIn(transcript);
    expect(denied).toEqual({ isError: true, text: 'refund_order was denied by policy: refunds over 100 need a manager' });
    // The rewritten input ran (A-7, not legacy-7), and the PostToolUse context joined the result.
    expect(rewritten!.text).toContain('order A-7: shipped, 2 items');
    expect(rewritten!.text).toContain('<hook-context>\\nOrders ship from Lyon.\\n</hook-context>');
    // SubagentStart's context is in the opening; Stop's message is the last user turn.
    expect(JSON.stringify(transcript[0])).toContain('Customer tier: gold.');
    const users = transcript.filter((m) => m.role === 'user');
    expect(JSON.stringify(users.at(-1))).toContain('Also say goodbye.');
    expect(JSON.stringify(transcript.at(-3))).toContain('all done');
    const seen = readFileSync(join(stateDir, 'hooks.txt'), 'utf8');
    expect(seen).toContain('SubagentStart svc-hooks');
    expect(seen).toContain('PreToolUse lookup_order {"order_id":"legacy-7"}');
    expect(seen).toMatch(/Stop all done\n/);
    expect(seen).toContain('SubagentStop completed goodbye');
    expect(ledger().filter((l) => l.startsWith('refund_order'))).toHaveLength(1); // only the approved one from the bubble test
  });

  test("a named agent's own hooks (S1-41, its definition's hooks) run for it alone: its PreToolUse denies its call, its SubagentStart adds to its opening; its caller's calls pass unhooked", async () => {
    const at = () => [{ taskQueue: hookQueue }];
    const clerk = { name: 'clerk', description: 'Handles refunds.', systemPrompt: 'You handle refunds.', sourceFile: 'clerk.md', hooks: { PreToolUse: at(), SubagentStart: at() } };
    const child = script('Clerk work.', toolStep('refund_order', { order_id: 'A-40', amount: 900 }), '@reply clerk done');
    const prompt = script('Delegate refunds.', toolStep('lookup_order', { order_id: 'A-41' }), agentStep({ description: 'refund', subagent_type: 'clerk', prompt: child }), '@reply lead done');
    const result = await h.forkflow.startAgent({ agentId: 'svc-def-hooks', prompt, routes: routes(), subAgents: { forkGate: false, agents: [clerk] } }).then((a) => a.result());
    expect(result).toMatchObject({ status: 'completed', text: 'lead done' });
    const childId = result.children![0]!.agentId;
    const childTranscript = await h.forkflow.transcript(childId);
    expect(toolResultsIn(childTranscript)[0]).toEqual({ isError: true, text: 'refund_order was denied by policy: refunds over 100 need a manager' });
    expect(JSON.stringify(childTranscript[0])).toContain('Customer tier: gold.');
    // The caller has no hooks: its own call ran unhooked, and its opening has no hook context.
    const leadTranscript = await h.forkflow.transcript('svc-def-hooks');
    expect(toolResultsIn(leadTranscript)[0]).toEqual({ isError: false, text: 'order A-41: shipped, 2 items' });
    expect(JSON.stringify(leadTranscript[0])).not.toContain('Customer tier');
    const seen = readFileSync(join(stateDir, 'hooks.txt'), 'utf8');
    expect(seen).toContain(`SubagentStart ${childId}\n`);
    expect(seen).toContain('PreToolUse refund_order {"order_id":"A-40","amount":900}');
    expect(seen).not.toContain('A-41');
    expect(seen).not.toContain('SubagentStart svc-def-hooks\n');
    expect(ledger().some((l) => l.includes('A-40'))).toBe(false);
  });

  test('a PreToolUse hook nobody serves fails closed; with onError "allow" the call runs and the status says so', async () => {
    const prompt = script('Look.', toolStep('lookup_order', { order_id: 'A-30' }), '@reply looked');
    const nobody = uniqueTaskQueue('no-policy');
    await h.forkflow.fork({ agentId: 'svc-hook-closed', prompt, routes: routes(), hooks: { PreToolUse: [{ taskQueue: nobody, scheduleToStart: '1s' }] } }, { mode: 'sync' });
    const [closed] = toolResultsIn(await h.forkflow.transcript('svc-hook-closed'));
    expect(closed).toMatchObject({ isError: true, text: expect.stringContaining('lookup_order was not run: the PreToolUse hook on task queue') as string });
    const open = await h.forkflow.start({ agentId: 'svc-hook-open', prompt, routes: routes(), hooks: { PreToolUse: [{ taskQueue: nobody, scheduleToStart: '1s', onError: 'allow' }] }, idleTimeout: '1m' });
    const status = await waitFor(async () => { const s = await open.status(); return s.state === 'idle' ? s : undefined; }, 'the open-hook fork to finish');
    expect(status.toolNotices?.[0]).toContain('ran anyway (onError: allow)');
    const [ran] = toolResultsIn(await h.forkflow.transcript('svc-hook-open'));
    expect(ran).toEqual({ isError: false, text: 'order A-30: shipped, 2 items' });
    await open.cancel();
  });

  test('a hook answering with input nested past MAX_JSON_DEPTH fails closed; the agent reads why and goes on', async () => {
    // 200 levels: past the limit, yet within what the helper's own converter sends (5,000 it refuses to encode).
    let deep: Record<string, unknown> = { order_id: 'A-1' };
    for (let i = 0; i < 200; i++) deep = { nested: deep };
    const abyssQueue = uniqueTaskQueue('abyss-policy');
    const abyss = await createToolWorker({ connection, namespace: h.env.namespace, taskQueue: abyssQueue, tools: [], hooks: [defineHook({ event: 'PreToolUse', run: () => ({ input: deep }) })] });
    const serving = abyss.run();
    const lookups = () => ledger().filter((l) => l.startsWith('lookup_order')).length;
    const before = lookups();
    try {
      const prompt = script('Look.', toolStep('lookup_order', { order_id: 'A-31' }), '@reply looked anyway');
      const result = await h.forkflow.fork({ agentId: 'svc-hook-abyss', prompt, routes: routes(), hooks: { PreToolUse: [{ taskQueue: abyssQueue }] } }, { mode: 'sync' });
      expect(result).toMatchObject({ status: 'completed', text: 'looked anyway' });
      const [refused] = toolResultsIn(await h.forkflow.transcript('svc-hook-abyss'));
      expect(refused).toMatchObject({ isError: true, text: expect.stringContaining('nested deeper than 64 levels (MAX_JSON_DEPTH)') as string });
      // Failed closed: the tool never ran.
      expect(lookups()).toBe(before);
    } finally {
      abyss.shutdown();
      await serving;
    }
  });
});
