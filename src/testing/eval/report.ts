/**
 * What an eval run reports: per case its outcome, turns, tool calls, tokens (uncached input,
 * cache read, cache write, output), cost, and the difference from what the original agent did
 * after the same point; totals, and how much of the run's budget was charged. As JSON (the
 * report object itself) and as a table for people.
 */
import Table from 'cli-table3';
import type { Usage } from '../../shared/messages-api/anthropic';
import type { StopReason } from '../../shared/wire/status';
import type { CounterfactualPart } from '../../shared/prefix/time-travel';

/** How a case ended; `not_run`: the budget stopped the run before it; `error`: it could not run. */
export type CaseOutcome = 'completed' | 'max_turns' | 'budget_exhausted' | 'failed' | 'killed' | 'timeout' | 'not_run' | 'error';

export interface CaseTokens {
  /** Input tokens read neither from nor into the cache. */
  uncached: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

/** What the original agent did after the case's point (to the end, or as far as it has got). */
export interface OriginalContinuation {
  /** Its state now (`running` while it still goes on). */
  state: string;
  turns: number;
  toolUses: number;
  tokens: CaseTokens;
  costUsd: number;
  text?: string;
}

export interface CaseReport {
  id: string;
  /** The point: the recorded agent, the run that held it, the turn. */
  from: { agentId: string; runId?: string; turn?: number };
  kind: 'prompt' | 'replay';
  outcome: CaseOutcome;
  /** The case's fork (absent when it did not run). */
  forkId?: string;
  stopReason?: StopReason;
  turns: number;
  toolUses: number;
  tokens: CaseTokens;
  /** Tokens charged against budgets (cache reads weighted 0.1). */
  charged: number;
  costUsd: number;
  text?: string;
  error?: string;
  /** Counterfactual changes it made (each breaks the cache by design). */
  changed?: CounterfactualPart[];
  /** Why its first call missed the cache, when it did. */
  cacheBreak?: string;
  original?: OriginalContinuation;
  /** The case minus the original continuation (positive: the case did more / cost more). */
  diff?: { turns: number; toolUses: number; tokens: number; costUsd: number; sameText: boolean };
}

export interface EvalReport {
  name: string;
  cases: CaseReport[];
  totals: {
    cases: number;
    ran: number;
    notRun: number;
    completed: number;
    /** Ended failed, killed or timed out. */
    failed: number;
    /** Could not be started or read. */
    errors: number;
    turns: number;
    toolUses: number;
    tokens: CaseTokens;
    costUsd: number;
  };
  budget: { maxTokens: number; charged: number; left: number; stoppedAt?: string };
  concurrency: number;
  durationMs: number;
}

export function tokensOf(u: Usage): CaseTokens {
  return { uncached: u.inputTokens, cacheRead: u.cacheReadInputTokens, cacheWrite: u.cacheCreationInputTokens, output: u.outputTokens };
}

export function totalTokens(t: CaseTokens): number {
  return t.uncached + t.cacheRead + t.cacheWrite + t.output;
}

function signed(n: number, digits = 0): string {
  const text = digits ? n.toFixed(digits) : String(n);
  return n > 0 ? `+${text}` : text;
}

/** The report as a table (one row a case) and a summary line. */
export function evalTable(report: EvalReport): string {
  const t = new Table({ head: ['case', 'from', 'outcome', 'turns', 'tools', 'uncached', 'cache read', 'cache write', 'output', 'cost $', 'Δ turns', 'Δ tokens', 'Δ cost $'], style: { head: [], border: [] } });
  for (const c of report.cases) {
    const from = `${c.from.agentId}${c.from.turn !== undefined ? `@${c.from.turn}` : ''}${c.kind === 'replay' ? ' (replay)' : ''}${c.changed?.length ? ` [${c.changed.join(',')}]` : ''}`;
    const d = c.diff;
    t.push([c.id, from, c.outcome, c.turns, c.toolUses, c.tokens.uncached, c.tokens.cacheRead, c.tokens.cacheWrite, c.tokens.output, c.costUsd.toFixed(4), d ? signed(d.turns) : '', d ? signed(d.tokens) : '', d ? signed(d.costUsd, 4) : '']);
  }
  const s = report.totals;
  const b = report.budget;
  const summary =
    `${report.name}: ${s.ran}/${s.cases} cases ran (${s.completed} completed, ${s.failed} failed, ${s.errors} errors), ${s.notRun} not run; ` +
    `${s.turns} turns, ${s.toolUses} tool calls, $${s.costUsd.toFixed(4)}; budget ${b.charged}/${b.maxTokens} tokens charged${b.stoppedAt ? `, stopped before case ${b.stoppedAt}` : ''}`;
  return `${t.toString()}\n${summary}`;
}
