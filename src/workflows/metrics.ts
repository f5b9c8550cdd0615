/**
 * forkflow's metrics emitted from workflow code (names and meanings: src/shared/wire/metrics.ts).
 *
 * Deterministic-safe by construction: the SDK's workflow `metricMeter` drops every value
 * recorded while the workflow is replaying (it checks `workflowInfo().unsafe.isReplaying`,
 * and its sink is not called during replay), and emitting never touches workflow state or
 * history. So a fork replayed on another worker, or for a query, is not counted twice.
 * Values leave the sandbox through the SDK's metrics sink and reach the worker's meter.
 *
 * Metric objects are created per call rather than cached in module state: creating one in
 * the sandbox is a plain object, and the worker side caches the real instruments.
 */
import { metricMeter } from '@temporalio/workflow';
import { totalTokens, type Usage } from '../shared/messages-api/anthropic';
import {
  FORKFLOW_METRICS as M,
  toolLabel,
  type ApprovalDecision,
  type CompactionTokenKind,
  type ForkEndState,
  type ToolCallOutcome,
} from '../shared/wire/metrics';

function count(spec: { name: string; description: string }, labels: Record<string, string>): void {
  metricMeter.createCounter(spec.name, undefined, spec.description).add(1, labels);
}

/**
 * A fork started (call once its input is valid).
 *
 * @example forkStarted(input.forkLabel)
 */
export function forkStarted(forkLabel: string): void {
  count(M.forksStarted, { fork_label: forkLabel });
}

/**
 * A fork reached its terminal state: counts it and records how long the run took.
 *
 * @param durationMs run start to terminal state, from workflow time (`workflowNow()`).
 */
export function forkEnded(forkLabel: string, state: ForkEndState, durationMs: number): void {
  const labels = { fork_label: forkLabel, state };
  count(M.forksEnded, labels);
  metricMeter
    .createHistogram(M.forkDuration.name, 'float', M.forkDuration.unit, M.forkDuration.description)
    .record(Math.max(0, durationMs) / 1000, labels);
}

/**
 * One tool call of the model, by its final outcome: `denied` when the fork's filter or budget
 * refused it, `error` when it ran and failed (an `is_error` result or a failed activity),
 * `ok` otherwise. Cancellation is not an outcome: the fork's end state records it.
 */
export function toolCalled(tool: string, outcome: ToolCallOutcome): void {
  count(M.toolCalls, { tool: toolLabel(tool), outcome });
}

/** A model call missed the cache it should have hit (any turn; src/shared/prefix/cache-break.ts); `reason` as diagnosed. */
export function cacheBroke(reason: string): void {
  count(M.cacheBreaks, { reason });
}

/** An agent's context was compacted; `usage`: what summarising cost (counted as `spent` tokens). */
export function compacted(by: 'forkflow' | 'provider', reason: string, usage: Usage): void {
  count(M.compactions, { by, reason });
  compactionTokens('spent', totalTokens(usage));
}

/** Tokens of context management: `spent` summarising, or `saved` (input a request did not send because of compactions). */
export function compactionTokens(kind: CompactionTokenKind, tokens: number): void {
  if (tokens <= 0) return;
  metricMeter.createCounter(M.compactionTokens.name, undefined, M.compactionTokens.description).add(Math.floor(tokens), { kind });
}

/**
 * A tool call now waits for an operator's approval. Every call must be matched by exactly one
 * {@link approvalDecided} — including when the wait ends by timeout or cancellation — or the
 * pending figure (requested − decided) drifts.
 */
export function approvalRequested(tool: string): void {
  count(M.approvalsRequested, { tool: toolLabel(tool) });
}

/** An approval wait ended: an operator decided, it expired, or the fork was cancelled meanwhile. */
export function approvalDecided(tool: string, decision: ApprovalDecision): void {
  count(M.approvalsDecided, { tool: toolLabel(tool), decision });
}
