/**
 * The offline model's clock: what its prompt cache and request log call "now". Tests move it
 * two ways, both honest about what they claim:
 * - `advance(ms)`: a jump, for a wait nobody has to see (the cache just ages);
 * - `scale`: emulated time runs `scale` times faster than the base clock, for a wait in which
 *   something must happen on time (a keep-alive timer of a worker told the same scale).
 */
export interface ClockOptions {
  /** The clock underneath, in ms. Default `Date.now`. */
  base?: () => number;
  /** Emulated ms per base ms (≥ 1). Default 1. */
  scale?: number;
}

export class OfflineClock {
  readonly scale: number;
  private readonly base: () => number;
  private readonly origin: number;
  private offset = 0;

  constructor(opts: ClockOptions = {}) {
    const scale = opts.scale ?? 1;
    if (!(Number.isFinite(scale) && scale >= 1)) throw new RangeError(`clock scale must be a finite number ≥ 1, got ${scale}`);
    this.scale = scale;
    this.base = opts.base ?? (() => Date.now());
    this.origin = this.base();
  }

  /** Emulated time in ms. */
  now(): number {
    return this.origin + (this.base() - this.origin) * this.scale + this.offset;
  }

  /** Moves emulated time forward by `ms` (never back: cache entries would come back to life). */
  advance(ms: number): number {
    if (!(Number.isFinite(ms) && ms >= 0)) throw new RangeError(`the clock only moves forward: advance(${ms})`);
    this.offset += ms;
    return this.now();
  }
}
