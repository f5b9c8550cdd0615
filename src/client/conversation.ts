/**
 * Reads a run's whole conversation through the `messages` query, following prefixes held by
 * reference to the runs that recorded them (a fork of a snapshot, a resumed agent).
 */
import type { Client } from '@temporalio/client';
import type { MessageParam } from '../shared/anthropic';
import { messagesQuery } from '../shared/messages';

export async function readConversation(client: Client, run: { workflowId: string; runId?: string }, count?: number): Promise<MessageParam[]> {
  const handle = client.workflow.getHandle(run.workflowId, run.runId);
  const out: MessageParam[] = [];
  let total = count ?? Number.MAX_SAFE_INTEGER;
  while (out.length < total) {
    const page = await handle.query(messagesQuery, { from: out.length, to: total });
    total = Math.min(total, page.total);
    if (page.prefix && out.length < page.prefix.count) {
      out.push(...(await readConversation(client, page.prefix.run, page.prefix.count)).slice(out.length));
      continue;
    }
    if (page.messages.length === 0) break;
    out.push(...page.messages);
  }
  return out;
}
