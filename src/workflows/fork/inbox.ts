/**
 * The agent's inbox: messages and task notifications wait here until the next turn
 * boundary, then enter the conversation `now` first, then `next`, then `later`, each in
 * arrival order. Plain JSON state (an array and a counter), so it crosses continue-as-new.
 */
import type { TextBlock } from '../../shared/anthropic';
import type { SendMessageArgs } from '../../shared/messages';
import type { Priority, QueuedMessage } from '../../shared/tree-input';
import { isoNow } from '../clock';

const RANK: Record<Priority, number> = { now: 0, next: 1, later: 2 };

export interface InboxState {
  inbox: QueuedMessage[];
  inboxSeq: number;
}

export function enqueue(state: InboxState, entry: Omit<QueuedMessage, 'seq' | 'receivedAt'>): QueuedMessage {
  const queued: QueuedMessage = { ...entry, seq: state.inboxSeq++, receivedAt: isoNow() };
  state.inbox.push(queued);
  return queued;
}

/** Takes everything queued, in delivery order, as text blocks. */
export function drain(state: InboxState): TextBlock[] {
  const ordered = state.inbox.splice(0).sort((a, b) => RANK[a.priority] - RANK[b.priority] || a.seq - b.seq);
  return ordered.map((m) => ({ type: 'text', text: m.text }));
}

/** How a queued message reads to the model: who sent it, then the text as sent. */
export function renderQueuedMessage(m: SendMessageArgs): string {
  const header = [m.from ? `from ${m.from}` : undefined, m.summary ? `summary: ${m.summary}` : undefined].filter(Boolean).join(', ');
  return header ? `[message ${header}]\n${m.message}` : m.message;
}
