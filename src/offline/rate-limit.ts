/**
 * A provider-side rate limit for the offline model: at most `requests` Messages requests
 * admitted in any `perMs` window (a sliding window, as the real API's limits behave closely
 * enough for tests). A request over the limit gets 429 `rate_limit_error` with `retry-after`
 * (whole seconds, rounded up) saying when the oldest admitted request leaves the window.
 */
import { z } from 'zod';

export const RateLimitOptions = z.strictObject({
  requests: z.number().int().min(1),
  perMs: z.number().int().min(1),
});
export type RateLimitOptions = z.infer<typeof RateLimitOptions>;

export class RateLimiter {
  private readonly admitted: number[] = [];
  private rejected = 0;

  constructor(
    private readonly limit: RateLimitOptions,
    private readonly now: () => number,
  ) {
    RateLimitOptions.parse(limit);
  }

  /** Admits a request now, or says how long until one would be admitted (ms). */
  take(): { admitted: true } | { admitted: false; retryAfterMs: number } {
    const t = this.now();
    while (this.admitted.length > 0 && this.admitted[0]! <= t - this.limit.perMs) this.admitted.shift();
    if (this.admitted.length < this.limit.requests) {
      this.admitted.push(t);
      return { admitted: true };
    }
    this.rejected += 1;
    return { admitted: false, retryAfterMs: this.admitted[0]! + this.limit.perMs - t };
  }

  /** Requests answered 429 so far. */
  get rejections(): number {
    return this.rejected;
  }
}
