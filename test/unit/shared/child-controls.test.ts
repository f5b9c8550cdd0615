/**
 * The Agent call's own limits for its child (src/shared/tree/child-controls.ts): hostile arguments
 * refused by the parser, larger numbers lowered to what the caller has, tools the caller lacks
 * refused; and the sub-agent tool definitions' bytes unchanged unless a tree asks for the new
 * fields or for ListAgents (src/shared/tree/agent-list.ts), whose rows come from the child records.
 */
import { createHash } from 'node:crypto';
import { agentList, childrenToAsk, LISTED_PROGRESS_MAX, shownRecords, teamView } from '../../../src/shared/tree/agent-list';
import { agentCallWithoutControls, agentToolInput, LIST_AGENTS, sendMessageCallInput, sendMessageCallWithInterrupt, sendMessageTool, SPAWN_SYSTEM_PROMPT_MAX, subAgentToolDefinitions, type AgentToolOptions } from '../../../src/shared/tree/agent-tools';
import { ZERO_USAGE } from '../../../src/shared/messages-api/anthropic';
import { grantLimits, narrowTools, tokensUnderPolicy } from '../../../src/shared/tree/child-controls';
import type { ChildRecord } from '../../../src/shared/tree/tree-input';

const call = { description: 'd', prompt: 'p' };

test('hostile budgets, policies and tool lists are refused by the parser with the field named', () => {
  for (const [input, field] of [
    [{ budget: { max_tokens: -1 } }, 'budget'],
    [{ budget: { max_turns: 0 } }, 'budget'],
    [{ budget: { max_tokens: 1e300 } }, 'budget'],
    [{ budget: { max_tokens: 1.5 } }, 'budget'],
    [{ budget: { max_tokens: 10, extra: 1 } }, 'budget'],
    [{ budget_policy: 'fixed:0' }, 'budget_policy'],
    [{ budget_policy: 'everything' }, 'budget_policy'],
    [{ tool_access: {} }, 'tool_access'],
    [{ tool_access: { allow: ['rm -rf /'] } }, 'tool_access'],
    [{ tool_access: { allow: Array.from({ length: 201 }, (_, i) => `T${i}`) } }, 'tool_access'],
    [{ tool_access: '{not json' }, 'tool_access'],
    [{ tool_access: '{"allow":"Glob"}' }, 'tool_access'],
  ] as const) {
    const parsed = agentToolInput.safeParse({ ...call, ...input });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0]!.path[0]).toBe(field);
  }
  expect(agentToolInput.parse({ ...call, tool_access: '{"deny":["Bash"]}', budget_policy: ' Fixed:20 ' })).toMatchObject({ tool_access: { deny: ['Bash'] }, budget_policy: ' Fixed:20 ' });
  // A tree without spawn controls reads them as unknown keys, as it always did.
  expect(agentCallWithoutControls.safeParse({ ...call, budget: { max_turns: 1 } }).success).toBe(false);
});

test('numbers are lowered to what the caller has; absent ones stay absent', () => {
  const caller = { remainingTokens: 8_000, perAgentCap: 200_000, defaultTurns: 30, defaultToolCalls: 10 };
  expect(grantLimits({ max_tokens: Number.MAX_SAFE_INTEGER, max_turns: 500, max_tool_calls: 11 }, caller)).toEqual({ maxTokens: 8_000, maxTurns: 30, maxToolCalls: 10 });
  expect(grantLimits({ max_tokens: 500, max_turns: 3, max_tool_calls: 0 }, caller)).toEqual({ maxTokens: 500, maxTurns: 3, maxToolCalls: 0 });
  expect(grantLimits({ max_tokens: 300_000 }, { ...caller, remainingTokens: 1e6 })).toEqual({ maxTokens: 200_000 });
  // No tool-call limit of its own: the caller's child would have none, so the ask stands.
  expect(grantLimits({ max_tool_calls: 7 }, { remainingTokens: 1, perAgentCap: 1 })).toEqual({ maxToolCalls: 7 });
  expect(grantLimits(undefined, caller)).toEqual({});
  expect(tokensUnderPolicy({ kind: 'fixed', tokens: 50_000 }, caller, 0, 50_000)).toBe(8_000);
  expect(tokensUnderPolicy({ kind: 'proportional' }, { ...caller, remainingTokens: 9_000 }, 2, 50_000)).toBe(3_000);
  expect(tokensUnderPolicy({ kind: 'equal' }, { ...caller, remainingTokens: 90_000 }, 0, 50_000)).toBe(50_000);
});

test('tool access narrows within the caller\'s own tools; a name it lacks or an empty set is refused', () => {
  const own = ['Read', 'Glob', 'Grep', 'Bash', 'mcp__db__query'];
  expect(narrowTools({ allow: ['Bash', 'Read'] }, own)).toEqual({ ok: true, tools: ['Read', 'Bash'] });
  expect(narrowTools({ deny: ['Bash'] }, own)).toEqual({ ok: true, tools: ['Read', 'Glob', 'Grep', 'mcp__db__query'] });
  expect(narrowTools({ allow: ['mcp__*', 'Grep'], deny: ['Grep'] }, own)).toEqual({ ok: true, tools: ['mcp__db__query'] });
  const stranger = narrowTools({ allow: ['Read', 'FileWrite'] }, own);
  expect(stranger).toMatchObject({ ok: false });
  expect(!stranger.ok && stranger.error).toContain('"FileWrite", which you do not have');
  const none = narrowTools({ deny: ['*'] }, own);
  expect(none.ok).toBe(false);
  expect(!none.ok && none.error).toContain('no tools at all');
});

// sha256 of JSON.stringify(subAgentToolDefinitions(options)) as main computed it before these
// options existed (commit 42354e6): trees that do not opt in must send the same bytes.
const BEFORE: [AgentToolOptions, string][] = [
  [{ forkGate: true, agents: [] }, '65a861dc29c74777ecfbd210eaea23579adbd052964def8f5195cf661f157933'],
  [{ forkGate: false, agents: [{ name: 'counter', description: 'Counts things.', systemPrompt: 'x', tools: ['Glob'], sourceFile: 'counter.md' }] as never }, 'da4d6efb910dc7c63f405ae8fba6b2eab7a2e7381a4e7811ad5af77f63ff31c5'],
  [{ forkGate: false, agents: [{ name: 'counter', description: 'Counts things.', systemPrompt: 'x', tools: ['Glob'], sourceFile: 'counter.md' }] as never, teams: true }, 'ec7edc8859313cea505556e5c62ad1c65cf28d527cc8acc4b16d34149bbcb155'],
];

test('a spawn system_prompt is bounded and has words in it', () => {
  const call = { description: 'd', prompt: 'p', subagent_type: 'general-purpose' };
  expect(agentToolInput.safeParse({ ...call, system_prompt: 'You are Zed.' }).success).toBe(true);
  expect(agentToolInput.safeParse({ ...call, system_prompt: 'x'.repeat(SPAWN_SYSTEM_PROMPT_MAX) }).success).toBe(true);
  for (const bad of ['x'.repeat(SPAWN_SYSTEM_PROMPT_MAX + 1), '', ' \n\t ', 42, ['You are Zed.']]) {
    const parsed = agentToolInput.safeParse({ ...call, system_prompt: bad });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0]!.path).toEqual(['system_prompt']);
  }
});

test('SendMessage with interrupt: a boolean, read only by the schema of trees with spawn controls', () => {
  const call = { to: 'worker', message: 'Stop; do X.', summary: 'redirect' };
  expect(sendMessageCallWithInterrupt.safeParse({ ...call, interrupt: true }).success).toBe(true);
  expect(sendMessageCallWithInterrupt.safeParse(call).success).toBe(true);
  for (const bad of ['yes', 1, null]) expect(sendMessageCallWithInterrupt.safeParse({ ...call, interrupt: bad }).error!.issues[0]!.path).toEqual(['interrupt']);
  // Without spawn controls the key stays unknown, as it always was.
  expect(sendMessageCallInput.safeParse({ ...call, interrupt: true }).success).toBe(false);
  expect(sendMessageCallWithInterrupt.safeParse({ to: 'worker', message: 'no summary', interrupt: true }).error!.issues[0]!.path).toEqual(['summary']);
});

test('tool definitions keep their bytes unless the tree asks for spawn controls or ListAgents', () => {
  const sha = (o: AgentToolOptions) => createHash('sha256').update(JSON.stringify(subAgentToolDefinitions(o))).digest('hex');
  for (const [options, hash] of BEFORE) expect(sha(options)).toBe(hash);
  const on = subAgentToolDefinitions({ forkGate: false, agents: [], spawnControls: true, listAgents: true });
  expect(on.at(-1)!.name).toBe(LIST_AGENTS);
  expect(Object.keys(on[0]!.input_schema.properties as object).slice(-4)).toEqual(['budget', 'tool_access', 'budget_policy', 'system_prompt']);
  // SendMessage may interrupt only there (and a teammate's own SendMessage, which has no sub-agents, never).
  const send = (defs: ReturnType<typeof subAgentToolDefinitions>) => Object.keys(defs.find((d) => d.name === 'SendMessage')!.input_schema.properties as object);
  expect(send(on)).toEqual(['to', 'message', 'summary', 'interrupt']);
  expect(send(subAgentToolDefinitions({ forkGate: false, agents: [], spawnControls: true, teams: true }))).toEqual(['to', 'message', 'summary', 'interrupt']);
  expect(send(subAgentToolDefinitions({ forkGate: false, agents: [], listAgents: true }))).toEqual(['to', 'message', 'summary']);
  expect(Object.keys(sendMessageTool(true).input_schema.properties as object)).not.toContain('interrupt');
  expect(sha({ forkGate: true, agents: [], listAgents: true })).not.toBe(BEFORE[0]![1]);
  // parentApprovals (S1-59) offers AnswerApproval last, and changes nothing else.
  const answering = subAgentToolDefinitions({ forkGate: true, agents: [], parentApprovals: true });
  expect(answering.map((d) => d.name)).toEqual([...subAgentToolDefinitions({ forkGate: true, agents: [] }).map((d) => d.name), 'AnswerApproval']);
  expect(JSON.stringify(answering.slice(0, -1))).toBe(JSON.stringify(subAgentToolDefinitions({ forkGate: true, agents: [] })));
  // backgroundTasks: false (S1-12) takes run_in_background away and says the call waits; only there.
  const props = (defs: ReturnType<typeof subAgentToolDefinitions>) => Object.keys(defs[0]!.input_schema.properties as object);
  expect(props(subAgentToolDefinitions({ forkGate: false, agents: [] }))).toContain('run_in_background');
  const foreground = subAgentToolDefinitions({ forkGate: false, agents: [], backgroundTasks: false });
  expect(props(foreground)).not.toContain('run_in_background');
  expect(foreground[0]!.description).toContain('You wait for its result (background tasks are disabled here).');
  // hostMode (S2-12) offers host_mode last on Agent; not where background tasks are disabled.
  expect(props(subAgentToolDefinitions({ forkGate: true, agents: [], hostMode: true })).at(-1)).toBe('host_mode');
  expect(props(subAgentToolDefinitions({ forkGate: true, agents: [], hostMode: true, backgroundTasks: false }))).not.toContain('host_mode');
});

test('agentList: rows from the records, counts by state, a running child timed by the clock given', () => {
  const base = { kind: 'spawn' as const, agentInput: call, toolUseId: 't', mode: 'background' as const, notified: true, startedAt: '2026-01-01T00:00:00.000Z' };
  const usage = { ...ZERO_USAGE, inputTokens: 100, cacheReadInputTokens: 50, outputTokens: 7 };
  const records: ChildRecord[] = [
    { ...base, agentId: 'r.a-1', name: 'a', description: 'first', state: 'completed', result: { status: 'completed', text: 'ok', usage, treeUsage: usage, treeCostUsd: 0, toolUses: 2, durationMs: 1500, turns: 3 } },
    { ...base, agentId: 'r.b-2', description: 'second', state: 'failed', result: { status: 'failed', text: '', error: 'boom', usage: ZERO_USAGE, treeUsage: ZERO_USAGE, treeCostUsd: 0, toolUses: 0, durationMs: 10 } },
    { ...base, agentId: 'r.c-3', description: 'third', state: 'running', budget: 5000 },
  ];
  const list = agentList(records, { depth: 1, now: Date.parse('2026-01-01T00:00:04.000Z'), folded: 2 });
  expect(list).toMatchObject({ running_count: 1, completed_count: 1, failed_count: 1, total_count: 3, not_listed: 2 });
  expect(list.agents[0]).toMatchObject({ id: 'r.a-1', name: 'a', depth: 2, turns: 3, tool_uses: 2, tokens_used: 157, duration_ms: 1500, last_activity: 'completed at 2026-01-01T00:00:01.500Z' });
  expect(list.agents[1]!.last_activity).toBe('failed at 2026-01-01T00:00:00.010Z: boom');
  expect(list.agents[2]).toEqual({ id: 'r.c-3', description: 'third', kind: 'spawn', state: 'running', mode: 'background', depth: 2, started_at: base.startedAt, budget_tokens: 5000, running_ms: 4000, last_activity: `running since ${base.startedAt}` });
  expect(agentList(records, { depth: 0, now: 0, folded: 0, state: 'failed' }).agents.map((r) => r.id)).toEqual(['r.b-2']);
  // A running child that answered shows its own counters and what it is doing; one that did not, what the parent knows.
  const asked = agentList(records, { depth: 1, now: Date.parse('2026-01-01T00:00:04.000Z'), folded: 0, counters: { 'r.c-3': { turns: 2, toolUses: 5, totalTokens: 900, doing: 'tool Grep' } } });
  expect(asked.agents[2]).toMatchObject({ id: 'r.c-3', running_ms: 4000, turns: 2, tool_uses: 5, tokens_used: 900, last_activity: 'running: tool Grep' });
  expect(asked.agents[0]).toMatchObject({ turns: 3, tool_uses: 2, tokens_used: 157 });
});

test('childrenToAsk: the running children shown, oldest first, at most LISTED_PROGRESS_MAX', () => {
  const base = { kind: 'spawn' as const, agentInput: call, toolUseId: 't', mode: 'background' as const, notified: true, startedAt: '2026-01-01T00:00:00.000Z', description: 'd' };
  const running: ChildRecord[] = Array.from({ length: LISTED_PROGRESS_MAX + 5 }, (_, i) => ({ ...base, agentId: `r.x-${i}`, state: 'running' as const }));
  const done: ChildRecord = { ...base, agentId: 'r.done', state: 'killed' };
  const ask = childrenToAsk(shownRecords([done, ...running]));
  expect(ask).toHaveLength(LISTED_PROGRESS_MAX);
  expect(ask[0]).toBe('r.x-0');
  expect(ask).not.toContain('r.done');
  expect(childrenToAsk(shownRecords([done, ...running], 'killed'))).toEqual([]);
});

test('teamView: the ledger\'s members with their roles and the caller marked; a roster not read says so', () => {
  const facts = (agentId: string, lead: boolean, name?: string) => ({ agentId, ...(name ? { name } : {}), lead, state: 'running' as const, turns: 2, toolUses: 1, totalTokens: 300 });
  const view = teamView({ team: 'crew', self: 'r.b-2', members: [facts('r', true), facts('r.a-1', false, 'a'), facts('r.b-2', false, 'b')] });
  expect(view).toEqual({
    name: 'crew',
    members: [
      { id: 'r', role: 'lead', state: 'running', turns: 2, tool_uses: 1, tokens_used: 300 },
      { id: 'r.a-1', name: 'a', role: 'teammate', state: 'running', turns: 2, tool_uses: 1, tokens_used: 300 },
      { id: 'r.b-2', name: 'b', role: 'teammate', state: 'running', turns: 2, tool_uses: 1, tokens_used: 300, you: true },
    ],
  });
  const unread = teamView({ team: 'crew', self: 'r.b-2', members: undefined });
  expect(unread.members).toBeUndefined();
  expect(unread.note).toContain('could not be read');
});
