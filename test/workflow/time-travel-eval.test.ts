/**
 * Evals over recorded agents (issue 33): 20 cases forked from points of 3 recorded agents —
 * prompts, replays, a counterfactual model — run as sync forks two at a time under a token
 * budget that stops the run part way. The JSON report counts what ran and what did not, each
 * case with its outcome, turns, tool calls, tokens and cost and its difference from what the
 * agent itself did after the same point; `checkEval`/`assertEval` (forkflow/testing) assert on
 * it. A spec naming a point that cannot be had runs nothing. `forkflow eval` prints the same
 * report.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidInputError } from '../../src/client';
import { assertEval, checkEval, type EvalAssertionError, evalTable, runEval, type EvalReport, type EvalSpecInput } from '../../src/testing';
import { startHarness, type Harness } from '../kit/env';
import { runForkflow } from '../kit/processes';
import { lastSeq } from '../kit/time-travel';
import { script, toolStep } from '../kit/tree';
import { rejectionOf } from '../kit/wait';

jest.setTimeout(180_000);

let h: Harness;
const suffix = Math.random().toString(36).slice(2, 8);
const agents = [1, 2, 3].map((n) => `tt-eval-rec${n}-${suffix}`);
const read = toolStep('Read', { file_path: 'small.txt' });
/**
 * Each case's token budget (a case charges a few hundred). The run's is two of them and 4,000
 * more: two run at once while little is charged, one at a time after, and the run stops once
 * it has charged over 8,000 — part way through the 20 cases (about 600 each).
 */
const CASE_BUDGET = 4_000;

beforeAll(async () => {
  h = await startHarness({ name: 'tt-eval' });
  writeFileSync(join(h.workspaceRoot, 'small.txt'), 'one\ntwo\n');
  await Promise.all(
    agents.map(async (id, i) => {
      const agent = await h.forkflow.start({ agentId: id, prompt: script(`Recorded agent ${i + 1} ${suffix}.`, `@repeat 3 ${read}`, `@reply recorded ${i + 1}`), querySource: 'agent:main' });
      await expect(agent.result()).resolves.toMatchObject({ status: 'completed', turns: 4 });
    }),
  );
});
afterAll(() => h.close());

/** 20 cases: first a replay and a counterfactual replay of each agent, then prompts from every turn. */
function cases(): EvalSpecInput['cases'] {
  const out: EvalSpecInput['cases'] = [];
  agents.forEach((agentId, i) => {
    out.push({ id: `replay-${i + 1}`, agentId, atTurn: 1 });
    out.push({ id: `opus-${i + 1}`, agentId, atTurn: 1, model: 'claude-opus-4-6', maxTurns: 1 });
  });
  for (let n = 0; out.length < 20; n++) {
    out.push({ id: `prompt-${n}`, agentId: agents[n % 3]!, atTurn: 1 + (n % 4), prompt: script(`Case ${n}.`, read, `@reply case ${n}`) });
  }
  return out;
}

test('20 cases from 3 recorded agents, stopped part way by the budget: the JSON counts what ran and what did not', async () => {
  const spec: EvalSpecInput = { name: `budget-${suffix}`, cases: cases(), concurrency: 2, caseBudget: CASE_BUDGET, budget: { maxTokens: 2 * CASE_BUDGET + 4_000 } };
  const report: EvalReport = JSON.parse(JSON.stringify(await runEval(h.forkflow, spec))) as EvalReport;
  console.log(`eval: ${report.totals.ran} ran, ${report.totals.notRun} not run; ${report.budget.charged}/${report.budget.maxTokens} tokens charged, stopped before ${report.budget.stoppedAt}`);

  // Part way: a prefix of the cases ran, the rest did not, and the run stopped where the next
  // case's budget no longer fit in what was left.
  expect(report.totals.cases).toBe(20);
  expect(report.totals.ran).toBeGreaterThanOrEqual(6);
  expect(report.totals.notRun).toBeGreaterThanOrEqual(1);
  expect(report.totals.ran + report.totals.notRun).toBe(20);
  const firstNotRun = report.cases.findIndex((c) => c.outcome === 'not_run');
  expect(report.cases.slice(0, firstNotRun).every((c) => c.outcome !== 'not_run')).toBe(true);
  expect(report.cases.slice(firstNotRun).every((c) => c.outcome === 'not_run' && c.tokens.uncached + c.tokens.cacheRead + c.tokens.output === 0)).toBe(true);
  expect(report.budget.stoppedAt).toBe(report.cases[firstNotRun]!.id);
  expect(report.budget.charged).toBe(report.cases.reduce((n, c) => n + c.charged, 0));
  expect(report.budget.left).toBeLessThan(CASE_BUDGET);
  expect(report.budget.charged).toBeLessThanOrEqual(report.budget.maxTokens);

  // Every case that ran: where it came from, what it did, what it cost.
  const ran = report.cases.slice(0, firstNotRun);
  for (const c of ran) {
    expect(c.forkId).toMatch(new RegExp(`^eval-budget-${suffix}-${c.id}-`));
    expect(c.from.runId).toEqual(expect.any(String));
    expect(c.tokens.cacheRead + c.tokens.cacheWrite + c.tokens.uncached).toBeGreaterThan(0);
    expect(c.costUsd).toBeGreaterThan(0);
    expect(c.original).toBeDefined();
  }
  // A replay of the agent from turn 1 did what the agent did: three more turns, the same answer.
  const replay = report.cases.find((c) => c.id === 'replay-1')!;
  expect(replay).toMatchObject({ kind: 'replay', outcome: 'completed', turns: 3, toolUses: 2, text: 'recorded 1', diff: { turns: 0, toolUses: 0, sameText: true } });
  expect(replay.original).toMatchObject({ state: 'completed', turns: 3, toolUses: 2, text: 'recorded 1' });
  // The same with another model, for one turn: named, and cut short.
  expect(report.cases.find((c) => c.id === 'opus-1')).toMatchObject({ kind: 'replay', changed: ['model'], outcome: 'max_turns', turns: 1, diff: { turns: -2 } });
  const prompt = ran.find((c) => c.kind === 'prompt');
  if (prompt) expect(prompt).toMatchObject({ outcome: 'completed', turns: 2, toolUses: 1, text: expect.stringMatching(/^case \d+$/) as unknown });

  // The test kit asserts on it.
  expect(checkEval(report, { ran: report.totals.ran, notRun: report.totals.notRun, allCompleted: false, noErrors: true, cases: { 'replay-1': { outcome: 'completed', sameTextAsOriginal: true }, 'opus-1': { changed: ['model'], outcome: 'max_turns' } } })).toEqual([]);
  const failed = rejectionOf(Promise.resolve().then(() => assertEval(report, { allCompleted: true, cases: { 'replay-1': { textIncludes: 'nothing like it' }, missing: {} } })));
  const problems = ((await failed) as EvalAssertionError).problems;
  expect(problems).toEqual(expect.arrayContaining(['case opus-1: max_turns, expected completed', 'case replay-1: text does not include "nothing like it": "recorded 1"', 'case missing: not in the report']));
  expect(evalTable(report)).toContain(`${report.totals.ran}/20 cases ran`);
});

test('a spec with a point that cannot be had runs nothing, and says which cases', async () => {
  const before = lastSeq(h.model);
  const err = await rejectionOf(
    runEval(h.forkflow, {
      budget: { maxTokens: 100_000 },
      cases: [
        { id: 'fine', agentId: agents[0]!, atTurn: 1, prompt: 'ok' },
        { id: 'past', agentId: agents[1]!, atTurn: 9, prompt: 'no' },
        { id: 'ghost', agentId: `no-such-agent-${suffix}`, prompt: 'no' },
      ],
    }),
  );
  expect(err).toBeInstanceOf(InvalidInputError);
  expect((err as InvalidInputError).issues).toEqual([`case past: Agent ${agents[1]} has taken 4 turns: turn 9 is past its end (fork from turns 0–4).`, expect.stringMatching(/^case ghost: No agent "no-such-agent-/)]);
  expect(lastSeq(h.model)).toBe(before);
  await expect(runEval(h.forkflow, { budget: { maxTokens: 1 }, cases: [{ id: 'a', agentId: 'x' }, { id: 'a', agentId: 'y' }] })).rejects.toThrow(/case ids must be unique/);
});

test('forkflow eval prints the report as JSON', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'forkflow-eval-'));
  const file = join(dir, 'spec.json');
  writeFileSync(file, JSON.stringify({ name: `cli-${suffix}`, budget: { maxTokens: 200_000 }, cases: [{ id: 'one', agentId: agents[2], atTurn: 4, prompt: 'From the end.\n@reply cli case' }] }));
  const r = await runForkflow(['--address', h.env.address, '--task-queue', h.taskQueue, '--json', 'eval', file]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const report = JSON.parse(r.stdout) as EvalReport;
  expect(report.totals).toMatchObject({ cases: 1, ran: 1, completed: 1, notRun: 0 });
  expect(report.cases[0]).toMatchObject({ id: 'one', outcome: 'completed', text: 'cli case', from: { agentId: agents[2], turn: 4 }, original: { turns: 0 } });
});
