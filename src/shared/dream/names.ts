/**
 * Names that make up autoDream's contract with Temporal: workflow ids (the lock is one), the
 * Schedule id, query sources that mark forkflow's own memory forks, and the visibility
 * queries that find a scope's sessions. Workflow-safe.
 */
import { WORKFLOW_TYPES } from '../wire/constants';
import { memoryScopeSchema } from './config';

/** Query source of consolidation forks: they are not sessions and are not counted as such. */
export const DREAM_QUERY_SOURCE = 'forkflow:auto-dream';
/** Query source of away-summary forks: not sessions, not events. */
export const AWAY_QUERY_SOURCE = 'forkflow:away-summary';
export const DREAM_FORK_LABEL = 'auto-dream';
export const AWAY_FORK_LABEL = 'away-summary';

/** Runs of forkflow's own that are never a scope's sessions or events. */
const OWN_QUERY_SOURCES = [DREAM_QUERY_SOURCE, AWAY_QUERY_SOURCE];

function checkedScope(scope: string): string {
  // Scopes are validated at every boundary; this keeps a query from ever carrying a quote.
  return memoryScopeSchema.parse(scope);
}

/**
 * The lock: the consolidation fork of a scope always runs under this workflow id, so Temporal
 * itself refuses a second one while the first is running.
 */
export function dreamLockId(scope: string): string {
  return `dream-${checkedScope(scope)}`;
}

/** One Schedule per memory scope. */
export function dreamScheduleId(scope: string): string {
  return `forkflow-dream-${checkedScope(scope)}`;
}

/** Workflow id of a scheduled run (the Schedule appends the scheduled time). */
export function scheduledDreamId(scope: string): string {
  return `dream-scheduled-${checkedScope(scope)}`;
}

/** Workflow id of a run started by hand (`suffix` makes it unique). */
export function manualDreamId(scope: string, suffix: string): string {
  return `dream-manual-${checkedScope(scope)}-${suffix}`;
}

/** A workflow id as a file name (staging folders are named after the dream run). */
export function runKeyOf(workflowId: string): string {
  return workflowId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 200);
}

const notOwn = `(ForkQuerySource IS NULL OR ForkQuerySource NOT IN (${OWN_QUERY_SOURCES.map((s) => `'${s}'`).join(', ')}))`;

function scopeClause(scope: string): string {
  return `WorkflowType = '${WORKFLOW_TYPES.fork}' AND ForkMemoryScope = '${checkedScope(scope)}'`;
}

/**
 * Sessions of a scope: closed agent runs (not forkflow's own memory forks) that closed after
 * `since` (all of them when null) and no later than `until`. ISO-8601 times.
 */
export function sessionsQuery(scope: string, since: string | null, until: string): string {
  const after = since ? ` AND CloseTime > '${since}'` : '';
  return `${scopeClause(scope)} AND ExecutionStatus != 'Running' AND ${notOwn}${after} AND CloseTime <= '${until}'`;
}

/** Agent runs of a scope that closed after `since` or are still running, consolidations included (away summaries). */
export function scopeEventsQuery(scope: string, since: string): string {
  const mine = `(ForkQuerySource IS NULL OR ForkQuerySource != '${AWAY_QUERY_SOURCE}')`;
  return `${scopeClause(scope)} AND ${mine} AND (CloseTime > '${since}' OR ExecutionStatus = 'Running')`;
}

/** The scope's autoDream runs (status views). */
export function dreamRunsQuery(scope: string): string {
  return `WorkflowType = '${WORKFLOW_TYPES.autoDream}' AND ForkMemoryScope = '${checkedScope(scope)}'`;
}
