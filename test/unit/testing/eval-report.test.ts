/**
 * The eval report's readers: `checkEval` (what a service's test suite asserts with) says which
 * expectations do not hold and `assertEval` throws them; the table shows every case and a
 * summary; the spec is checked before anything runs. And the CLI's turn arguments.
 */
import { assertEval, checkEval, EvalAssertionError, evalSpecSchema, evalTable, type CaseReport, type EvalReport } from '../../../src/testing';
import { pointParams, turnNumber } from '../../../src/cli/commands/point-flags';
import { CliError } from '../../../src/cli/exit';

const tokens = { uncached: 10, cacheRead: 1000, cacheWrite: 50, output: 20 };
const ran = (id: string, over: Partial<CaseReport> = {}): CaseReport => ({
  id,
  from: { agentId: 'a', runId: 'r', turn: 2 },
  kind: 'prompt',
  outcome: 'completed',
  forkId: `eval-x-${id}`,
  turns: 2,
  toolUses: 1,
  tokens,
  charged: 180,
  costUsd: 0.0012,
  text: `done ${id}`,
  original: { state: 'completed', turns: 3, toolUses: 2, tokens, costUsd: 0.002, text: 'original' },
  diff: { turns: -1, toolUses: -1, tokens: 0, costUsd: -0.0008, sameText: false },
  ...over,
});
const report: EvalReport = {
  name: 'x',
  cases: [ran('one'), ran('two', { kind: 'replay', outcome: 'max_turns', changed: ['model'] }), { ...ran('three'), outcome: 'not_run', forkId: undefined, turns: 0, toolUses: 0, charged: 0, costUsd: 0 }],
  totals: { cases: 3, ran: 2, notRun: 1, completed: 1, failed: 0, errors: 0, turns: 4, toolUses: 2, tokens, costUsd: 0.0024 },
  budget: { maxTokens: 1000, charged: 360, left: 640, stoppedAt: 'three' },
  concurrency: 2,
  durationMs: 5,
};

test('checkEval lists every expectation that does not hold; none when all do', () => {
  expect(checkEval(report, { ran: 2, notRun: 1, noErrors: true, maxCostUsd: 0.01, maxCharged: 400, cases: { one: { outcome: 'completed', textIncludes: 'done', maxTurns: 2 }, two: { outcome: ['max_turns', 'completed'], changed: ['model'] } } })).toEqual([]);
  expect(checkEval(report, { ran: 3, allCompleted: true, maxCharged: 100, cases: { one: { textIncludes: 'nope', sameTextAsOriginal: true, maxToolUses: 0 }, ghost: {} } })).toEqual([
    'cases that ran: expected 3, got 2',
    'case two: max_turns, expected completed',
    'charged: 360 tokens is over 100',
    'case one: text does not include "nope": "done one"',
    'case one: 1 tool calls, more than 0',
    "case one: its text is not the original's",
    'case ghost: not in the report',
  ]);
  expect(() => assertEval(report, { completed: 2 })).toThrow(EvalAssertionError);
  expect(() => assertEval(report, { completed: 1 })).not.toThrow();
});

test('the table has a row per case and a summary with the budget', () => {
  const table = evalTable(report);
  expect(table).toMatch(/one\s+│ a@2\s+│ completed/);
  expect(table).toMatch(/two\s+│ a@2 \(replay\) \[model\]\s+│ max_turns/);
  expect(table).toMatch(/three\s+│ a@2\s+│ not_run/);
  expect(table).toContain('x: 2/3 cases ran (1 completed, 0 failed, 0 errors), 1 not run; 4 turns, 2 tool calls, $0.0024; budget 360/1000 tokens charged, stopped before case three');
});

test('a spec is checked before anything runs', () => {
  expect(evalSpecSchema.safeParse({ budget: { maxTokens: 10 }, cases: [{ id: 'a', agentId: 'x', atTurn: -1 }] }).success).toBe(false);
  expect(evalSpecSchema.safeParse({ budget: { maxTokens: 10 }, cases: [] }).success).toBe(false);
  expect(evalSpecSchema.safeParse({ name: '../x', budget: { maxTokens: 10 }, cases: [{ id: 'a', agentId: 'x' }] }).success).toBe(false);
  expect(evalSpecSchema.parse({ budget: { maxTokens: 10 }, cases: [{ id: 'a', agentId: 'x' }] })).toMatchObject({ name: 'eval', concurrency: 4, caseBudget: 50_000, maxTurns: 10 });
});

test('the CLI takes a turn as a whole number ≥ 0, and time-travel flags only with an agent', () => {
  const parse = turnNumber('--at-turn');
  expect(parse('0')).toBe(0);
  expect(parse('12')).toBe(12);
  for (const bad of ['-1', '1.5', 'x', '', '1e3']) expect(() => parse(bad)).toThrow(CliError);
  expect(() => pointParams(undefined, { atTurn: 2 }, { prompt: 'p' })).toThrow(/fork from an agent: name it/);
  expect(pointParams('a', { atTurn: 2, replay: true, model: 'm' }, { prompt: 'p' })).toEqual({ params: { prompt: 'p', replay: true, counterfactual: true, model: 'm' }, point: { atTurn: 2 } });
  expect(pointParams(undefined, {}, { prompt: 'p' })).toEqual({ params: { prompt: 'p' } });
});
