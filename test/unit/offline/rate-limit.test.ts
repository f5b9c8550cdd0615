/**
 * The offline model's provider rate limit (src/offline/rate-limit.ts): a sliding window of
 * admitted Messages requests; over it, 429 `rate_limit_error` with `retry-after` naming when
 * a request would be admitted. The clock is the model's own, so the test moves it.
 */
import { startOfflineModel } from '../../../src/offline';
import { RateLimiter } from '../../../src/offline/rate-limit';
import { apiError, ask, clientFor, errorOf } from './helpers';

test('a sliding window: the limit admits, refuses with the wait until the oldest leaves, and admits again', () => {
  let now = 1_000;
  const limiter = new RateLimiter({ requests: 2, perMs: 10_000 }, () => now);
  expect(limiter.take()).toEqual({ admitted: true });
  now += 4_000;
  expect(limiter.take()).toEqual({ admitted: true });
  now += 1_000;
  expect(limiter.take()).toEqual({ admitted: false, retryAfterMs: 5_000 });
  now += 5_000;
  expect(limiter.take()).toEqual({ admitted: true });
  expect(limiter.take()).toEqual({ admitted: false, retryAfterMs: 4_000 });
  expect(limiter.rejections).toBe(2);
});

test('bad limits are refused', () => {
  expect(() => new RateLimiter({ requests: 0, perMs: 1000 }, Date.now)).toThrow();
  expect(() => new RateLimiter({ requests: 1, perMs: -1 }, Date.now)).toThrow();
});

test('over the limit, the API answers 429 rate_limit_error with retry-after in whole seconds, and logs it rejected', async () => {
  let now = 50_000;
  const model = await startOfflineModel({ now: () => now, rateLimit: { requests: 2, perMs: 60_000 } });
  try {
    const client = clientFor(model);
    await client.messages.create(ask('@reply one'));
    await client.messages.create(ask('@reply two'));
    now += 30_500;
    const err = await apiError(client.messages.create(ask('@reply three')));
    expect(err.status).toBe(429);
    expect(err.headers?.get('retry-after')).toBe('30');
    expect(errorOf(err).type).toBe('rate_limit_error');
    expect(model.log.entries()[2]).toMatchObject({ status: 429, outcome: 'rejected' });
    now += 29_500;
    expect((await client.messages.create(ask('@reply three'))).content).toEqual([{ type: 'text', text: 'three' }]);
  } finally {
    await model.close();
  }
});
