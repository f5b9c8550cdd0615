/**
 * What one autoDream run ended with: a discriminated union on `kind`, the workflow's result.
 * `skipped` and `lock_blocked` are normal ends; `timed_out`, `errored` and
 * `escape_audit_failed` rolled the "last consolidated" time back so the next run retries.
 * Workflow-safe.
 */
import type { Usage } from '../messages-api/anthropic';
import type { PathEscapeReport } from '../wire/activity-io';
import type { ForkResult, StopReason, TerminalStatus } from '../wire/status';

/** The gate that stopped a run, cheapest first. */
export type DreamGate = 'disabled' | 'time' | 'throttle' | 'sessions';

/** Common to every outcome. */
export interface DreamRunInfo {
  scope: string;
  manual: boolean;
  /** The time the gates were evaluated at (the workflow clock, or the config's `now`). */
  at: string;
}

/** The consolidation fork, in brief. */
export interface DreamForkSummary {
  agentId: string;
  runId: string;
  status: TerminalStatus;
  stopReason: StopReason;
  turns: number;
  toolUses: number;
  usage: Usage;
  durationMs: number;
  /** Its final report (first 2,000 characters). */
  text: string;
}

/** Files in the memory directory, relative to it. */
export interface MemoryChanges {
  created: string[];
  updated: string[];
  removed: string[];
}

/** Who held the lock and for how long. */
export interface LockHolder {
  workflowId: string;
  runId: string;
  startedAt: string;
  runningForMs: number;
  /** Running longer than this makes a holder stale (fork timeout + grace). */
  staleAfterMs: number;
}

/** A stale lock holder this run terminated before taking the lock. */
export interface Takeover {
  workflowId: string;
  runId: string;
  startedAt: string;
  reason: string;
}

/** After a consolidation was attempted: the state it left behind. */
interface Attempted {
  /** `lastConsolidatedAt` as recorded now (null: never; absent when the run failed before reading the state). */
  lastConsolidatedAt?: string | null;
  /** True when a failed attempt restored the previous value. */
  rolledBack: boolean;
  /** Sessions whose transcripts were staged for the fork. */
  sessionsReviewed: number;
  takeover?: Takeover;
  changes: MemoryChanges;
}

export type DreamOutcome =
  | (DreamRunInfo & {
      kind: 'skipped';
      gate: DreamGate;
      reason: string;
      hoursSinceLast?: number;
      sessions?: number;
      nextScanAt?: string;
    })
  | (DreamRunInfo & { kind: 'lock_blocked'; reason: string; holder: LockHolder })
  | (DreamRunInfo & Attempted & { kind: 'completed'; memoriesChanged: number; indexLines: number | null; fork: DreamForkSummary })
  | (DreamRunInfo & Attempted & { kind: 'timed_out'; fork?: DreamForkSummary; error: string })
  | (DreamRunInfo & Attempted & { kind: 'errored'; fork?: DreamForkSummary; error: string })
  | (DreamRunInfo & Attempted & { kind: 'escape_audit_failed'; fork?: DreamForkSummary; escapes: PathEscapeReport[]; error: string });

export type DreamOutcomeKind = DreamOutcome['kind'];

/** Outcomes after which the "last consolidated" time is rolled back. */
export function isFailedAttempt(o: DreamOutcome): o is Extract<DreamOutcome, { kind: 'timed_out' | 'errored' | 'escape_audit_failed' }> {
  return o.kind === 'timed_out' || o.kind === 'errored' || o.kind === 'escape_audit_failed';
}

export function forkSummaryOf(result: ForkResult, runId: string): DreamForkSummary {
  return {
    agentId: result.agentId,
    runId,
    status: result.status,
    stopReason: result.stopReason,
    turns: result.turns,
    toolUses: result.toolUses,
    usage: result.usage,
    durationMs: result.durationMs,
    text: result.text.slice(0, 2000),
  };
}

/** How the consolidation fork ended, as the workflow observed it. */
export type ForkEnd =
  /** It returned a result (completed, killed or timed out by its own timer). */
  | { kind: 'returned'; result: ForkResult }
  /** It failed with a ForkFailed result (provider error, escape audit, ...). */
  | { kind: 'failed'; result: ForkResult }
  /** The server timed it out (its execution timeout: it made no progress). */
  | { kind: 'server_timeout'; message: string }
  /** Anything else: terminated, invalid input, ... */
  | { kind: 'lost'; message: string };

/** What the outcome of a fork end is, before the dream's own audit has a say. */
export type ForkVerdict =
  | { kind: 'completed' }
  | { kind: 'timed_out'; error: string }
  | { kind: 'errored'; error: string }
  | { kind: 'escape_audit_failed'; error: string };

/**
 * Classifies a fork end. The dream's re-audit of the touched paths can still turn
 * `completed` into `escape_audit_failed` (see the workflow).
 */
export function verdictOf(end: ForkEnd): ForkVerdict {
  switch (end.kind) {
    case 'returned':
      if (end.result.status === 'completed') return { kind: 'completed' };
      if (end.result.status === 'timeout') return { kind: 'timed_out', error: 'the consolidation fork reached its timeout' };
      return { kind: 'errored', error: end.result.status === 'killed' ? 'the consolidation fork was cancelled' : (end.result.error ?? `the fork ended ${end.result.status}`) };
    case 'failed':
      if (end.result.stopReason === 'escape_audit_failed') return { kind: 'escape_audit_failed', error: end.result.error ?? 'escape audit failed' };
      return { kind: 'errored', error: end.result.error ?? 'the consolidation fork failed' };
    case 'server_timeout':
      return { kind: 'timed_out', error: end.message };
    case 'lost':
      return { kind: 'errored', error: end.message };
  }
}

/** Number of memory files created, updated or removed. */
export function countChanges(c: MemoryChanges): number {
  return c.created.length + c.updated.length + c.removed.length;
}
