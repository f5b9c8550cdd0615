/**
 * Where activities get a run's conversation and request context: from the workflow itself,
 * through queries answered from its state, with a per-worker cache. Activity inputs carry
 * only a reference, so each message is recorded in history once (ARCHITECTURE.md,
 * "History must grow linearly"). A run's conversation is append-only, so (runId, count)
 * names a prefix exactly and cached prefixes never go stale.
 */
import type { Client } from '@temporalio/client';
import type { MessageParam } from '../shared/anthropic';
import type { RunRef } from '../shared/activity-io';
import { messagesQuery, requestContextQuery, type RequestContext } from '../shared/messages';

class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }
}

export interface ConversationStats {
  queries: number;
  messagesFetched: number;
}

export class ConversationSource {
  private readonly contexts = new Lru<RequestContext>(128);
  private readonly conversations = new Lru<MessageParam[]>(256);
  private readonly inflight = new Map<string, Promise<MessageParam[]>>();
  readonly stats: ConversationStats = { queries: 0, messagesFetched: 0 };

  constructor(private readonly client: Client) {}

  private handle(run: RunRef) {
    return this.client.workflow.getHandle(run.workflowId, run.runId);
  }

  /** The run's request context, cached by its hash (`contextKey`). */
  async context(run: RunRef, contextKey: string): Promise<RequestContext> {
    const cached = this.contexts.get(contextKey);
    if (cached) return cached;
    this.stats.queries++;
    const context = await this.handle(run).query(requestContextQuery);
    this.contexts.set(contextKey, context);
    return context;
  }

  /** Messages [0, count) of the run's conversation; only the part not cached is fetched. */
  async messages(run: RunRef, count: number): Promise<MessageParam[]> {
    const key = `${run.workflowId}/${run.runId}`;
    // One fetch per run at a time: parallel tool activities of one round share it.
    const pending = this.inflight.get(key);
    if (pending) await pending.catch(() => undefined);
    const cached = this.conversations.get(key) ?? [];
    if (cached.length >= count) return cached.slice(0, count);
    const fetching = this.fetchFrom(run, cached, count);
    this.inflight.set(key, fetching);
    try {
      const all = await fetching;
      this.conversations.set(key, all);
      return all.slice(0, count);
    } finally {
      this.inflight.delete(key);
    }
  }

  private async fetchFrom(run: RunRef, cached: MessageParam[], count: number): Promise<MessageParam[]> {
    const all = cached.slice();
    while (all.length < count) {
      this.stats.queries++;
      const page = await this.handle(run).query(messagesQuery, { from: all.length, to: count });
      if (page.from !== all.length || page.messages.length === 0) {
        throw new Error(`conversation of ${run.workflowId} has ${page.total} messages; ${count} were expected`);
      }
      all.push(...page.messages);
      this.stats.messagesFetched += page.messages.length;
    }
    return all;
  }
}
