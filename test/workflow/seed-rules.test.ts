/**
 * Explicit seed values forkflow used to contradict (SEED-AUDIT "Places where forkflow
 * contradicts", G and H): a fork child is told to commit what it changes and to report in
 * under 500 words (seed 003's rules); a fork runs with seed 003's 200 turns unless its caller
 * sets `subAgents.forkMaxTurns`; TaskStop takes the legacy `shell_id`; a fork run with
 * skipTranscript is left out of `list()`. Also the launch views (issue 32 item 3): `async_launched`
 * carries the prompt and a fork's `messages_inherited`.
 */
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { textOf } from '../../src/shared/messages-api/anthropic';
import { startHarness, type Harness } from '../kit/env';
import { bodyOf, messageRequests } from '../kit/requests';
import { waitFor } from '../kit/wait';
import { agentStep, notificationsIn, script, toolResultsIn, toolStep } from '../kit/tree';

let h: Harness;
/** Workflow log entries at DEBUG and above (seed 000's `fork.tool_filter` is a DEBUG event); WARN and above still printed. */
const logged: LogEntry[] = [];
beforeAll(async () => {
  // Before any connection: this file's runtime keeps every entry (startHarness then finds it installed).
  Runtime.install({ logger: new DefaultLogger('DEBUG', (entry) => {
    logged.push(entry);
    if (entry.level === 'WARN' || entry.level === 'ERROR') console.error(entry.message, entry.meta);
  }) });
  h = await startHarness({ name: 'seed-rules' });
});
afterAll(() => h.close());

test("a fork child reads seed 003's rules and gets 200 turns; a caller's forkMaxTurns wins", async () => {
  const prompt = script('Delegate.', agentStep({ description: 'look', prompt: 'Look around.\n@reply looked' }), '@reply waiting', '@reply seen');
  const result = await h.forkflow.startAgent({ agentId: 'rules-fork', prompt, maxTurns: 30 }).then((a) => a.result());
  expect(result.status).toBe('completed');
  const child = messageRequests(h.model).find((e) => JSON.stringify(bodyOf(e).messages).includes('Look around.') && bodyOf(e).messages.at(-1)!.role === 'user' && textOf(bodyOf(e).messages.at(-1)!).includes('<forkflow-worker>'))!;
  const directive = textOf(bodyOf(child).messages.at(-1)!);
  expect(directive).toContain('4. If you modify files, commit your changes before reporting.');
  expect(directive).toContain('5. Keep your report under 500 words.');
  expect(directive).not.toContain('Commit changes only if the directive asks');
  expect((await h.forkflow.status('rules-fork.fork-1')).maxTurns).toBe(200);
  // The launch view carries the prompt and, for a fork, how many of the caller's messages it starts from.
  expect(toolResultsIn(await h.forkflow.transcript('rules-fork'))[0]!.json).toMatchObject({
    status: 'async_launched',
    prompt: 'Look around.\n@reply looked',
    messages_inherited: bodyOf(child).messages.length - 1,
  });

  const capped = await h.forkflow
    .startAgent({ agentId: 'rules-capped', prompt: prompt.replace('Look around.', 'Look again.'), subAgents: { forkMaxTurns: 7 } })
    .then((a) => a.result());
  expect(capped.status).toBe('completed');
  expect((await h.forkflow.status('rules-capped.fork-1')).maxTurns).toBe(7);
});

test('TaskStop accepts the legacy shell_id; both names at once is an is_error the agent reads', async () => {
  const prompt = script(
    'Stop it.',
    agentStep({ description: 'slow', prompt: 'Slow.\n@sleep 60000 @reply never' }),
    toolStep('TaskStop', { task_id: 'stop-legacy.fork-1', shell_id: 'stop-legacy.fork-1' }),
    toolStep('TaskStop', { shell_id: 'stop-legacy.fork-1' }),
    '@reply stopped',
  );
  const result = await h.forkflow.startAgent({ agentId: 'stop-legacy', prompt }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'stopped' });
  const results = toolResultsIn(await h.forkflow.transcript('stop-legacy'));
  expect(results[1]).toMatchObject({ isError: true, text: expect.stringContaining('shell_id is its legacy name') as string });
  expect(results[2]!.json).toMatchObject({ status: 'killed', agentId: 'stop-legacy.fork-1' });
  expect(notificationsIn(await h.forkflow.transcript('stop-legacy'))).toEqual([]);
});

test('a skipTranscript fork is left out of list() unless hidden ones are asked for', async () => {
  await h.forkflow.fork({ agentId: 'list-secret', forkLabel: 'list-hidden', prompt: 'Quiet.\n@reply ok', skipTranscript: true }, { mode: 'sync' });
  await h.forkflow.fork({ agentId: 'list-open', forkLabel: 'list-hidden', prompt: 'Loud.\n@reply ok' }, { mode: 'sync' });
  const query = "ForkLabel = 'list-hidden'";
  // Visibility is eventually consistent: wait until both are indexed (the hidden one through includeHidden).
  const all = await waitFor(async () => {
    const ids = (await h.forkflow.list({ query, includeHidden: true })).map((r) => r.agentId).sort();
    return ids.length === 2 && ids;
  }, 'both forks in visibility');
  expect(all).toEqual(['list-open', 'list-secret']);
  expect((await h.forkflow.list({ query })).map((r) => r.agentId)).toEqual(['list-open']);
});

test("seed 001/002 launch and status views: a fork ignores a call's model and says so; async_launched names its state, provider and model; TaskOutput says is_final; ListAgents names killed for cancelled (S1-09, S2-13, S2-04, S2-20)", async () => {
  const prompt = script(
    'Delegate.',
    agentStep({ description: 'look', prompt: 'Look.\n@reply looked', model: 'claude-opus-9' }),
    toolStep('TaskOutput', { task_id: 'views.fork-1', timeout_ms: 600000 }),
    toolStep('ListAgents', { state: 'cancelled' }),
    '@reply done',
  );
  const result = await h.forkflow.startAgent({ agentId: 'views', prompt, subAgents: { listAgents: true } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'done' });
  const [launch, output, list] = toolResultsIn(await h.forkflow.transcript('views'));
  const parentModel = (await h.forkflow.status('views')).model;
  expect(launch).toMatchObject({ isError: false, json: { status: 'async_launched', agentId: 'views.fork-1', state: 'running', provider: 'anthropic', model: parentModel, note: `model "claude-opus-9" ignored: a fork always runs on your model (${parentModel}); pick a subagent_type for another model.` } });
  // The fork ran on its caller's model, not the one the call named.
  const forkCalls = messageRequests(h.model).filter((e) => textOf(bodyOf(e).messages.at(-1)!).includes('<forkflow-worker>') && JSON.stringify(bodyOf(e).messages).includes('@reply looked'));
  expect(forkCalls.length).toBeGreaterThan(0);
  expect(forkCalls.map((e) => bodyOf(e).model)).toEqual(forkCalls.map(() => parentModel));
  expect(output).toMatchObject({ isError: false, json: { status: 'completed', agentId: 'views.fork-1', is_final: true, content: 'looked' } });
  expect(list).toMatchObject({ isError: true, text: expect.stringContaining('forkflow calls a stopped (cancelled) agent "killed"') as string });
});

test("seed 000's fork.tool_filter DEBUG event for each call the filter or the access policy denies; criticalSystemReminder re-sent at every turn boundary (S0-26, S0-10)", async () => {
  const prompt = script('Try.', toolStep('FileWrite', { file_path: 'no.txt', content: 'x' }), toolStep('Glob', { pattern: '*' }), '@reply tried');
  const result = await h.forkflow.fork(
    { agentId: 'filtered', prompt, toolFilter: 'readOnly', toolAccess: { mode: 'deny_list', tools: ['Glob'] }, overrides: { criticalSystemReminder: 'Never touch production.' } },
    { mode: 'sync' },
  );
  expect(result).toMatchObject({ status: 'completed', text: 'tried' });
  const events = await waitFor(() => {
    const found = logged.filter((e) => e.message === 'fork.tool_filter' && e.meta?.agentId === 'filtered');
    return found.length === 2 && found;
  }, 'both fork.tool_filter events');
  expect(events.map((e) => e.level)).toEqual(['DEBUG', 'DEBUG']);
  expect(events[0]!.meta).toMatchObject({ tool: 'FileWrite', filter: 'readOnly', reason: expect.stringContaining('read-only') as string });
  expect(events[1]!.meta).toMatchObject({ tool: 'Glob', filter: 'toolAccess', reason: expect.stringContaining('tool access policy') as string });

  // The reminder follows the tool results of each boundary, after the cached prefix (not in the opening).
  const reminder = '<system-reminder>\nNever touch production.\n</system-reminder>';
  const transcript = await h.forkflow.transcript('filtered');
  expect(JSON.stringify(transcript[0])).not.toContain('Never touch production.');
  const boundaries = transcript.filter((m, i) => i > 0 && m.role === 'user');
  expect(boundaries).toHaveLength(2);
  for (const m of boundaries) expect(Array.isArray(m.content) && m.content.at(-1)).toEqual({ type: 'text', text: reminder });
  const last = messageRequests(h.model).filter((e) => JSON.stringify(bodyOf(e).messages[0]).includes('Try.')).at(-1)!;
  expect(textOf(bodyOf(last).messages.at(-1)!)).toContain('Never touch production.');
});

test("seed 000's prompt_messages: a fresh agent opens with a list of first-turn messages, its prompt ending the last user turn; refused for a fork by name (S0-04)", async () => {
  const promptMessages = [
    { role: 'user' as const, content: 'Earlier: what is in the box?' },
    { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'A red ball.' }] },
    { role: 'user' as const, content: [{ type: 'text' as const, text: 'Context: the ball is new.' }] },
  ];
  const result = await h.forkflow.startAgent({ agentId: 'prompt-messages', prompt: 'Describe the ball.\n@reply a new red ball', promptMessages }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'a new red ball' });
  // The conversation opens with them (the request adds its cache breakpoints to the same blocks).
  const first = messageRequests(h.model).find((e) => JSON.stringify(bodyOf(e).messages[0]).includes('Earlier: what is in the box?'))!;
  expect(bodyOf(first).messages.map((m) => [m.role, textOf(m)])).toEqual([
    ['user', 'Earlier: what is in the box?'],
    ['assistant', 'A red ball.'],
    ['user', 'Context: the ball is new.\nDescribe the ball.\n@reply a new red ball'],
  ]);
  expect((await h.forkflow.transcript('prompt-messages')).slice(0, 3)).toEqual([
    promptMessages[0],
    promptMessages[1],
    { role: 'user', content: [{ type: 'text', text: 'Context: the ball is new.' }, { type: 'text', text: 'Describe the ball.\n@reply a new red ball' }] },
  ]);
  // A fork's first turn is its parent's conversation and its directive.
  await expect(h.forkflow.start({ agentId: 'prompt-messages-fork', prompt: 'x', promptMessages })).rejects.toThrow(/promptMessages open an agent that starts fresh/);
  await expect(h.forkflow.startAgent({ agentId: 'prompt-messages-bad', prompt: 'x', promptMessages: [promptMessages[1]!] })).rejects.toThrow(/the first message is not a user message/);
});
