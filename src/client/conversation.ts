/**
 * Reads a run's conversation a page at a time (each page under ~1 MiB, or one larger
 * message that external storage carries as a reference), following prefixes held by
 * reference to the runs that recorded them (a fork of a snapshot, a resumed agent).
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { MessageParam } from '../shared/messages-api/anthropic';
import { messagesQuery, pageBytesFor, prefixRefQuery, transcriptPageQuery } from '../shared/wire/messages';
import { prefixRefSchema, type PrefixRef } from '../shared/prefix/prefix';

export interface ReadOptions {
  /** Read messages [0, count) only. */
  count?: number;
  /**
   * `transcript` asks the run itself with `transcriptPage`, which it refuses under
   * skipTranscript; prefixes held elsewhere are read with `messages` (what activities use).
   */
  query?: 'transcript' | 'messages';
  /** Runs each page's query (e.g. through an outage guard, so one page is retried, not the read). */
  each?: <T>(read: () => Promise<T>) => Promise<T>;
}

/** The run's conversation as pages of messages, in order, from the first. */
export async function* conversationPages(client: Client, run: { workflowId: string; runId?: string }, opts: ReadOptions = {}): AsyncGenerator<MessageParam[]> {
  const handle = client.workflow.getHandle(run.workflowId, run.runId);
  let total = opts.count ?? Number.MAX_SAFE_INTEGER;
  let at = 0;
  while (at < total) {
    const range = { from: at, to: total, maxBytes: pageBytesFor(client) };
    const each = opts.each ?? ((read) => read());
    const page = await each(() => (opts.query === 'transcript' ? handle.query(transcriptPageQuery, range) : handle.query(messagesQuery, range)));
    total = Math.min(total, page.total);
    if (page.prefix && at < page.prefix.count) {
      let seen = 0;
      for await (const prefixPage of conversationPages(client, page.prefix.run, { count: page.prefix.count, ...(opts.each ? { each: opts.each } : {}) })) {
        // Only the part not read yet.
        const fresh = prefixPage.slice(Math.max(0, at - seen));
        seen += prefixPage.length;
        at += fresh.length;
        if (fresh.length) yield fresh;
      }
      if (at < page.prefix.count) throw new Error(`the prefix of ${run.workflowId} held by ${page.prefix.run.workflowId} has ${at} messages; ${page.prefix.count} were expected`);
      continue;
    }
    if (page.messages.length === 0) break;
    at += page.messages.length;
    yield page.messages;
  }
}

export async function readConversation(client: Client, run: { workflowId: string; runId?: string }, count?: number): Promise<MessageParam[]> {
  const out: MessageParam[] = [];
  for await (const page of conversationPages(client, run, count !== undefined ? { count } : {})) out.push(...page);
  return out;
}

/**
 * Where an agent's conversation ends, for forks by reference. A finished agent's result
 * carries it (the same reference its query gives): one lookup of the run's last event,
 * where a query to a closed run replays the whole run first (seconds for a long agent).
 * A running agent, or a run without it in its result (failed), answers the query.
 */
export async function prefixRefFrom(handle: WorkflowHandle): Promise<PrefixRef> {
  const carried = (await handle.describe()).status.name === 'COMPLETED' ? carriedPrefixRef(await handle.result()) : undefined;
  return carried ?? handle.query(prefixRefQuery);
}

/** The prefix reference a fork's result carries (`conversation`), if it is one. */
export function carriedPrefixRef(result: unknown): PrefixRef | undefined {
  const carried = prefixRefSchema.safeParse((result as { conversation?: unknown } | undefined)?.conversation);
  return carried.success ? carried.data : undefined;
}
