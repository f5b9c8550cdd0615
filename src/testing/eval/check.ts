/**
 * Asserting on an eval run from a service's own test suite (any test runner): expectations on
 * the totals and on named cases; `checkEval` lists what does not hold, `assertEval` throws it.
 */
import type { CaseOutcome, EvalReport } from './report';
import { totalTokens } from './report';

export interface CaseExpectation {
  /** The outcome, or any of several. */
  outcome?: CaseOutcome | CaseOutcome[];
  textIncludes?: string;
  maxTurns?: number;
  maxToolUses?: number;
  maxTokens?: number;
  /** The counterfactual parts it changed, exactly. */
  changed?: string[];
  /** Its text is (true) or is not (false) the original agent's. */
  sameTextAsOriginal?: boolean;
}

export interface EvalExpectations {
  ran?: number;
  notRun?: number;
  completed?: number;
  /** Every case that ran completed (not failed, killed, timed out, out of budget or turns). */
  allCompleted?: boolean;
  /** No case errored (could not start or be read). */
  noErrors?: boolean;
  maxCostUsd?: number;
  /** Tokens charged by the whole run (cache reads weighted 0.1). */
  maxCharged?: number;
  cases?: Record<string, CaseExpectation>;
}

/** What does not hold, one line each (empty: everything does). */
export function checkEval(report: EvalReport, expect: EvalExpectations): string[] {
  const problems: string[] = [];
  const t = report.totals;
  const want = (what: string, actual: number, expected: number | undefined) => {
    if (expected !== undefined && actual !== expected) problems.push(`${what}: expected ${expected}, got ${actual}`);
  };
  want('cases that ran', t.ran, expect.ran);
  want('cases not run', t.notRun, expect.notRun);
  want('cases completed', t.completed, expect.completed);
  if (expect.allCompleted) {
    for (const c of report.cases) if (c.outcome !== 'completed' && c.outcome !== 'not_run') problems.push(`case ${c.id}: ${c.outcome}${c.error ? ` (${c.error})` : ''}, expected completed`);
  }
  if (expect.noErrors) for (const c of report.cases) if (c.outcome === 'error') problems.push(`case ${c.id}: error: ${c.error ?? 'unknown'}`);
  if (expect.maxCostUsd !== undefined && t.costUsd > expect.maxCostUsd) problems.push(`cost: $${t.costUsd} is over $${expect.maxCostUsd}`);
  if (expect.maxCharged !== undefined && report.budget.charged > expect.maxCharged) problems.push(`charged: ${report.budget.charged} tokens is over ${expect.maxCharged}`);
  for (const [id, e] of Object.entries(expect.cases ?? {})) {
    const c = report.cases.find((x) => x.id === id);
    if (!c) {
      problems.push(`case ${id}: not in the report`);
      continue;
    }
    const outcomes = e.outcome === undefined ? undefined : Array.isArray(e.outcome) ? e.outcome : [e.outcome];
    if (outcomes && !outcomes.includes(c.outcome)) problems.push(`case ${id}: outcome ${c.outcome}, expected ${outcomes.join(' or ')}`);
    if (e.textIncludes !== undefined && !(c.text ?? '').includes(e.textIncludes)) problems.push(`case ${id}: text does not include ${JSON.stringify(e.textIncludes)}: ${JSON.stringify((c.text ?? '').slice(0, 200))}`);
    if (e.maxTurns !== undefined && c.turns > e.maxTurns) problems.push(`case ${id}: ${c.turns} turns, more than ${e.maxTurns}`);
    if (e.maxToolUses !== undefined && c.toolUses > e.maxToolUses) problems.push(`case ${id}: ${c.toolUses} tool calls, more than ${e.maxToolUses}`);
    if (e.maxTokens !== undefined && totalTokens(c.tokens) > e.maxTokens) problems.push(`case ${id}: ${totalTokens(c.tokens)} tokens, more than ${e.maxTokens}`);
    if (e.changed !== undefined && JSON.stringify([...(c.changed ?? [])].sort()) !== JSON.stringify([...e.changed].sort())) problems.push(`case ${id}: changed ${JSON.stringify(c.changed ?? [])}, expected ${JSON.stringify(e.changed)}`);
    if (e.sameTextAsOriginal !== undefined && c.diff?.sameText !== e.sameTextAsOriginal) problems.push(`case ${id}: its text is ${c.diff?.sameText ? '' : 'not '}the original's`);
  }
  return problems;
}

/** An eval run that did not meet its expectations; `problems` lists each. */
export class EvalAssertionError extends Error {
  override readonly name = 'EvalAssertionError';
  constructor(readonly problems: string[]) {
    super(`The eval run did not meet its expectations:\n- ${problems.join('\n- ')}`);
  }
}

/**
 * Throws an {@link EvalAssertionError} listing every expectation that does not hold.
 *
 * @example
 * const report = await runEval(forkflow, spec);
 * assertEval(report, { noErrors: true, cases: { 'fix-tests': { outcome: 'completed', textIncludes: 'Scope:' } } });
 */
export function assertEval(report: EvalReport, expect: EvalExpectations): void {
  const problems = checkEval(report, expect);
  if (problems.length > 0) throw new EvalAssertionError(problems);
}
