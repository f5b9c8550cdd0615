/**
 * forkflow's own Prometheus metrics, in one place: name, kind, labels, unit and meaning of
 * every `forkflow_…` series. Workflow-side emission lives in src/workflows/metrics.ts,
 * activity-side in src/activities/metrics.ts; `forkflow top` and the README read this table.
 *
 * All of them go through the Temporal SDK's `MetricMeter` and come out of the worker's
 * Prometheus endpoint next to Temporal's own `temporal_…` series (src/worker/runtime.ts).
 * Every series also carries the SDK's tags: `namespace`, `taskQueue`, and `workflowType`
 * (workflow side) or `activityType` (activity side).
 */
import { isSubAgentTool } from '../tree/agent-tools';
import { isBuiltinTool } from '../tools/schemas';
import type { TerminalStatus } from './status';

export type ForkflowMetricKind = 'counter' | 'histogram';

export interface MetricSpec {
  /** The exposed name (counters end in `_total` by Prometheus convention; the SDK adds no suffix). */
  readonly name: string;
  readonly kind: ForkflowMetricKind;
  /** forkflow's labels (the SDK's tags come on top). */
  readonly labels: readonly string[];
  /** Where it is emitted: workflow code (once, never on replay) or an activity (once per attempt). */
  readonly emittedBy: 'workflow' | 'activity';
  readonly unit?: string;
  readonly description: string;
  /** Histogram bucket bounds, in `unit` (the SDK's defaults suit milliseconds only). */
  readonly buckets?: readonly number[];
}

/** The catalogue. Keys are what code uses; `name` is what Prometheus shows. */
export const FORKFLOW_METRICS = {
  forksStarted: {
    name: 'forkflow_forks_started_total',
    kind: 'counter',
    labels: ['fork_label'],
    emittedBy: 'workflow',
    description: 'Forks whose workflow started with a valid input.',
  },
  forksEnded: {
    name: 'forkflow_forks_ended_total',
    kind: 'counter',
    labels: ['fork_label', 'state'],
    emittedBy: 'workflow',
    description: 'Forks that reached a terminal state (state: completed, failed, killed, timeout).',
  },
  forkDuration: {
    name: 'forkflow_fork_duration_seconds',
    kind: 'histogram',
    labels: ['fork_label', 'state'],
    emittedBy: 'workflow',
    unit: 's',
    description: 'Wall time from a fork workflow run start to its terminal state.',
    buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
  },
  modelCalls: {
    name: 'forkflow_model_calls_total',
    kind: 'counter',
    labels: ['model', 'provider', 'outcome', 'error_type'],
    emittedBy: 'activity',
    description: 'Model API calls, one per activity attempt (provider: the configured provider it went to; outcome: ok, error, cancelled; error_type: the failure type, on errors only).',
  },
  modelTokens: {
    name: 'forkflow_model_tokens_total',
    kind: 'counter',
    labels: ['model', 'provider', 'kind'],
    emittedBy: 'activity',
    description: "Tokens reported by the provider on successful model calls (kind: input, output, cache_read, cache_creation; a provider's cache-read share is its cache_read over input + cache_read + cache_creation).",
  },
  modelBatchTokens: {
    name: 'forkflow_model_batch_tokens_total',
    kind: 'counter',
    labels: ['model', 'provider', 'kind'],
    emittedBy: 'activity',
    description: "The part of forkflow_model_tokens_total delivered by a provider's batch interface (delivery batch: Message Batches, or an OpenAI-compatible Batch API), billed at half price (kind as there).",
  },
  toolCalls: {
    name: 'forkflow_tool_calls_total',
    kind: 'counter',
    labels: ['tool', 'outcome'],
    emittedBy: 'workflow',
    description: 'Tool calls the model made, after retries (outcome: ok, error, denied; tool "unknown" for names forkflow does not define).',
  },
  cacheBreaks: {
    name: 'forkflow_cache_breaks_total',
    kind: 'counter',
    labels: ['reason'],
    emittedBy: 'workflow',
    description: "Model calls that missed the cache they should have hit: a fork's first call its parent's prefix, any later call its own previous request (reason: what changed, TTL expired, or expired / unknown).",
  },
  compactions: {
    name: 'forkflow_compactions_total',
    kind: 'counter',
    labels: ['by', 'reason'],
    emittedBy: 'workflow',
    description: "Compactions of an agent's context (by: forkflow, provider; reason: threshold, prompt-too-long, over-threshold, provider).",
  },
  compactionTokens: {
    name: 'forkflow_compaction_tokens_total',
    kind: 'counter',
    labels: ['kind'],
    emittedBy: 'workflow',
    description: 'Tokens of context management (kind: spent, what summarising read and wrote; saved, input tokens later requests did not send because of a compaction).',
  },
  approvalsRequested: {
    name: 'forkflow_approvals_requested_total',
    kind: 'counter',
    labels: ['tool'],
    emittedBy: 'workflow',
    description: 'Tool calls that asked an operator for approval. Pending = requested - decided.',
  },
  approvalsDecided: {
    name: 'forkflow_approvals_decided_total',
    kind: 'counter',
    labels: ['tool', 'decision'],
    emittedBy: 'workflow',
    description: 'Approval requests that ended (decision: approved, denied, expired, cancelled).',
  },
} as const satisfies Record<string, MetricSpec>;

export type ForkflowMetricKey = keyof typeof FORKFLOW_METRICS;

/** Label values, as unions so a typo is a compile error rather than a new series. */
export type ForkEndState = TerminalStatus;
export type ModelCallOutcome = 'ok' | 'error' | 'cancelled';
export type TokenKind = 'input' | 'output' | 'cache_read' | 'cache_creation';
export type ToolCallOutcome = 'ok' | 'error' | 'denied';
export type ApprovalDecision = 'approved' | 'denied' | 'expired' | 'cancelled';
export type CompactionTokenKind = 'spent' | 'saved';

export const TOKEN_KINDS: readonly TokenKind[] = ['input', 'output', 'cache_read', 'cache_creation'];

/**
 * The `tool` label of a tool call. The model may name any tool; only forkflow's own tool names
 * (built-in and sub-agent tools) become label values, so a made-up name cannot create a new
 * series per call.
 */
export function toolLabel(name: string): string {
  return isBuiltinTool(name) || isSubAgentTool(name) ? name : 'unknown';
}

/** Histogram bucket overrides for the Prometheus exporter, by exposed name. */
export function histogramBuckets(): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const spec of Object.values(FORKFLOW_METRICS) as readonly MetricSpec[]) {
    if (spec.buckets) out[spec.name] = [...spec.buckets];
  }
  return out;
}
