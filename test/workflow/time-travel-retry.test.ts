/**
 * Retry from failure (issue 33): an agent that ended badly goes on from its last complete turn
 * as a new run of the same id, holding a reference to what came before. A tree's root failed
 * by a non-retryable model error at turn 7, and an agent stopped `budget_exhausted`, are each
 * continued: the offline model never sees a request of an earlier turn again, the first new
 * request is the one the agent made (or would have made) next, byte for byte, and the agent's
 * usage — and the root's tree ledger — are the sum of every call the model answered. A retry
 * from an earlier turn pays those turns again and the ledger counts them. Refusals (running,
 * finished, unknown, a turn past the end) start nothing.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentNotFoundError, InvalidForkPointError, RetryRefusedError } from '../../src/client';
import type { RequestLogEntry } from '../../src/offline';
import { addUsage, ZERO_USAGE, type Usage } from '../../src/shared/messages-api/anthropic';
import { tokensCharged } from '../../src/shared/tree/budget';
import { startHarness, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';
import { bodyOf, messageRequests } from '../kit/requests';
import { firstUserText, lastSeq, requestsWith, unmarked } from '../kit/time-travel';
import { script, toolStep } from '../kit/tree';
import { rejectionOf, waitFor } from '../kit/wait';

let h: Harness;
const suffix = Math.random().toString(36).slice(2, 8);

beforeAll(async () => {
  h = await startHarness({ name: 'tt-retry' });
  writeFileSync(join(h.workspaceRoot, 'small.txt'), 'one\ntwo\n');
});
afterAll(() => h.close());

/** An agent that reads `reads` times, then answers `done`. */
const reader = (mark: string, reads: number) => script(mark, `@repeat ${reads} ${toolStep('Read', { file_path: 'small.txt' })}`, '@reply done');

const usageOf = (e: RequestLogEntry): Usage => ({ inputTokens: e.usage!.input_tokens, outputTokens: e.usage!.output_tokens, cacheReadInputTokens: e.usage!.cache_read_input_tokens, cacheCreationInputTokens: e.usage!.cache_creation_input_tokens });

/** What the model answered for an agent's requests, summed as the agent counts usage. */
function usageIn(requests: RequestLogEntry[]): Usage {
  return requests.reduce((u, e) => addUsage(u, usageOf(e)), ZERO_USAGE);
}

/** What a ledger charges for those requests: each call on its own (cache reads weighted, rounded up per call). */
function chargedIn(requests: RequestLogEntry[]): number {
  return requests.reduce((n, e) => n + tokensCharged(usageOf(e)), 0);
}

const turnOf = (e: RequestLogEntry) => (bodyOf(e).messages.length + 1) / 2;

/** A tree's root (it keeps a ledger) whose model call of `failAt` gets a non-retryable 400; it ends failed. */
async function failedRoot(id: string, mark: string, failAt: number): Promise<{ failedRequest: RequestLogEntry }> {
  h.model.faults.add({ kind: 'status', status: 400, message: 'injected', match: (e) => firstUserText(e).includes(mark) && bodyOf(e).messages.length === 2 * failAt - 1 });
  const root = await h.forkflow.startAgent({ agentId: id, prompt: reader(mark, 9), maxTurns: 20, budget: { maxTokens: 1_000_000 } });
  await expect(root.result()).resolves.toMatchObject({ status: 'failed', turns: failAt - 1 });
  const failedRequest = messageRequests(h.model).find((e) => e.outcome === 'fault' && firstUserText(e).includes(mark))!;
  expect(turnOf(failedRequest)).toBe(failAt);
  return { failedRequest };
}

test('a root failed at turn 7 goes on from turn 6: no earlier call again, usage and ledger exact', async () => {
  const id = `tt-retry-failed-${suffix}`;
  const mark = `Fails at seven ${suffix}.`;
  const { failedRequest } = await failedRoot(id, mark, 7);
  const before = requestsWith(h.model, mark);
  expect(before.map(turnOf)).toEqual([1, 2, 3, 4, 5, 6]);
  const retryFrom = lastSeq(h.model);

  const handle = await h.forkflow.retry(id);
  const result = await handle.result();
  expect(result).toMatchObject({ status: 'completed', text: 'done', turns: 10, toolUses: 9, retry: { fromTurn: 6, previous: 'failed' } });

  const after = requestsWith(h.model, mark, retryFrom);
  expect(after.map(turnOf)).toEqual([7, 8, 9, 10]);
  // The retried call is the failed one, byte for byte, and it reads what turn 6 cached.
  expect(after[0]!.rawBody).toBe(failedRequest.rawBody);
  expect(after[0]!.usage!.cache_read_input_tokens).toBe(before[5]!.usage!.cache_read_input_tokens + before[5]!.usage!.cache_creation_input_tokens);

  const paid = usageIn([...before, ...after]);
  expect(result.usage).toEqual(paid);
  const node = result.ledger!.nodes[id]!;
  const charged = chargedIn([...before, ...after]);
  expect(node).toMatchObject({ usage: paid, charged, turns: 10, lastTurn: 10, runs: 2 });
  const status = await h.forkflow.status(id);
  expect(status.treeBudget).toMatchObject({ charged });
  expect(status.retry).toMatchObject({ fromTurn: 6, previous: 'failed' });
  await recordHistory(h.client.workflow.getHandle(id), 'retry-from-failure');
});

test('a retry from an earlier turn pays those turns again, and the ledger counts every call', async () => {
  const id = `tt-retry-earlier-${suffix}`;
  const mark = `Fails at five ${suffix}.`;
  await failedRoot(id, mark, 5);
  const before = requestsWith(h.model, mark);
  const retryFrom = lastSeq(h.model);
  const result = await (await h.forkflow.retry(id, { fromTurn: 2 })).result();
  expect(result).toMatchObject({ status: 'completed', turns: 10, retry: { fromTurn: 2 } });
  const after = requestsWith(h.model, mark, retryFrom);
  expect(after.map(turnOf)).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
  const paid = usageIn([...before, ...after]);
  expect(result.usage).toEqual(paid);
  // Turns 3 and 4 were paid twice: twelve calls charged, the last numbered 10.
  expect(result.ledger!.nodes[id]).toMatchObject({ usage: paid, charged: chargedIn([...before, ...after]), turns: 12, lastTurn: 10 });
});

test('an agent out of budget goes on with a new budget from where it stopped', async () => {
  const id = `tt-retry-budget-${suffix}`;
  const mark = `Runs out ${suffix}.`;
  const agent = await h.forkflow.start({ agentId: id, prompt: reader(mark, 6), querySource: 'agent:main', maxTurns: 20, budget: { maxTokens: 1_000_000, maxToolCalls: 3 } });
  await expect(agent.result()).resolves.toMatchObject({ status: 'completed', stopReason: 'budget_exhausted', turns: 3, toolUses: 3 });
  const before = requestsWith(h.model, mark);
  const transcript = await h.forkflow.transcript(id);
  const retryFrom = lastSeq(h.model);

  const result = await (await h.forkflow.retry(id, { budget: { maxTokens: 1_000_000 } })).result();
  expect(result).toMatchObject({ status: 'completed', stopReason: 'end_turn', text: 'done', turns: 7, toolUses: 6, retry: { fromTurn: 3, previous: 'budget_exhausted' } });
  const after = requestsWith(h.model, mark, retryFrom);
  expect(after.map(turnOf)).toEqual([4, 5, 6, 7]);
  // Its first request is the conversation it had stopped at, and reads what turn 3 cached.
  expect(unmarked(bodyOf(after[0]!).messages)).toEqual(unmarked(transcript));
  expect(after[0]!.usage!.cache_read_input_tokens).toBe(before[2]!.usage!.cache_read_input_tokens + before[2]!.usage!.cache_creation_input_tokens);
  expect(result.usage).toEqual(usageIn([...before, ...after]));
});

test('what cannot be retried is refused, and nothing starts', async () => {
  const before = lastSeq(h.model);
  const done = `tt-retry-done-${suffix}`;
  const doneHandle = await h.forkflow.start({ agentId: done, prompt: 'Quick.\n@reply ok', querySource: 'agent:main' });
  await doneHandle.result();
  const since = lastSeq(h.model);
  const refused = await rejectionOf(h.forkflow.retry(done));
  expect(refused).toBeInstanceOf(RetryRefusedError);
  expect((refused as Error).message).toMatch(/completed its task: send it a message/);
  await expect(h.forkflow.retry(`no-such-agent-${suffix}`)).rejects.toBeInstanceOf(AgentNotFoundError);

  const runningId = `tt-retry-running-${suffix}`;
  const running = await h.forkflow.start({ agentId: runningId, prompt: 'Slow.\n@sleep 30000 @reply late', querySource: 'agent:main' });
  await waitFor(() => h.model.log.entries().some((e) => e.outcome === 'pending' && firstUserText(e).includes('Slow.')), 'the slow call');
  await expect(h.forkflow.retry(runningId)).rejects.toThrow(/still running: cancel it first/);
  await running.cancel();
  await expect(running.result()).resolves.toMatchObject({ status: 'killed' });
  // Killed while its first call was in flight: it goes on from turn 0 — but not from a turn past its end.
  const past = await rejectionOf(h.forkflow.retry(runningId, { fromTurn: 3 }));
  expect(past).toBeInstanceOf(InvalidForkPointError);
  expect((past as Error).message).toMatch(/has taken 0 turns: turn 3 is past its end/);
  // Each agent's latest run is still the one it began with.
  expect((await h.client.workflow.getHandle(done).describe()).runId).toBe(doneHandle.runId);
  expect((await h.client.workflow.getHandle(runningId).describe()).runId).toBe(running.runId);
  // The only requests since were the slow agent's own (one call, aborted).
  expect(messageRequests(h.model).filter((e) => e.seq > since).map((e) => firstUserText(e))).toEqual(['Slow.\n@sleep 30000 @reply late']);
  expect(before).toBeLessThan(since);
});
