/**
 * Provider errors → Temporal failures. Temporal owns retries (the SDK client runs with
 * maxRetries 0): transient errors are retryable with the provider's `retry-after` as the
 * next delay; errors that a retry cannot fix are non-retryable and carry the provider's
 * own message, so the fork fails with something a person can act on. A prompt over the
 * context window gets a type of its own (`ModelPromptTooLong`): the workflow answers it by
 * compacting the conversation and calling once more.
 */
import { APIConnectionError, APIError } from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { CONTEXT_FAILURE } from '../../shared/context/call';
import { parsePromptTooLong } from '../../shared/context/windows';
import { isOutage, MODEL_UNAVAILABLE_FAILURE } from '../../shared/providers/failover';

const NON_RETRYABLE = new Set([400, 401, 403, 404, 413, 422]);

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'ModelInvalidRequest',
  401: 'ModelAuthentication',
  403: 'ModelPermission',
  404: 'ModelNotFound',
  408: 'ModelTimeout',
  409: 'ModelConflict',
  413: 'ModelRequestTooLarge',
  422: 'ModelUnprocessable',
  429: 'ModelRateLimited',
  504: 'ModelTimeout',
  529: 'ModelOverloaded',
};

/** Seconds or an HTTP date in `retry-after`, or milliseconds in `retry-after-ms`. */
export function retryDelayMs(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const raw = headers.get('retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

interface ErrorBody {
  error?: { type?: string; message?: string };
  request_id?: string;
}

/** The parsed error body, if the provider sent one of the documented shape. */
function errorBody(err: APIError): ErrorBody | undefined {
  const raw: unknown = err.error;
  return raw !== null && typeof raw === 'object' ? raw : undefined;
}

/** The provider's own words, not the SDK's `400 {json}` rendering. */
export function providerMessage(err: APIError): string {
  const message = errorBody(err)?.error?.message;
  return typeof message === 'string' ? message : err.message;
}

export function classifyModelError(err: unknown): ApplicationFailure {
  if (err instanceof APIConnectionError) {
    return ApplicationFailure.create({ type: 'ModelConnectionError', message: `Could not reach the model API: ${err.message}`, cause: err });
  }
  if (err instanceof APIError) {
    return classifyApiError(err as APIError);
  }
  if (err instanceof ApplicationFailure) return err;
  const message = err instanceof Error ? err.message : String(err);
  return ApplicationFailure.create({ type: 'ModelCallError', message, cause: err instanceof Error ? err : undefined });
}

function classifyApiError(err: APIError): ApplicationFailure {
  const body = errorBody(err);
  const details = [{ status: err.status ?? null, errorType: body?.error?.type ?? null, requestId: body?.request_id ?? err.requestID ?? null }];
  const message = providerMessage(err);
  // A mid-stream `event: error` has no HTTP status; its body says what it was (e.g. overloaded).
  if (err.status === undefined) {
    return ApplicationFailure.create({ type: 'ModelStreamError', message: `${body?.error?.type ?? 'stream error'}: ${message}`, details });
  }
  // Over the context window: not retried as it is; the workflow compacts and calls again (src/workflows/fork/compaction.ts).
  const tooLong = err.status === 400 ? parsePromptTooLong(message) : undefined;
  if (tooLong) return ApplicationFailure.create({ type: CONTEXT_FAILURE.promptTooLong, message, nonRetryable: true, details: [{ ...details[0], ...tooLong }] });
  const type = TYPE_BY_STATUS[err.status] ?? (err.status >= 500 ? 'ModelServerError' : 'ModelError');
  if (NON_RETRYABLE.has(err.status)) {
    return ApplicationFailure.create({ type, message, nonRetryable: true, details });
  }
  const delay = retryDelayMs(err.headers);
  return ApplicationFailure.create({ type, message, details, ...(delay !== undefined ? { nextRetryDelay: delay } : {}) });
}

/**
 * Attempts a model call gets for errors a retry may fix but a wait does not promise to:
 * server errors, a dropped connection. Rate limits and overload (429, 529, a mid-stream
 * `overloaded_error`) are retried without a limit, at the provider's `retry-after` or the
 * retry policy's backoff: a provider that is busy for a long time slows the tree down and
 * never fails a fork. The retry policy itself has no attempt limit (src/workflows/activities.ts).
 */
export const MODEL_ATTEMPTS = 10;

export function isBusy(failure: ApplicationFailure): boolean {
  return failure.type === 'ModelRateLimited' || failure.type === 'ModelOverloaded' || (failure.type === 'ModelStreamError' && failure.message.startsWith('overloaded_error'));
}

/**
 * The failure to throw from attempt `attempt`: non-retryable once a non-busy error used up its
 * attempts. A call with a fallback (`failover`) gives up on an outage after `afterAttempts`,
 * as {@link MODEL_UNAVAILABLE_FAILURE}, for the workflow to move it (src/shared/providers/failover.ts).
 */
export function capAttempts(failure: ApplicationFailure, attempt: number, failover?: { afterAttempts: number; provider?: string; model: string }): ApplicationFailure {
  if (failover && !failure.nonRetryable && isOutage(failure) && attempt >= failover.afterAttempts) {
    return ApplicationFailure.create({
      type: MODEL_UNAVAILABLE_FAILURE,
      message: `${failover.provider ? `${failover.provider} (${failover.model})` : failover.model} unavailable after ${attempt} attempts: ${failure.message}`,
      nonRetryable: true,
      details: [{ ...(failure.details?.[0] ?? {}), cause: failure.type ?? null }],
    });
  }
  if (failure.nonRetryable || isBusy(failure) || attempt < MODEL_ATTEMPTS) return failure;
  return ApplicationFailure.create({ type: failure.type ?? undefined, message: `${failure.message} (gave up after ${attempt} attempts)`, nonRetryable: true, details: failure.details ?? undefined });
}
