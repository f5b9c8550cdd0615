/**
 * forkflow's metrics emitted from activities (names and meanings: src/shared/wire/metrics.ts):
 * model calls and the tokens they used. Counted here rather than in the workflow because
 * the activity sees every attempt — a rate-limited attempt that Temporal retries is a call
 * the provider answered, and tokens are billed per successful call even if the worker dies
 * before the workflow records the result.
 *
 * Values go through the activity context's `metricMeter`, which the worker ties to the
 * runtime's exporter and tags with namespace, task queue and activity type.
 */
import { CancelledFailure, Context } from '@temporalio/activity';
import { ApplicationFailure, type MetricMeter } from '@temporalio/common';
import type { Usage } from '../shared/messages-api/anthropic';
import { FORKFLOW_METRICS as M, type ModelCallOutcome, type TokenKind } from '../shared/wire/metrics';
import { DEFAULT_PROVIDER } from '../shared/providers/model-allowlist';

/** The meter of the running activity; callers outside an activity (tests) pass their own. */
function currentMeter(): MetricMeter {
  return Context.current().metricMeter;
}

function tokensByKind(u: Usage): [TokenKind, number][] {
  return [
    ['input', u.inputTokens],
    ['output', u.outputTokens],
    ['cache_read', u.cacheReadInputTokens],
    ['cache_creation', u.cacheCreationInputTokens],
  ];
}

/** Where a call went: the provider named in its input (absent: the worker's default client, `anthropic`), and the meter. */
export interface ModelCallLabels {
  provider?: string;
  meter?: MetricMeter;
}

/**
 * A model call that returned a message: one `ok` call and its tokens by kind, by model and
 * provider (a provider's cache-read share is its `cache_read` over all its input kinds).
 *
 * @param model the model the request named (not the response's, so that ok and error
 *   series of one model share a label value).
 * @example recordModelSuccess(context.model, result.usage, { provider: input.provider })
 */
export function recordModelSuccess(model: string, usage: Usage, opts: ModelCallLabels = {}): void {
  const meter = opts.meter ?? currentMeter();
  const provider = opts.provider ?? DEFAULT_PROVIDER;
  meter.createCounter(M.modelCalls.name, undefined, M.modelCalls.description).add(1, { model, provider, outcome: 'ok' });
  const tokens = meter.createCounter(M.modelTokens.name, undefined, M.modelTokens.description);
  for (const [kind, n] of tokensByKind(usage)) {
    // Zero is still added so every kind has a series from the first call on (dashboards, `top`).
    tokens.add(Math.max(0, Math.floor(n)), { model, provider, kind });
  }
  if (!usage.batch) return;
  // The batched part (half price): `top` prices what it saved.
  const batched = meter.createCounter(M.modelBatchTokens.name, undefined, M.modelBatchTokens.description);
  for (const [kind, n] of tokensByKind(usage.batch)) batched.add(Math.max(0, Math.floor(n)), { model, provider, kind });
}

/** What a failed attempt counts as: cancelled, or an error of the failure's type. */
export function modelFailureOutcome(err: unknown): { outcome: ModelCallOutcome; errorType?: string } {
  if (err instanceof CancelledFailure) return { outcome: 'cancelled' };
  if (err instanceof ApplicationFailure) return { outcome: 'error', errorType: err.type ?? 'ApplicationFailure' };
  return { outcome: 'error', errorType: err instanceof Error ? err.name : 'unknown' };
}

/**
 * A model call attempt that ended without a message. Pass the failure the activity is about
 * to throw (after classification), so `error_type` is the type Temporal records.
 *
 * @example
 * const failure = classifyModelError(err);
 * recordModelFailure(context.model, failure, { provider: input.provider });
 * throw failure;
 */
export function recordModelFailure(model: string, failure: unknown, opts: ModelCallLabels = {}): void {
  const meter = opts.meter ?? currentMeter();
  const { outcome, errorType } = modelFailureOutcome(failure);
  const provider = opts.provider ?? DEFAULT_PROVIDER;
  const labels: Record<string, string> = errorType ? { model, provider, outcome, error_type: errorType } : { model, provider, outcome };
  meter.createCounter(M.modelCalls.name, undefined, M.modelCalls.description).add(1, labels);
}
