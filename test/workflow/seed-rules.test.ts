/**
 * Explicit seed values forkflow used to contradict (SEED-AUDIT "Places where forkflow
 * contradicts", G and H): a fork child is told to commit what it changes and to report in
 * under 500 words (seed 003's rules); a fork runs with seed 003's 200 turns unless its caller
 * sets `subAgents.forkMaxTurns`; TaskStop takes the legacy `shell_id`; a fork run with
 * skipTranscript is left out of `list()`. Also the launch views (issue 32 item 3): `async_launched`
 * carries the prompt and a fork's `messages_inherited`.
 */
import { textOf } from '../../src/shared/anthropic';
import { startHarness, type Harness } from '../kit/env';
import { bodyOf, messageRequests } from '../kit/requests';
import { waitFor } from '../kit/wait';
import { agentStep, notificationsIn, script, toolResultsIn, toolStep } from '../kit/tree';

let h: Harness;
beforeAll(async () => {
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
