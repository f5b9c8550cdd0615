/**
 * How long a model call keeps trying (src/activities/model/errors.ts): a busy provider (429,
 * 529, a mid-stream overload) is waited out at every attempt; other retryable errors give up
 * after MODEL_ATTEMPTS; errors a retry cannot fix never retry.
 */
import { APIError } from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { capAttempts, classifyModelError, isBusy, MODEL_ATTEMPTS } from '../../../src/activities/model/errors';

const apiError = (status: number | undefined, type: string, headers: Record<string, string> = {}) =>
  APIError.generate(status, { type: 'error', error: { type, message: `${type} happened` } }, undefined, new Headers(headers));

test('429 and 529 are retried at any attempt, with the provider retry-after as the next delay', () => {
  for (const [status, type] of [[429, 'rate_limit_error'], [529, 'overloaded_error']] as const) {
    const failure = classifyModelError(apiError(status, type, { 'retry-after': '7' }));
    expect(isBusy(failure)).toBe(true);
    const late = capAttempts(failure, MODEL_ATTEMPTS * 50);
    expect(late.nonRetryable).toBe(false);
    expect(late.nextRetryDelay).toBe(7000);
  }
});

test('a mid-stream overloaded_error counts as busy; another stream error does not', () => {
  // The SDK raises a stream's `event: error` as an APIError without an HTTP status.
  const midStream = (type: string) => new APIError(undefined, { type: 'error', error: { type, message: `${type} happened` } }, `${type} happened`, new Headers());
  expect(isBusy(classifyModelError(midStream('overloaded_error')))).toBe(true);
  expect(isBusy(classifyModelError(midStream('api_error')))).toBe(false);
});

test('a server error retries until MODEL_ATTEMPTS, then gives up naming the count', () => {
  const failure = classifyModelError(apiError(500, 'api_error'));
  expect(capAttempts(failure, MODEL_ATTEMPTS - 1).nonRetryable).toBe(false);
  const last = capAttempts(failure, MODEL_ATTEMPTS);
  expect(last.nonRetryable).toBe(true);
  expect(last.type).toBe('ModelServerError');
  expect(last.message).toContain(`gave up after ${MODEL_ATTEMPTS} attempts`);
});

test('an invalid request never retries, at any attempt', () => {
  const failure = classifyModelError(apiError(400, 'invalid_request_error'));
  expect(capAttempts(failure, 1).nonRetryable).toBe(true);
  expect(capAttempts(ApplicationFailure.nonRetryable('x', 'ModelInvalidRequest'), 1).nonRetryable).toBe(true);
});
