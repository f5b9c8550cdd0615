/**
 * The agent's inbox: messages and task notifications wait here until the next turn
 * boundary, then enter the conversation `now` first, then `next`, then `later`, each in
 * arrival order. Plain JSON state (an array and a counter), so it crosses continue-as-new.
 */
import type { TextBlock } from '../../shared/messages-api/anthropic';
import type { SendMessageArgs } from '../../shared/wire/messages';
import type { Priority, QueuedMessage } from '../../shared/tree/tree-input';
import { isoNow } from '../clock';

const RANK: Record<Priority, number> = { now: 0, next: 1, later: 2 };

/**
 * The inbox part of an agent's state. This class is its only writer: others read `length`
 * and `entries`, and change it only through these methods.
 */
export class Inbox {
  private queued: QueuedMessage[] = [];
  private seq = 0;

  get length(): number {
    return this.queued.length;
  }

  /** What is queued, in arrival order (read-only view). */
  get entries(): readonly QueuedMessage[] {
    return this.queued;
  }

  /** The next sequence number (carried across runs, so order survives continue-as-new). */
  get nextSeq(): number {
    return this.seq;
  }

  enqueue(entry: Omit<QueuedMessage, 'seq' | 'receivedAt'>): QueuedMessage {
    const queued: QueuedMessage = { ...entry, seq: this.seq++, receivedAt: isoNow() };
    this.queued.push(queued);
    return queued;
  }

  /** Takes everything queued, in delivery order, as text blocks. */
  drain(): TextBlock[] {
    return this.take().map((m) => ({ type: 'text', text: m.text }));
  }

  /** Takes everything queued, in delivery order. */
  take(): QueuedMessage[] {
    return this.queued.splice(0).sort((a, b) => RANK[a.priority] - RANK[b.priority] || a.seq - b.seq);
  }

  /** The first typed command not run yet, if any. */
  nextCommand(): QueuedMessage | undefined {
    return this.queued.find((m) => m.kind === 'command');
  }

  /** A command has run: its entry becomes the message the agent reads, in its place in the queue. */
  settleCommand(seq: number, text: string): void {
    this.queued = this.queued.map((m) => (m.seq === seq ? { seq: m.seq, priority: m.priority, kind: 'message' as const, text, ...(m.from ? { from: m.from } : {}), summary: `/${m.command?.name ?? 'command'}`, receivedAt: m.receivedAt } : m));
  }

  /** Drops a task notification that is still queued (its outcome was taken another way). */
  dropNotificationsFor(taskId: string): void {
    this.queued = this.queued.filter((m) => m.taskId !== taskId);
  }

  /** Takes over a previous run's inbox. */
  adopt(entries: QueuedMessage[], seq: number): void {
    this.queued = [...entries];
    this.seq = seq;
  }
}

/** How a queued message reads to the model: who sent it, then the text as sent. */
export function renderQueuedMessage(m: SendMessageArgs): string {
  // An agent's name comes only with its tree's capability (team-inbox.ts): then it is shown with its id.
  const from = m.fromName && m.from ? `${m.fromName} (${m.from})` : m.from;
  const header = [from ? `from ${from}` : undefined, m.data ? 'structured' : undefined, m.summary ? `summary: ${m.summary}` : undefined].filter(Boolean).join(', ');
  return header ? `[message ${header}]\n${m.message}` : m.message;
}
