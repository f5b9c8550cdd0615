/**
 * Where activities get a run's conversation and request context: from the workflow itself,
 * through queries answered from its state, with a per-worker cache. Activity inputs carry
 * only a reference, so each message is recorded in history once (ARCHITECTURE.md,
 * "History must grow linearly").
 *
 * The common turn needs no query at all: this worker remembers the assistant message it
 * returned last turn, the workflow sends the small turn-boundary message inline, and the
 * chained digest in the input proves the assembled copy exact. Anything that does not
 * verify (another worker ran last turn, a retry produced a different reply) falls back to
 * the query. A prefix or context held by a recorded snapshot is read from the snapshot's
 * history instead (src/activities/snapshot-inputs.ts), verified the same way.
 */
import type { Client } from '@temporalio/client';
import type { MessageParam } from '../shared/messages-api/anthropic';
import type { ModelCallInput } from '../shared/wire/activity-io';
import type { RunRef } from '../shared/prefix/prefix';
import { chainDigest, EMPTY_DIGEST, hashJson } from '../shared/base/hash';
import { openingFromRecipe } from '../shared/prefix/fork-messages';
import { messagesQuery, pageBytesFor, requestContextQuery, type RequestContext } from '../shared/wire/messages';
import { snapshotContext } from '../shared/prefix/snapshot';
import { Lru } from './lru';
import { SnapshotInputs, type ReadStartInput } from './snapshot-inputs';

interface CachedRun {
  messages: MessageParam[];
  /** digests[i] = chained digest of messages [0, i]. */
  digests: string[];
  /** This worker's own model reply at `index`, not yet confirmed by the workflow. */
  pending?: { index: number; message: MessageParam };
  /** About how much memory `messages` holds (their JSON length): what the cache is bounded by. */
  bytes: number;
}

/**
 * Bounds of the per-worker caches. Runs: every fork a worker is running needs its entry, or
 * each of its turns costs a conversation query (which waits for a workflow task: under load
 * those time out). So the count is generous and memory is bounded by bytes instead; entries
 * of finished runs age out under that bound.
 */
export interface ConversationCacheLimits {
  /** Runs whose conversation is kept (default 4096). */
  maxRuns?: number;
  /** Total JSON length of the kept conversations (default 256 MB). */
  maxBytes?: number;
  /** Request contexts kept, by cache key (default 512; forks of one parent share one). */
  maxContexts?: number;
}

const DEFAULT_LIMITS: Required<ConversationCacheLimits> = { maxRuns: 4096, maxBytes: 256 * 1024 * 1024, maxContexts: 512 };

export interface ConversationStats {
  queries: number;
  messagesFetched: number;
  /** Model calls whose conversation was assembled locally and verified, without a query. */
  localHits: number;
  /** Snapshot prefixes and contexts read from the snapshot's history instead of by a query. */
  snapshotReads: number;
}

function digestAt(run: CachedRun, count: number): string {
  return count === 0 ? EMPTY_DIGEST : run.digests[count - 1]!;
}

function appendVerified(run: CachedRun, messages: MessageParam[]): void {
  for (const m of messages) {
    run.digests.push(chainDigest(digestAt(run, run.messages.length), m));
    run.messages.push(m);
    run.bytes += JSON.stringify(m).length;
  }
}

const emptyRun = (): CachedRun => ({ messages: [], digests: [], bytes: 0 });

export class ConversationSource {
  private readonly contexts: Lru<RequestContext>;
  private readonly runs: Lru<CachedRun>;
  private readonly inflight = new Map<string, Promise<unknown>>();
  private readonly contextQueries = new Map<string, Promise<RequestContext>>();
  private readonly snapshots?: SnapshotInputs;
  readonly stats: ConversationStats = { queries: 0, messagesFetched: 0, localHits: 0, snapshotReads: 0 };

  /** Without `readStartInput`, snapshots are asked by query like any other run. */
  constructor(
    private readonly client: Client,
    limits: ConversationCacheLimits = {},
    readStartInput?: ReadStartInput,
  ) {
    const l = { ...DEFAULT_LIMITS, ...limits };
    this.contexts = new Lru<RequestContext>(l.maxContexts);
    this.runs = new Lru<CachedRun>(l.maxRuns, { of: (run) => run.bytes, max: l.maxBytes });
    if (readStartInput) this.snapshots = new SnapshotInputs(readStartInput);
  }

  /** How many runs' conversations this worker holds, and their size. */
  cacheSize(): { runs: number; bytes: number } {
    return { runs: this.runs.size, bytes: this.runs.totalWeight };
  }

  /** Stores the entry again after it grew, so the cache's byte bound sees its new size. */
  private reweigh(run: RunRef, entry: CachedRun): void {
    this.runs.set(`${run.workflowId}/${run.runId}`, entry);
  }

  private handle(run: RunRef) {
    return this.client.workflow.getHandle(run.workflowId, run.runId);
  }

  private cached(run: RunRef): CachedRun {
    const key = `${run.workflowId}/${run.runId}`;
    let entry = this.runs.get(key);
    if (!entry) {
      entry = emptyRun();
      this.runs.set(key, entry);
    }
    return entry;
  }

  /**
   * The run's request context, cached by its hash (`contextKey`). Concurrent first calls share
   * one query: siblings started together must not each replay the run that holds it.
   */
  async context(run: RunRef, contextKey: string): Promise<RequestContext> {
    const cached = this.contexts.get(contextKey);
    if (cached) return cached;
    let pending = this.contextQueries.get(contextKey);
    if (!pending) {
      pending = this.fetchContext(run, contextKey);
      this.contextQueries.set(contextKey, pending);
    }
    try {
      const context = await pending;
      this.contexts.set(contextKey, context);
      return context;
    } finally {
      this.contextQueries.delete(contextKey);
    }
  }

  private async fetchContext(run: RunRef, contextKey: string): Promise<RequestContext> {
    const snapshot = await this.snapshots?.of(run);
    if (snapshot) {
      const context = snapshotContext(snapshot);
      if (hashJson(context) === contextKey) {
        this.stats.snapshotReads++;
        return context;
      }
    }
    this.stats.queries++;
    return this.handle(run).query(requestContextQuery);
  }

  /** Remembers this worker's model reply, which the workflow will append at `index`. */
  remember(run: RunRef, index: number, message: MessageParam): void {
    this.cached(run).pending = { index, message };
  }

  /** The conversation a model call covers, verified against its digest. */
  async forModelCall(input: ModelCallInput): Promise<MessageParam[]> {
    const entry = this.cached(input.run);
    if (input.prefix && entry.messages.length < input.prefix.count) await this.seedPrefix(input.run, entry, input.prefix);
    const local = this.assemble(entry, input, tailOf(input));
    if (local) {
      this.reweigh(input.run, entry);
      this.stats.localHits++;
      return local;
    }
    return this.messages(input.run, input.messageCount, input.digest);
  }

  /**
   * Starts a run's cached conversation with a prefix held by another run (fetched once per
   * worker and shared by every sibling that references it).
   */
  private async seedPrefix(run: RunRef, entry: CachedRun, prefix: { run: RunRef; count: number; digest: string }): Promise<void> {
    const owner = this.cached(prefix.run);
    const messages = await this.messages(prefix.run, prefix.count, prefix.digest);
    if (entry.messages.length >= prefix.count) return;
    entry.messages = messages.slice();
    entry.digests = owner.digests.slice(0, prefix.count);
    // Counted in full although the owner's entry shares the objects: the bound stays an upper one.
    entry.bytes = messages.reduce((n, m) => n + JSON.stringify(m).length, 0);
    this.reweigh(run, entry);
  }

  private assemble(entry: CachedRun, input: ModelCallInput, tail: ModelCallInput['tail']): MessageParam[] | undefined {
    const candidate: MessageParam[] = [];
    let length = entry.messages.length;
    if (length > input.messageCount) return undefined;
    if (entry.pending?.index === length && length < input.messageCount) {
      candidate.push(entry.pending.message);
      length++;
    }
    if (tail && tail.from === length) {
      candidate.push(...tail.messages);
      length += tail.messages.length;
    }
    if (length !== input.messageCount) return undefined;
    let digest = digestAt(entry, entry.messages.length);
    for (const m of candidate) digest = chainDigest(digest, m);
    if (digest !== input.digest) return undefined;
    appendVerified(entry, candidate);
    entry.pending = undefined;
    return entry.messages.slice(0, input.messageCount);
  }

  /** Messages [0, count) of the run's conversation; only the part not cached is fetched. */
  async messages(run: RunRef, count: number, expectedDigest?: string): Promise<MessageParam[]> {
    const key = `${run.workflowId}/${run.runId}`;
    // One fetch per run at a time: parallel tool activities of one round share it.
    const pending = this.inflight.get(key);
    if (pending) await pending.catch(() => undefined);
    const entry = this.cached(run);
    if (entry.messages.length < count) {
      const fetching = this.fetchInto(run, entry, count, expectedDigest);
      this.inflight.set(key, fetching);
      try {
        await fetching;
      } finally {
        this.inflight.delete(key);
      }
    }
    if (expectedDigest !== undefined && digestAt(entry, count) !== expectedDigest) {
      // A cached copy that no longer matches the workflow is dropped, never used.
      this.runs.set(key, emptyRun());
      throw new Error(`conversation of ${run.workflowId} does not match its digest at ${count} messages; refetching on retry`);
    }
    return entry.messages.slice(0, count);
  }

  /**
   * Messages up to `count` from the run's snapshot input, when the run is a snapshot and they
   * match `expectedDigest`; false, with nothing changed, otherwise.
   */
  private async fillFromSnapshot(run: RunRef, entry: CachedRun, count: number, expectedDigest: string): Promise<boolean> {
    const snapshot = await this.snapshots?.of(run);
    const from = entry.messages.length;
    if (!snapshot || snapshot.messages.length < count || from >= count) return false;
    const added = snapshot.messages.slice(from, count);
    const digests: string[] = [];
    let digest = digestAt(entry, from);
    for (const m of added) digests.push((digest = chainDigest(digest, m)));
    if (digest !== expectedDigest || entry.messages.length !== from) return false;
    entry.messages.push(...added);
    entry.digests.push(...digests);
    entry.bytes += added.reduce((n, m) => n + JSON.stringify(m).length, 0);
    this.reweigh(run, entry);
    this.stats.snapshotReads++;
    return true;
  }

  private async fetchInto(run: RunRef, entry: CachedRun, count: number, expectedDigest?: string): Promise<void> {
    if (expectedDigest !== undefined && (await this.fillFromSnapshot(run, entry, count, expectedDigest))) return;
    while (entry.messages.length < count) {
      this.stats.queries++;
      const from = entry.messages.length;
      const page = await this.handle(run).query(messagesQuery, { from, to: count, maxBytes: pageBytesFor(this.client) });
      // This worker's own model call for the run may have assembled more of it meanwhile: go on from there.
      if (entry.messages.length !== from) continue;
      if (page.prefix && entry.messages.length < page.prefix.count) {
        // This run holds its prefix by reference: read that part from its owner.
        await this.seedPrefix(run, entry, page.prefix);
        continue;
      }
      if (page.from !== entry.messages.length || page.messages.length === 0) {
        throw new Error(`conversation of ${run.workflowId} has ${page.total} messages; ${count} were expected`);
      }
      appendVerified(entry, page.messages);
      this.reweigh(run, entry);
      this.stats.messagesFetched += page.messages.length;
    }
  }
}

/** The newest messages the call carries: inline, or a by-reference fork's opening built from its recipe. */
function tailOf(input: ModelCallInput): ModelCallInput['tail'] {
  if (input.tail) return input.tail;
  const recipe = input.openingRecipe;
  return recipe ? { from: recipe.from, messages: openingFromRecipe(recipe) } : undefined;
}
