/**
 * What `forkflow agents` prints: a table of the loaded agents and the problems found.
 * Plain strings only; the CLI chooses how to draw them.
 */
import {
  INHERIT_MODEL,
  compareCodeUnits,
  summarizeAgentTools,
  type AgentLoadResult,
  type AgentProblem,
} from '../../shared/agents/agents';

export interface AgentReport {
  /** Column headings: name, model, tools, color, source. */
  head: string[];
  /** One row per agent, sorted by name, cells in `head` order. */
  rows: string[][];
  /** One line per problem, in file order: where, what was wrong, what happened, what to do. */
  problems: string[];
  /** e.g. `2 agents loaded, 3 problems (1 file skipped)`. */
  summary: string;
}

const OUTCOME_TEXT: Record<AgentProblem['outcome'], string> = {
  skipped: 'file skipped',
  ignored: 'ignored',
  restricted: 'tools withheld',
  unsupported: 'not honoured',
};

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Turns a {@link AgentLoadResult} into table rows and problem lines. The model column
 * shows `inherit` when the definition names none, and `caller (fork)` for `context: fork`
 * commands, which always run on their caller's model.
 */
export function formatAgentReport(result: AgentLoadResult): AgentReport {
  const rows = [...result.agents]
    .sort((a, b) => compareCodeUnits(a.name, b.name))
    .map((a) => [a.name, a.context === 'fork' ? 'caller (fork)' : (a.model ?? INHERIT_MODEL), summarizeAgentTools(a), a.color ?? '-', a.sourceFile]);
  const problems = result.problems.map((p) => `${p.file}: ${p.problem} (${OUTCOME_TEXT[p.outcome]}). ${p.fix}`);
  const skippedFiles = new Set(result.problems.filter((p) => p.outcome === 'skipped').map((p) => p.file)).size;
  const summary =
    `${plural(rows.length, 'agent')} loaded, ${plural(problems.length, 'problem')}` +
    (skippedFiles ? ` (${plural(skippedFiles, 'file')} skipped)` : '');
  return { head: ['name', 'model', 'tools', 'color', 'source'], rows, problems, summary };
}
