/**
 * Forks from any past turn (issue 33): a 12-turn agent with tool calls, continued as new every
 * 4 turns, is forked from turns 0, 1, 4, 6 and 12 — turns of its first, second and last runs.
 * Each fork's first request is the agent's own request of the next turn up to the fork's own
 * message (and reads what that request left in the provider's cache); the last turn's fork
 * inherits the whole conversation. Each fork's history holds a reference, so its size does not
 * depend on the turn. A fork named by `from` (the input other SDKs use) resolves the same point
 * in the workflow. A fork from the latest turn of an agent in its tool round keeps the reply's
 * unanswered tool_use blocks unchanged and answers them with placeholders. Hostile points — past the end, negative, an unknown agent, a run of another
 * agent — are clear errors and start nothing.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { AgentNotFoundError, InvalidForkPointError, type ForkResult } from '../../src/client';
import { WORKFLOW_TYPES } from '../../src/shared/wire/constants';
import type { ForkInputJson } from '../../src/shared/wire/fork-input';
import type { RequestLogEntry } from '../../src/offline';
import { bodyOf } from '../kit/requests';
import { startHarness, type Harness } from '../kit/env';
import { historyPayloadBytes, lastSeq, requestOfTurn, requestsEndingWith, requestsWith, sameUpToOwnMessage, unmarked } from '../kit/time-travel';
import { script, toolStep } from '../kit/tree';
import { rejectionOf, waitFor } from '../kit/wait';
import { blocksOf, toolUsesOf } from '../../src/shared/messages-api/anthropic';
import { PLACEHOLDER_RESULT } from '../../src/shared/prefix/fork-messages';
import { recordHistory } from '../kit/histories';

let h: Harness;
/** The agent's own requests, one per turn (forks share its first message: taken before any fork). */
let agentRequests: RequestLogEntry[];
const suffix = Math.random().toString(36).slice(2, 8);
const AGENT = `tt-agent-${suffix}`;
const MARK = `Twelve turns ${suffix}.`;
const TURNS = 12;

beforeAll(async () => {
  h = await startHarness({ name: 'timetravel' });
  writeFileSync(join(h.workspaceRoot, 'small.txt'), 'one\ntwo\nthree\n');
  const prompt = script(MARK, `@repeat ${TURNS - 1} ${toolStep('Read', { file_path: 'small.txt' })}`, '@reply done');
  const agent = await h.forkflow.start({ agentId: AGENT, prompt, querySource: 'agent:main', maxTurns: 20, continueAsNew: { turnsPerRun: 4 }, budget: { maxTokens: 10_000_000 } });
  await expect(agent.result()).resolves.toMatchObject({ status: 'completed', turns: TURNS, toolUses: TURNS - 1, text: 'done' });
  agentRequests = requestsWith(h.model, MARK);
});
afterAll(() => h.close());

/** A fork from turn k that answers in one call; its first request. */
async function forkAt(k: number, extra: Partial<ForkInputJson> = {}) {
  const after = lastSeq(h.model);
  const directive = `From turn ${k} ${suffix}.`;
  const handle = await h.forkflow.forkFrom(AGENT, { agentId: `tt-fork-${k}-${suffix}`, prompt: `${directive}\n@reply forked at ${k}`, maxTurns: 1, ...extra }, { atTurn: k });
  const result = await handle.result();
  const [first] = requestsEndingWith(h.model, directive, after);
  if (!first) throw new Error(`no request of the fork from turn ${k}`);
  return { handle, result, first };
}

test('forks from turns 0, 1, 4, 6 and 12 send the agent’s own next request up to their own message; their histories do not grow with the turn', async () => {
  expect(agentRequests).toHaveLength(TURNS);
  const runs: string[] = [];
  for await (const run of h.client.workflow.list({ query: `WorkflowId = '${AGENT}'` })) runs.push(run.runId);
  expect(runs.length).toBe(3);

  const sizes: Record<number, number> = {};
  for (const k of [0, 1, 4, 6]) {
    const { handle, first } = await forkAt(k);
    const next = requestOfTurn(agentRequests, k + 1);
    const same = sameUpToOwnMessage(next, first);
    expect({ k, problems: same.problems }).toEqual({ k, problems: [] });
    // What the agent's request of turn k + 1 left in the cache is what the fork reads first.
    expect(first.usage!.cache_read_input_tokens).toBe(next.usage!.cache_read_input_tokens + next.usage!.cache_creation_input_tokens);
    const status = await handle.status();
    expect(status.origin).toMatchObject({ agentId: AGENT, turn: k });
    expect(status.parentAgentId).toBe(AGENT);
    sizes[k] = await historyPayloadBytes(h.client, handle.agentId);
  }

  // The last turn: the fork inherits the whole conversation, and reads what the agent's last request cached.
  const { handle, first, result } = await forkAt(TURNS);
  expect(result).toMatchObject({ status: 'completed', text: `forked at ${TURNS}`, origin: { agentId: AGENT, turn: TURNS } });
  const transcript = await h.forkflow.transcript(AGENT);
  expect(transcript).toHaveLength(2 * TURNS);
  expect(unmarked(bodyOf(first).messages.slice(0, -1))).toEqual(unmarked(transcript));
  const last = requestOfTurn(agentRequests, TURNS);
  expect(first.usage!.cache_read_input_tokens).toBe(last.usage!.cache_read_input_tokens + last.usage!.cache_creation_input_tokens);
  sizes[TURNS] = await historyPayloadBytes(h.client, handle.agentId);

  // The turns live in three runs; each fork's origin names the run that held its point.
  const origins = await Promise.all([1, 6, TURNS].map(async (k) => (await h.forkflow.status(`tt-fork-${k}-${suffix}`)).origin!.runId));
  expect(new Set(origins).size).toBe(3);
  for (const runId of origins) expect(runs).toContain(runId);

  console.log(`time travel: fork history payload bytes by turn ${JSON.stringify(sizes)}`);
  // A reference, not the prefix: the fork from the last turn (24 messages behind it) records
  // what the fork from turn 1 does, give or take the digits of its numbers. (The fork from
  // turn 0 shares the agent's opening message, whose script makes its one turn a Read: a tool
  // round more in its history.)
  const one = sizes[1] ?? 0;
  const twelve = sizes[TURNS] ?? 0;
  expect(Math.abs(twelve - one)).toBeLessThan(200);
  for (const k of [1, 4, 6, TURNS]) expect(sizes[k]).toBeLessThan(8 * 1024);
  await recordHistory(h.client.workflow.getHandle(`tt-fork-6-${suffix}`), 'fork-from-turn');
});

test('a fork named by `from` (the input other SDKs send) resolves the point in the workflow', async () => {
  const after = lastSeq(h.model);
  const directive = `From input ${suffix}.`;
  const input: ForkInputJson = { prompt: `${directive}\n@reply from input`, maxTurns: 1, from: { agentId: AGENT, turn: 6 }, overrides: { agentId: `tt-from-${suffix}` } };
  const result = await h.client.workflow.execute<(i: ForkInputJson) => Promise<ForkResult>>(WORKFLOW_TYPES.fork, { args: [input], taskQueue: h.taskQueue, workflowId: `tt-from-${suffix}` });
  expect(result).toMatchObject({ status: 'completed', text: 'from input', origin: { agentId: AGENT, turn: 6 } });
  const [first] = requestsEndingWith(h.model, directive, after);
  expect(sameUpToOwnMessage(requestOfTurn(agentRequests, 7), first!).problems).toEqual([]);
  await recordHistory(h.client.workflow.getHandle(`tt-from-${suffix}`), 'fork-from-input');

  // A point that cannot be had fails the fork at once, saying why.
  const bad: ForkInputJson = { prompt: 'never runs', from: { agentId: AGENT, turn: 40 } };
  const failed = await rejectionOf(h.client.workflow.execute<(i: ForkInputJson) => Promise<ForkResult>>(WORKFLOW_TYPES.fork, { args: [bad], taskQueue: h.taskQueue, workflowId: `tt-from-bad-${suffix}` }));
  expect(failed).toBeInstanceOf(WorkflowFailedError);
  expect((failed as WorkflowFailedError).cause?.message).toMatch(/has taken 12 turns: turn 40 is past its end/);
});

test('hostile points are clear errors, and nothing is started', async () => {
  const before = lastSeq(h.model);
  const startedIds: string[] = [];
  const attempt = async (id: string, agentId: string, opts: { atTurn?: number; runId?: string }) => {
    startedIds.push(id);
    return rejectionOf(h.forkflow.forkFrom(agentId, { agentId: id, prompt: 'never runs' }, opts));
  };
  const past = await attempt(`tt-bad-past-${suffix}`, AGENT, { atTurn: TURNS + 1 });
  expect(past).toBeInstanceOf(InvalidForkPointError);
  expect((past as InvalidForkPointError).problem).toBe('past_end');
  expect((past as Error).message).toMatch(/has taken 12 turns: turn 13 is past its end \(fork from turns 0–12\)/);

  const negative = await attempt(`tt-bad-neg-${suffix}`, AGENT, { atTurn: -1 });
  expect(negative).toBeInstanceOf(InvalidForkPointError);
  expect((negative as Error).message).toMatch(/integer ≥ 0/);
  const fraction = await attempt(`tt-bad-frac-${suffix}`, AGENT, { atTurn: 1.5 });
  expect((fraction as InvalidForkPointError).problem).toBe('bad_turn');

  // `from` in a fork's input is resolved by the client too, before anything starts.
  startedIds.push(`tt-bad-from-${suffix}`);
  const fromInput = await rejectionOf(h.forkflow.start({ agentId: `tt-bad-from-${suffix}`, prompt: 'never runs', from: { agentId: AGENT, turn: 99 } }));
  expect((fromInput as InvalidForkPointError).problem).toBe('past_end');

  const unknown = await attempt(`tt-bad-unknown-${suffix}`, `no-such-agent-${suffix}`, { atTurn: 1 });
  expect(unknown).toBeInstanceOf(AgentNotFoundError);

  // A real run id, of another agent.
  const otherRun = (await h.client.workflow.getHandle(`tt-fork-1-${suffix}`).describe()).runId;
  const foreign = await attempt(`tt-bad-run-${suffix}`, AGENT, { atTurn: 1, runId: otherRun });
  expect((foreign as InvalidForkPointError).problem).toBe('foreign_run');
  expect((foreign as Error).message).toBe(`Invalid fork point:\n- Run ${otherRun} is not a run of agent ${AGENT}.`);
  const garbage = await attempt(`tt-bad-garbage-${suffix}`, AGENT, { atTurn: 1, runId: 'not-a-run-id' });
  expect((garbage as InvalidForkPointError).problem).toBe('foreign_run');

  // A snapshot has no turns.
  const snapshot = await h.forkflow.recordSnapshot({ system: 's', tools: [], model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'hi' }] });
  const notAgent = await attempt(`tt-bad-snapshot-${suffix}`, snapshot.run.workflowId, { atTurn: 0 });
  expect((notAgent as InvalidForkPointError).problem).toBe('not_an_agent');

  for (const id of startedIds) await expect(h.client.workflow.getHandle(id).describe()).rejects.toThrow(/not found/i);
  expect(lastSeq(h.model)).toBe(before);
});

test('the latest turn of an agent in its tool round: the reply’s tool_use blocks are kept unchanged, answered by placeholders', async () => {
  const id = `tt-partial-${suffix}`;
  const agent = await h.forkflow.start({
    agentId: id,
    prompt: script(`Partial ${suffix}.`, toolStep('Read', { file_path: 'small.txt' }), toolStep('FileWrite', { file_path: 'out.txt', content: 'x' }), '@reply done'),
    querySource: 'agent:main',
    permissionMode: 'bubble',
  });
  // Its second reply asks to write: the round waits for a decision, the reply has no result yet.
  const waiting = await waitFor(async () => {
    const s = await agent.status();
    return s.approvals.length > 0 ? s : undefined;
  }, 'the write to wait for approval');
  expect(waiting.turns).toBe(2);
  const transcript = await h.forkflow.transcript(id);
  const reply = transcript.at(-1)!;
  const pending = toolUsesOf(reply);
  expect(pending.map((u) => u.name)).toEqual(['FileWrite']);

  const after = lastSeq(h.model);
  const directive = `From the round ${suffix}.`;
  const fork = await h.forkflow.forkFrom(id, { agentId: `tt-partial-fork-${suffix}`, prompt: `${directive}\n@reply from the round`, maxTurns: 1 }, { atTurn: 2 });
  await expect(fork.result()).resolves.toMatchObject({ status: 'completed', text: 'from the round', origin: { agentId: id, turn: 2 } });
  const body = bodyOf(requestsEndingWith(h.model, directive, after)[0]!);
  expect(unmarked(body.messages.slice(0, -1))).toEqual(unmarked(transcript));
  const own = blocksOf(body.messages.at(-1)!);
  expect(own[0]).toMatchObject({ type: 'tool_result', tool_use_id: pending[0]!.id, content: [{ type: 'text', text: PLACEHOLDER_RESULT }] });
  expect(own.at(-1)).toMatchObject({ type: 'text', text: expect.stringContaining(directive) as unknown });

  await h.forkflow.deny(id, waiting.approvals[0]!.requestId, { reason: 'not now' });
  await expect(agent.result()).resolves.toMatchObject({ status: 'completed', turns: 3 });
});
