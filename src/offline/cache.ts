/**
 * The emulated prompt cache. Given a flattened request it decides how many input tokens
 * are read from the cache, written to it (by TTL) or sent uncached, following the
 * accounting rules in ANTHROPIC-API.md, and keeps the entries with their expiry times.
 *
 * Writes are two-phase: `plan` records them as pending, and they become readable only
 * when `commit` is called as the writing request's response begins. Identical requests
 * that arrive before that all miss, as on the real API.
 */
import type { CacheTtl, FlatRequest } from './flatten';

/** How far back from a breakpoint a read looks for an existing entry, in blocks. */
export const LOOKBACK_BLOCKS = 20;

const TTL_MS: Readonly<Record<CacheTtl, number>> = { '5m': 5 * 60_000, '1h': 60 * 60_000 };

/**
 * Minimum cacheable prefix per model family: a breakpoint whose prefix is shorter writes
 * nothing. Sources disagree on the exact figures; these follow the design notes.
 */
export function defaultMinCacheableTokens(model: string): number {
  const m = model.toLowerCase();
  if (/opus-4-[56]|haiku-4-5/.test(m)) return 4096;
  if (/3-haiku|3-5-haiku|haiku-3/.test(m)) return 2048;
  return 1024;
}

/** Input-token split of one request. `read + creation5m + creation1h + input` = total. */
export interface CacheAccounting {
  input: number;
  read: number;
  creation5m: number;
  creation1h: number;
}

/** Pending writes of one request, to `commit` or `release`. */
export interface CacheTicket {
  readonly owner: number;
  readonly keys: readonly string[];
}

interface Entry {
  ttlMs: number;
  expiresAt: number;
  ready: boolean;
  /** Requests whose pending write created or joined this entry. */
  writers: Set<number>;
}

export class PromptCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number) {}

  /**
   * Accounts one request and records its writes as pending for `owner` (a request seq).
   * Reads refresh the entry they hit.
   */
  plan(flat: FlatRequest, minTokens: number, owner: number): { accounting: CacheAccounting; ticket: CacheTicket } {
    const now = this.now();
    this.sweep(now);
    // readEnd: number of leading blocks served from the cache.
    let readEnd = 0;
    let hitKey: string | undefined;
    for (const bp of flat.breakpoints) {
      for (let p = bp.index; p >= Math.max(0, bp.index - LOOKBACK_BLOCKS + 1) && p + 1 > readEnd; p--) {
        const key = flat.keys[p] as string;
        if (this.readable(key, now)) {
          readEnd = p + 1;
          hitKey = key;
          break;
        }
      }
    }
    if (hitKey) {
      const e = this.entries.get(hitKey) as Entry;
      e.expiresAt = now + e.ttlMs;
    }

    const read = readEnd === 0 ? 0 : (flat.cumulative[readEnd - 1] as number);
    const accounting: CacheAccounting = { input: 0, read, creation5m: 0, creation1h: 0 };
    const keys: string[] = [];
    let covered = read;
    for (const bp of flat.breakpoints) {
      const upTo = flat.cumulative[bp.index] as number;
      // Already read, or too short to be cached: its tokens fold into the next write.
      if (bp.index < readEnd || upTo < minTokens) continue;
      if (bp.ttl === '1h') accounting.creation1h += upTo - covered;
      else accounting.creation5m += upTo - covered;
      covered = upTo;
      const key = flat.keys[bp.index] as string;
      this.addPendingWrite(key, TTL_MS[bp.ttl], owner, now);
      keys.push(key);
    }
    accounting.input = flat.totalTokens - covered;
    return { accounting, ticket: { owner, keys } };
  }

  /** The writing request's response has begun: its entries become readable. */
  commit(ticket: CacheTicket): void {
    const now = this.now();
    for (const key of ticket.keys) {
      const e = this.entries.get(key);
      if (!e) continue;
      e.writers.delete(ticket.owner);
      e.ready = true;
      e.expiresAt = Math.max(e.expiresAt, now + e.ttlMs);
    }
  }

  /** The request ended before its response began: forget its pending writes. */
  release(ticket: CacheTicket): void {
    for (const key of ticket.keys) {
      const e = this.entries.get(key);
      if (!e || e.ready) continue;
      e.writers.delete(ticket.owner);
      if (e.writers.size === 0) this.entries.delete(key);
    }
  }

  clear(): void {
    this.entries.clear();
  }

  /** Number of readable (committed, unexpired) entries. */
  size(): number {
    return this.stats().ready;
  }

  /** Readable entries, and writes still waiting for their response to begin. */
  stats(): { ready: number; pending: number } {
    const now = this.now();
    let ready = 0;
    let pending = 0;
    for (const [key, e] of [...this.entries]) {
      if (!e.ready) pending++;
      else if (this.readable(key, now)) ready++;
    }
    return { ready, pending };
  }

  /** Drops expired entries, so a long-running server does not keep dead prefixes. */
  private sweep(now: number): void {
    for (const [key, e] of [...this.entries]) if (e.ready && e.expiresAt <= now) this.entries.delete(key);
  }

  private readable(key: string, now: number): boolean {
    const e = this.entries.get(key);
    if (!e || !e.ready) return false;
    if (e.expiresAt <= now) {
      this.entries.delete(key);
      return false;
    }
    return true;
  }

  private addPendingWrite(key: string, ttlMs: number, owner: number, now: number): void {
    const e = this.entries.get(key);
    if (e && !e.ready) {
      // Another in-flight request is writing the same prefix: both pay for the write.
      e.writers.add(owner);
      e.ttlMs = Math.max(e.ttlMs, ttlMs);
      return;
    }
    // Absent, or expired (readable() already dropped live ready ones from consideration).
    this.entries.set(key, { ttlMs, expiresAt: now + ttlMs, ready: false, writers: new Set([owner]) });
  }
}
