/**
 * Replays and counterfactual forks from a point (issue 33): a replay adds no directive, so its
 * first request is the agent's own next request, every byte of it, and it goes on as the agent
 * did; a counterfactual replay or fork changes the model, system prompt or tools — its status
 * names what changed, and its first call's cache break says the same — while its messages stay
 * the agent's. Without `counterfactual` such a change is refused, as for any fork; a replay from
 * a point the agent did not go on from is refused before anything starts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidForkInputError } from '../../src/client';
import type { RequestLogEntry } from '../../src/offline';
import { startHarness, type Harness } from '../kit/env';
import { recordCarriedState, recordHistory, startInputOf } from '../kit/histories';
import type { ForkInputJson } from '../../src/shared/wire/fork-input';
import { bodyOf } from '../kit/requests';
import { lastSeq, requestOfTurn, requestsEndingWith, requestsWith } from '../kit/time-travel';
import { blocksOf } from '../../src/shared/messages-api/anthropic';
import { script, toolStep } from '../kit/tree';
import { rejectionOf } from '../kit/wait';

let h: Harness;
const suffix = Math.random().toString(36).slice(2, 8);
const A = `tt-cf-agent-${suffix}`;
const MARK = `Counterfactual agent ${suffix}.`;
let agentRequests: RequestLogEntry[];

beforeAll(async () => {
  h = await startHarness({ name: 'tt-counterfactual' });
  // Each read adds about 1,500 tokens: from turn 3 on a request is over every model's minimum
  // cacheable prompt (4,096 for Opus), so a change of model shows as a cache break.
  writeFileSync(join(h.workspaceRoot, 'small.txt'), Array.from({ length: 100 }, (_, i) => `line ${i}: ${'lorem ipsum '.repeat(5)}`).join('\n'));
  const agent = await h.forkflow.start({ agentId: A, prompt: script(MARK, `@repeat 5 ${toolStep('Read', { file_path: 'small.txt' })}`, '@reply done'), querySource: 'agent:main' });
  await expect(agent.result()).resolves.toMatchObject({ status: 'completed', turns: 6, text: 'done' });
  agentRequests = requestsWith(h.model, MARK);
});
afterAll(() => h.close());

test('a replay from turn 3 sends the agent’s own request of turn 4, byte for byte, and goes on as the agent did', async () => {
  const after = lastSeq(h.model);
  const replay = await h.forkflow.forkFrom(A, { agentId: `tt-replay-${suffix}`, prompt: 'replay of turn 3', replay: true }, { atTurn: 3 });
  const result = await replay.result();
  expect(result).toMatchObject({ status: 'completed', text: 'done', turns: 3, toolUses: 2, replay: true, origin: { agentId: A, turn: 3 } });
  const own = requestsWith(h.model, MARK, after);
  expect(own).toHaveLength(3);
  for (const [i, request] of own.entries()) expect(request.rawBody).toBe(requestOfTurn(agentRequests, 4 + i).rawBody);
  // All of it was in the cache the agent's own request left.
  const next = requestOfTurn(agentRequests, 4);
  expect(own[0]!.usage!.cache_read_input_tokens).toBe(next.usage!.cache_read_input_tokens + next.usage!.cache_creation_input_tokens);
  expect(own[0]!.usage!.cache_creation_input_tokens).toBe(0);
  await recordHistory(h.client.workflow.getHandle(`tt-replay-${suffix}`), 'replay-from-turn');
});

test('a replay of an agent with an effort sends that effort, byte for byte as the agent did; the fork’s own effort wins', async () => {
  const mark = `Effortful agent ${suffix}.`;
  const id = `tt-effort-${suffix}`;
  const agent = await h.forkflow.start({ agentId: id, prompt: script(mark, `@repeat 2 ${toolStep('Read', { file_path: 'small.txt' })}`, '@reply done'), effort: 'high' });
  await expect(agent.result()).resolves.toMatchObject({ status: 'completed', turns: 3 });
  const own = requestsWith(h.model, mark);
  for (const e of own) expect(bodyOf(e).output_config).toEqual({ effort: 'high' });

  let after = lastSeq(h.model);
  const replay = await h.forkflow.forkFrom(id, { agentId: `tt-effort-replay-${suffix}`, prompt: 'replay of turn 1', replay: true }, { atTurn: 1 });
  await expect(replay.result()).resolves.toMatchObject({ status: 'completed', text: 'done', turns: 2 });
  const replayed = requestsWith(h.model, mark, after);
  expect(replayed).toHaveLength(2);
  for (const [i, request] of replayed.entries()) expect(request.rawBody).toBe(requestOfTurn(own, 2 + i).rawBody);

  after = lastSeq(h.model);
  const lower = await h.forkflow.start({ agentId: `tt-effort-low-${suffix}`, prompt: 'replay of turn 1 with less effort', replay: true, from: { agentId: id, turn: 1 }, effort: 'low' });
  await expect(lower.result()).resolves.toMatchObject({ status: 'completed', text: 'done' });
  const lowered = requestsWith(h.model, mark, after);
  expect(lowered.length).toBeGreaterThan(0);
  for (const e of lowered) expect(bodyOf(e).output_config).toEqual({ effort: 'low' });
  expect((await lower.status()).effort).toBe('low');
  expect((await replay.status()).effort).toBe('high');

  // Another model may not take the same levels: a fork that names one does not inherit the effort.
  after = lastSeq(h.model);
  const other = await h.forkflow.forkFrom(id, { agentId: `tt-effort-model-${suffix}`, prompt: 'on another model', replay: true, counterfactual: true, model: 'claude-opus-4-6' }, { atTurn: 1 });
  await expect(other.result()).resolves.toMatchObject({ status: 'completed', counterfactual: { changed: ['model'] } });
  const moved = requestsWith(h.model, mark, after);
  expect(moved.length).toBeGreaterThan(0);
  for (const e of moved) expect(bodyOf(e)).not.toHaveProperty('output_config');
});

test('a counterfactual replay with another model: the status names the model, the first call’s cache break says why', async () => {
  const after = lastSeq(h.model);
  const replay = await h.forkflow.forkFrom(A, { agentId: `tt-cf-model-${suffix}`, prompt: 'with another model', replay: true, counterfactual: true, model: 'claude-opus-4-6' }, { atTurn: 3 });
  const result = await replay.result();
  expect(result).toMatchObject({ status: 'completed', counterfactual: { changed: ['model'] }, cacheBreak: { reason: 'model changed', turn: 1 } });
  expect((await replay.status()).counterfactual).toEqual({ changed: ['model'] });
  const first = requestsWith(h.model, MARK, after)[0]!;
  const agentNext = bodyOf(requestOfTurn(agentRequests, 4));
  expect(bodyOf(first)).toEqual({ ...agentNext, model: 'claude-opus-4-6' });
  await recordHistory(h.client.workflow.getHandle(`tt-cf-model-${suffix}`), 'counterfactual-replay');
});

test('a counterfactual fork with another system prompt and fewer tools keeps the agent’s messages', async () => {
  const after = lastSeq(h.model);
  const directive = `Other system ${suffix}.`;
  const readOnly = bodyOf(requestOfTurn(agentRequests, 1)).tools!.filter((t) => t.name === 'Read');
  const fork = await h.forkflow.forkFrom(A, { agentId: `tt-cf-system-${suffix}`, prompt: `${directive}\n@reply other`, counterfactual: true, system: 'You are someone else.', tools: readOnly, maxTurns: 1 }, { atTurn: 2 });
  const result = await fork.result();
  expect(result).toMatchObject({ status: 'completed', text: 'other', counterfactual: { changed: ['system', 'tools'] } });
  expect(result.cacheBreak?.reason).toBe('system changed, tools changed');
  const first = requestsEndingWith(h.model, directive, after)[0]!;
  const next = requestOfTurn(agentRequests, 3);
  const body = bodyOf(first);
  expect(body.system).toEqual([{ type: 'text', text: 'You are someone else.', cache_control: { type: 'ephemeral' } }]);
  expect(body.tools!.map((t) => t.name)).toEqual(['Read']);
  // Its messages are the agent's up to its own: only its context is its own.
  const agentNext = bodyOf(next);
  expect(JSON.stringify(body.messages.slice(0, -1))).toBe(JSON.stringify(agentNext.messages.slice(0, -1)));
  const agentLast = blocksOf(agentNext.messages.at(-1)!);
  expect(blocksOf(body.messages.at(-1)!).slice(0, agentLast.length)).toEqual(agentLast);
});

test('an override without `counterfactual` is refused by the client, naming `counterfactual: true`, before anything starts; a replay from the final answer starts nothing', async () => {
  const refusedId = `tt-cf-refused-${suffix}`;
  const err = await rejectionOf(h.forkflow.forkFrom(A, { agentId: refusedId, prompt: 'no', model: 'claude-opus-4-6' }, { atTurn: 2 }));
  expect(err).toBeInstanceOf(InvalidForkInputError);
  expect((err as Error).message).toMatch(/model \(.+ → claude-opus-4-6\): a fork inherits its parent's model, system prompt and tools .*say `counterfactual: true`/);
  await expect(h.client.workflow.getHandle(refusedId).describe()).rejects.toThrow(/not found/i);
  expect(await h.forkflow.forksOf(A)).not.toContainEqual(expect.objectContaining({ agentId: refusedId }));
  // The same model as the parent's is no change: allowed, as the workflow allows it.
  const same = await h.forkflow.forkFrom(A, { agentId: `tt-cf-same-${suffix}`, prompt: '@reply same model', model: (await h.forkflow.status(A)).model, maxTurns: 1 }, { atTurn: 2 });
  await expect(same.result()).resolves.toMatchObject({ status: 'completed', text: 'same model' });

  const before = lastSeq(h.model);
  const id = `tt-cf-replay-end-${suffix}`;
  const replayAtEnd = await rejectionOf(h.forkflow.forkFrom(A, { agentId: id, prompt: 'no', replay: true }, { atTurn: 6 }));
  expect(replayAtEnd).toBeInstanceOf(InvalidForkInputError);
  expect((replayAtEnd as Error).message).toMatch(/replay: the point ends with the agent's own reply/);
  await expect(h.client.workflow.getHandle(id).describe()).rejects.toThrow(/not found/i);
  expect(lastSeq(h.model)).toBe(before);
});

test('a counterfactual replay that continues as new still says what it changed, carried from run to run', async () => {
  const id = `tt-cf-long-${suffix}`;
  const replay = await h.forkflow.forkFrom(A, { agentId: id, prompt: 'a long replay', replay: true, counterfactual: true, model: 'claude-haiku-4-5', continueAsNew: { turnsPerRun: 2 } }, { atTurn: 1 });
  const result = await replay.result();
  expect(result).toMatchObject({ status: 'completed', text: 'done', turns: 5, replay: true, counterfactual: { changed: ['model'] }, origin: { agentId: A, turn: 1 } });
  // The last run began as a continuation: what only a first run reads stayed behind, its lineage was carried.
  const last = await startInputOf<ForkInputJson>(h.client.workflow.getHandle(id));
  expect(last.continuation?.state).toMatchObject({ turns: 4, lineage: { counterfactual: { changed: ['model'] }, replay: true } });
  expect(Object.keys(last)).not.toEqual(expect.arrayContaining(['counterfactual']));
  expect(Object.keys(last)).not.toEqual(expect.arrayContaining(['replay']));
  expect(last.origin).toMatchObject({ agentId: A, turn: 1 });
  recordCarriedState(last.continuation!.state, 'v2-lineage-continue-as-new');
});
