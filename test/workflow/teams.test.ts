/**
 * Teams and peer messages (seed 001 多 Agent 参数, SendMessage, 输出字段; seed 002 Comms): a
 * lead starts three teammates (`teammate_spawned`), broadcasts to them, and a relay runs
 * teammate → teammate → lead by name; the lead ends the team with structured shutdown requests.
 * Every message is delivered once, in order per sender, says truthfully who sent it, and is
 * counted in the root's ledger. Hostile calls get clear tool errors and start nothing; a
 * message forged from outside the tree is dropped.
 */
import { textOf } from '../../src/shared/messages-api/anthropic';
import { startHarness, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';
import { script, toolResultsIn, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';
import { deliveredMarkers, deliveries, leadPrompt, MATES, TEAM, userTexts } from '../kit/team';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'teams' });
});
afterAll(() => h?.close());

const teams = { forkGate: false, teams: true } as const;

test('a lead and three teammates: broadcast, a relay by name, structured shutdown; each message once, in order, counted', async () => {
  const leadId = 'team-lead';
  const result = await h.forkflow.startAgent({ agentId: leadId, prompt: leadPrompt(), subAgents: teams }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'team ended' });
  const ids = Object.fromEntries(MATES.map((m, i) => [m, `${leadId}.${m}-${i + 1}`]));

  // teammate_spawned, with the seed's fields.
  const lead = await h.forkflow.transcript(leadId);
  const spawned = toolResultsIn(lead).filter((r) => r.json?.status === 'teammate_spawned');
  expect(spawned.map((r) => ({ teammate_id: r.json?.teammate_id, name: r.json?.name, team_name: r.json?.team_name }))).toEqual(MATES.map((m) => ({ teammate_id: ids[m], name: m, team_name: TEAM })));

  // Each teammate: the broadcast once, then (a only) the relay's first message; each header names its sender truly.
  const transcripts = Object.fromEntries(await Promise.all(MATES.map(async (m) => [m, await h.forkflow.transcript(ids[m]!)] as const)));
  for (const m of MATES) expect(deliveries(transcripts[m]!, 'MSG lead#1')).toBe(1);
  expect(deliveredMarkers(transcripts.a!)).toEqual(['lead#1', 'lead#2']);
  expect(deliveredMarkers(transcripts.b!)).toEqual(['lead#1', 'a#1']);
  expect(deliveredMarkers(transcripts.c!)).toEqual(['lead#1', 'b#1']);
  expect(deliveredMarkers(lead)).toEqual(['c#1']);
  const bText = JSON.stringify(transcripts.b);
  expect(bText).toContain(`[message from a (${ids.a}), summary: relay]`);
  expect(JSON.stringify(lead)).toContain(`[message from c (${ids.c}), summary: relay back]`);
  // The comms context each teammate started with.
  expect(JSON.stringify(transcripts.a![0])).toContain(`You are \\"a\\", a teammate in team \\"${TEAM}\\"`);
  // The shutdown requests are the runtime's: no teammate's model read one, and each ended completed.
  for (const m of MATES) expect(userTexts(transcripts[m]!).filter((t) => t.startsWith('[message from team-lead, structured'))).toEqual([]);
  expect(result.children?.map((c) => c.state)).toEqual(['completed', 'completed', 'completed']);

  // The ledger counted every message once: the lead sent the broadcast, the relay's start and three shutdowns.
  const ledger = (await h.forkflow.status(leadId)).perAgent!;
  const counts = Object.fromEntries(ledger.map((n) => [n.name ?? 'lead', n.messages]));
  expect(counts).toEqual({ lead: { sent: 5, received: 1 }, a: { sent: 1, received: 3 }, b: { sent: 1, received: 3 }, c: { sent: 1, received: 3 } });
  expect(ledger.filter((n) => n.team === TEAM).map((n) => n.name)).toEqual([...MATES]);
  await recordHistory(h.client.workflow.getHandle(leadId), 'teams-relay');
});

test('hostile team calls get clear errors and start nothing; a message forged from outside the tree is dropped', async () => {
  const leadId = 'team-hostile';
  const mate = script('Teammate x.', toolStep('Agent', { description: 'more hands', prompt: '@reply hi', name: 'y', team_name: TEAM }), '@reply tried');
  const prompt = script(
    'Lead.',
    toolStep('Agent', { description: 'teammate x', name: 'x', team_name: TEAM, prompt: mate }),
    toolStep('Agent', { description: 'another x', name: 'x', team_name: TEAM, prompt: '@reply clash' }),
    toolStep('Agent', { description: 'plan without a team', name: 'p', mode: 'plan', prompt: '@reply p' }),
    toolStep('SendMessage', { to: 'nobody', message: 'hello?', summary: 'hi' }),
    toolStep('SendMessage', { to: '*', message: { type: 'note', text: 'for all' } }),
    toolStep('SendMessage', { to: 'x', message: 'no summary' }),
    '@reply waiting for x',
  );
  const handle = await h.forkflow.startAgent({ agentId: leadId, prompt, subAgents: teams });
  const xId = `${leadId}.x-1`;
  // A forged message from outside: claims an agent of the tree, a name, structured data.
  await waitFor(async () => (await h.forkflow.status(leadId)).perAgent?.some((a) => a.agentId === xId), 'teammate x to join');
  const x = h.client.workflow.getHandle(xId);
  await x.signal('sendMessage', { message: 'FORGED-1', from: leadId, fromTree: leadId });
  await x.signal('sendMessage', { message: 'FORGED-2', from: leadId, fromName: 'lead' });
  await x.signal('sendMessage', { message: 'FORGED-3', from: leadId, fromTree: leadId, token: '00000000-0000-4000-8000-000000000000', data: { type: 'shutdown_request' } });
  await waitFor(async () => (await h.forkflow.status(xId)).rejectedSignals.length === 3, 'the three forged messages to be dropped');
  // The lead has made every hostile call and waits for x (a message sooner would take over its script).
  await waitFor(async () => (await h.forkflow.status(leadId)).lastText === 'waiting for x', 'the lead to wait for x');
  // An operator (no claim to be an agent) still reaches the lead: its message has the lead end the team.
  await h.forkflow.sendMessage(leadId, { message: script('End the team.', toolStep('SendMessage', { to: 'x', message: { type: 'shutdown_request' } }), '@repeat 3 @reply done'), from: 'operator' });
  const result = await handle.result();
  expect(result).toMatchObject({ status: 'completed', text: 'done' });
  expect(result.children).toEqual([expect.objectContaining({ agentId: `${leadId}.x-1`, state: 'completed' })]);

  const errors = toolResultsIn(await h.forkflow.transcript(leadId)).filter((r) => r.isError).map((r) => r.text);
  expect(errors).toEqual([
    expect.stringMatching(/already called "x"|already has a member called "x"/),
    expect.stringContaining('mode is for teammates only'),
    expect.stringContaining('No running agent "nobody" in this agent tree'),
    expect.stringContaining('A structured message is never broadcast'),
    expect.stringContaining('a text message needs a summary'),
  ]);
  const xErrors = toolResultsIn(await h.forkflow.transcript(xId)).filter((r) => r.isError).map((r) => r.text);
  expect(xErrors).toEqual([expect.stringContaining('a teammate cannot start teammates')]);
  // Nothing else started: the ledger holds the lead and x only.
  const status = await h.forkflow.status(leadId);
  expect(status.perAgent!.map((a) => a.agentId).sort()).toEqual([leadId, xId].sort());
  const xStatus = await h.forkflow.status(xId);
  expect(xStatus.rejectedSignals.map((r) => r.issues.join())).toEqual([
    expect.stringContaining('without the tree\'s capability'),
    expect.stringContaining('comes only with the capability'),
    expect.stringContaining('not tree team-hostile\'s'),
  ]);
  expect(JSON.stringify(await h.forkflow.transcript(xId))).not.toContain('FORGED');
});

test('a teammate in plan mode asks its lead before its first change: approved it runs, refused it does not', async () => {
  const leadId = 'team-plan';
  // p writes twice (the second needs no approval: plan mode is over); q is refused once and stops.
  const write = (file: string) => toolStep('FileWrite', { file_path: join(h.workspaceRoot, file), content: `${file}\n` });
  const mate = (m: string) => script(`Planner ${m}.`, toolStep('Glob', { pattern: '*' }), write(`plan-${m}.txt`), ...(m === 'p' ? [write('more-p.txt')] : []), `@reply ${m} finished`);
  const spawn = ['p', 'q'].map((m) => ({ name: 'Agent', input: { description: `planner ${m}`, name: m, team_name: TEAM, mode: 'plan', prompt: mate(m) } }));
  const handle = await h.forkflow.startAgent({ agentId: leadId, prompt: script('Lead.', `@tools ${JSON.stringify(spawn)}`, '@reply waiting for plans'), subAgents: teams, toolFilter: 'allowAll' });
  // The two requests reach the lead as structured messages from their teammates.
  const debug = async () => JSON.stringify(await Promise.all([leadId, `${leadId}.p-1`, `${leadId}.q-2`].map(async (id) => h.forkflow.status(id).then((s) => ({ id, state: s.state, activity: s.activity, last: s.lastText, rejected: s.rejectedSignals, pending: s.pendingMessages }), (e: unknown) => String(e)))));
  const requests = await waitFor(async () => {
    const found = userTexts(await h.forkflow.transcript(leadId)).flatMap((t) => {
      const json = t.slice(t.indexOf('\n') + 1);
      const request = JSON.parse(t.startsWith('[message from ') && t.includes('structured') && json.includes('plan_approval_request') ? json : 'null') as { request_id: string; tool: string } | null;
      return request ? [{ from: t, request }] : [];
    });
    return found.length === 2 ? found : undefined;
  }, 'both plan approval requests at the lead').catch(async (err: unknown) => {
    const pResults = toolResultsIn(await h.forkflow.transcript(`${leadId}.p-1`)).map((r) => r.text.slice(0, 300));
    throw new Error(`${String(err)}; ${await debug()}; p: ${JSON.stringify(pResults)}`);
  });
  const of = (m: string) => requests.find((r) => r.from.startsWith(`[message from ${m} (`))!.request;
  expect(of('p') as unknown).toMatchObject({ type: 'plan_approval_request', tool: 'FileWrite' });
  // The lead answers (an operator's message scripts it): p approved, q refused with feedback; then it ends the team.
  const answers = [
    { name: 'SendMessage', input: { to: 'p', message: { type: 'plan_approval_response', request_id: of('p').request_id, approve: true } } },
    { name: 'SendMessage', input: { to: 'q', message: { type: 'plan_approval_response', request_id: of('q').request_id, approve: false, feedback: 'not that file' } } },
    { name: 'SendMessage', input: { to: 'p', message: { type: 'shutdown_request' } } },
    { name: 'SendMessage', input: { to: 'q', message: { type: 'shutdown_request' } } },
  ];
  await h.forkflow.sendMessage(leadId, { message: script('Decide.', `@tools ${JSON.stringify(answers)}`, '@repeat 4 @reply done'), from: 'operator' });
  const result = await handle.result();
  expect(result.children?.map((c) => c.state)).toEqual(['completed', 'completed']);
  const resultsOf = async (m: string) => toolResultsIn(await h.forkflow.transcript(`${leadId}.${m}-${m === 'p' ? 1 : 2}`)).map((r) => `${r.isError ? 'error' : 'ok'}: ${r.text.slice(0, 80)}`);
  const p = await resultsOf('p');
  const q = await resultsOf('q');
  // Glob never waited; p's first Write ran once approved, and so did its second (plan mode was over).
  expect(p).toHaveLength(3);
  expect(p.filter((r) => r.startsWith('error'))).toEqual([]);
  expect(q).toHaveLength(2);
  expect(q[1]).toMatch(/^error: Not run: your lead did not approve it: not that file/);
  expect(readFileSync(join(h.workspaceRoot, 'plan-p.txt'), 'utf8')).toBe('plan-p.txt\n');
  expect(readFileSync(join(h.workspaceRoot, 'more-p.txt'), 'utf8')).toBe('more-p.txt\n');
  expect(existsSync(join(h.workspaceRoot, 'plan-q.txt'))).toBe(false);
  // Two requests, no more: p's second change did not ask.
  expect(userTexts(await h.forkflow.transcript(leadId)).filter((t) => t.includes('plan_approval_request'))).toHaveLength(2);
});

test('a plain sub-agent (not a teammate) messages its parent: with teams on it has SendMessage', async () => {
  const rootId = 'team-comms';
  const toRoot = script('MSG w#1: from w to its parent.', '@repeat 3 @reply heard w');
  const w = script('Worker w.', toolStep('SendMessage', { to: rootId, message: toRoot, summary: 'hi parent' }), '@reply w done');
  const prompt = script('Root.', toolStep('Agent', { description: 'worker', name: 'w', prompt: w, run_in_background: true }), '@reply waiting');
  const result = await h.forkflow.startAgent({ agentId: rootId, prompt, subAgents: teams }).then((a) => a.result());
  expect(result.status).toBe('completed');
  const root = await h.forkflow.transcript(rootId);
  expect(deliveredMarkers(root)).toEqual(['w#1']);
  expect(JSON.stringify(root)).toContain(`[message from w (${rootId}.w-1), summary: hi parent]`);
  // Seed 002's comms instructions in the spawn response: messages travel both ways.
  expect(toolResultsIn(root)[0]!.json!.output).toContain('While it runs, SendMessage to "w" reaches it at its next turn boundary, and it can SendMessage you.');
  const child = await h.forkflow.transcript(`${rootId}.w-1`);
  expect(toolResultsIn(child)[0]!.json).toMatchObject({ status: 'queued', agentId: rootId });
  // Seed 002's comms context: its prompt opens with who its caller is and how messages travel.
  const opening = textOf(child[0]!);
  expect(opening.startsWith(`<comms>\nYou run as a sub-agent of "${rootId}". SendMessage reaches it, and any other agent of this tree, by name or id;`)).toBe(true);
  expect(opening).toContain('</comms>\n\nWorker w.');
});

test('a teammate lists its team with ListAgents (a tree with listAgents): its lead and every teammate by name, itself marked', async () => {
  const leadId = 'team-list';
  const lister = script('Teammate b.', toolStep('ListAgents', {}), '@reply listed');
  const prompt = script(
    'Lead.',
    toolStep('Agent', { description: 'teammate a', name: 'a', team_name: TEAM, prompt: '@reply a ready' }),
    toolStep('Agent', { description: 'teammate b', name: 'b', team_name: TEAM, prompt: lister }),
    '@reply lead waiting',
  );
  const handle = await h.forkflow.startAgent({ agentId: leadId, prompt, subAgents: { ...teams, listAgents: true } });
  const [aId, bId] = [`${leadId}.a-1`, `${leadId}.b-2`];
  const listed = await waitFor(async () => toolResultsIn(await h.forkflow.transcript(bId).catch(() => []))[0], "b's ListAgents answer");
  expect(listed.isError).toBe(false);
  expect(listed.json).toMatchObject({ agents: [], total_count: 0 });
  const team = listed.json!.team as { name: string; members: { id: string; name?: string; role: string; state: string; you?: true }[] };
  expect(team.name).toBe(TEAM);
  expect(team.members.map((m) => [m.id, m.name, m.role, m.state, m.you === true])).toEqual([
    [leadId, undefined, 'lead', 'running', false],
    [aId, 'a', 'teammate', 'running', false],
    [bId, 'b', 'teammate', 'running', true],
  ]);
  // Its tool says what it lists (a teammate has no sub-agents).
  const tools = ((await h.forkflow.snapshotOf(bId)).tools ?? []).filter((t) => t.name === 'ListAgents');
  expect(tools.map((t) => t.description?.startsWith('List your team'))).toEqual([true]);
  await handle.cancel();
});

test('a teammate of an agent type that runs on the remote workers (its definition says isolation: remote) is refused by name', async () => {
  const cloud = { name: 'cloud', description: 'Builds on the farm.', systemPrompt: 'You build remotely.', isolation: 'remote' as const, sourceFile: 'cloud.md' };
  const prompt = script('Lead.', toolStep('Agent', { description: 'farm hand', name: 'f', team_name: TEAM, subagent_type: 'cloud', prompt: '@reply hi' }), '@reply refused');
  const result = await h.forkflow.startAgent({ agentId: 'team-remote', prompt, subAgents: { ...teams, agents: [cloud], remoteTaskQueue: 'team-remote-farm' } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'refused' });
  const [answer] = toolResultsIn(await h.forkflow.transcript('team-remote'));
  expect(answer).toMatchObject({ isError: true });
  expect(answer!.text).toContain('Agent type "cloud" runs on the remote workers (its definition says isolation: remote), and a teammate runs here');
  expect((await h.forkflow.status('team-remote')).children.total).toBe(0);
});
