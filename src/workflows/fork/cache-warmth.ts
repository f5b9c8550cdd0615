/**
 * What a fork knows about keeping its prompt cache warm while it waits (cacheWhileWaiting;
 * the rules are in src/shared/prefix/cache-warmth.ts): its policy, the last model call a keep-alive
 * would repeat, and the waits in progress. This class is the only writer; the turn loop
 * reports each model call, and keep-alive.ts runs the waits.
 */
import type { ModelCallInput, ModelCallResult } from '../../shared/wire/activity-io';
import { CACHE_TTL_MS } from '../../shared/prefix/cache-break';
import { keepAliveDueAt, ttlFor, type CacheWhileWaiting, type CarriedWarmth } from '../../shared/prefix/cache-warmth';

interface LastCall {
  /** The input of the last model call, as a keep-alive repeats it. */
  input: ModelCallInput;
  /** When the latest call of that prefix (the call or a keep-alive) was scheduled, workflow time. */
  scheduledAt: number;
  /** The TTL its cache entries live for, as the worker reports it (or the provider's). */
  ttlMs: number;
}

export class CacheWarmth {
  private last?: LastCall;
  /** Waits in progress (an approval round may wait for several decisions at once). */
  private waits = 0;
  /** Which wait a keep-alive loop belongs to: a loop of an earlier wait stops at its next wake-up. */
  private generation = 0;
  /** The newest keep-alive number handed out in this run. */
  private numbered = 0;

  constructor(readonly policy: CacheWhileWaiting) {}

  /** The TTL a request of this policy marks its breakpoints with, for ModelCallInput.cacheTtl. */
  get cacheTtl(): ModelCallInput['cacheTtl'] {
    return ttlFor(this.policy) === '1h' ? '1h' : undefined;
  }

  /** A model call of the turn loop came back: the prefix a keep-alive would refresh. */
  called(input: ModelCallInput, scheduledAt: number, result: ModelCallResult): void {
    if (this.policy !== 'keep-alive') return;
    // What a keep-alive sends: the same conversation and context; no cache-break facts; in a
    // tree, where to charge it (the number is set when it is sent).
    const { prefixAt: _prefixAt, ...same } = input;
    this.last = { input: same, scheduledAt, ttlMs: ttlMsOf(result) };
  }

  /** A keep-alive came back: the entry was refreshed when it was sent. */
  refreshed(scheduledAt: number, result: ModelCallResult): void {
    if (this.last) this.last = { ...this.last, scheduledAt, ttlMs: ttlMsOf(result) };
  }

  /** What the next run of this agent takes over: the call to keep alive (keep-alive policy only). */
  carry(): CarriedWarmth | undefined {
    return this.policy === 'keep-alive' && this.last ? { ...this.last, input: { ...this.last.input } } : undefined;
  }

  /**
   * Takes over the previous run's last call, so a run that continued while waiting keeps the
   * cache warm through the rest of the wait (its conversation is read from that run).
   */
  adopt(carried: CarriedWarmth | undefined): void {
    if (this.policy === 'keep-alive' && carried) this.last = carried;
  }

  /** When the next keep-alive is due, or undefined when there is nothing to keep. */
  dueAt(): number | undefined {
    return this.last && keepAliveDueAt(this.last.scheduledAt, this.last.ttlMs);
  }

  /**
   * The input of the next keep-alive, numbered over all the agent's runs (`before`: how many
   * earlier runs and this one have recorded), or undefined when there is nothing to keep.
   * Numbers are taken when sent, so two in flight never share one (the ledger charges by it).
   */
  nextKeepAlive(before: number): ModelCallInput | undefined {
    if (!this.last) return undefined;
    this.numbered = Math.max(this.numbered, before) + 1;
    return { ...this.last.input, keepAlive: this.numbered };
  }

  /** Starts a wait; returns the generation of the keep-alive loop to start, if one should. */
  enter(): number | undefined {
    this.waits += 1;
    if (this.waits > 1 || this.policy !== 'keep-alive') return undefined;
    this.generation += 1;
    return this.generation;
  }

  leave(): void {
    this.waits = Math.max(0, this.waits - 1);
  }

  /** Whether the loop of `generation` should go on: its wait is still on. */
  waiting(generation: number): boolean {
    return this.waits > 0 && generation === this.generation;
  }
}

function ttlMsOf(result: ModelCallResult): number {
  return result.ttlMs ?? CACHE_TTL_MS[result.request?.ttl ?? '5m'];
}
