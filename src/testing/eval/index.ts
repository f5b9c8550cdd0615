/** Evals over recorded agents (`forkflow/testing`, `forkflow eval`): spec, run, report, assertions. */
export { evalCaseSchema, evalSpecSchema, type EvalCase, type EvalSpec, type EvalSpecInput } from './spec';
export { runEval } from './run';
export { evalTable, type CaseOutcome, type CaseReport, type CaseTokens, type EvalReport, type OriginalContinuation } from './report';
export { assertEval, checkEval, EvalAssertionError, type CaseExpectation, type EvalExpectations } from './check';
