/**
 * An MCP server's progress notifications on the agent's live stream (`tool-progress`), sent
 * by the `streamLive` query with the call's lane (src/shared/streams/stream-events.ts), so nothing
 * of it reaches history. Sent only while someone watches (asked once, then again at most
 * once a second); one query in flight at a time, the newest progress replacing any older
 * one waiting. Progress never fails a call: a query that fails stops the progress, no more.
 */
import { Context } from '@temporalio/activity';
import { streamLiveQuery, streamWatchedQuery } from '../../shared/wire/messages';
import { MAX_LIVE_ATTEMPT, TOOL_PROGRESS_PER_ATTEMPT, type PublishedStreamEvent } from '../../shared/streams/stream-events';

const WATCH_CHECK_MS = 1_000;

export interface ProgressCall {
  agentId: string;
  turn: number;
  toolUseId: string;
  name: string;
  lane: number;
  attempt: number;
}

export class ProgressSender {
  private sent = 0;
  private waiting?: PublishedStreamEvent;
  private busy = false;
  private failed = false;
  private watched?: boolean;
  private lastAsked = 0;

  private constructor(
    private readonly call: ProgressCall,
    private readonly live: (input: { turn: number; attempt: number; lane: number; from: number; events: PublishedStreamEvent[] }) => Promise<unknown>,
    private readonly isWatched: () => Promise<boolean>,
  ) {}

  /** A sender for this activity's call, or undefined when it cannot send (no lane, no workflow, too many attempts). */
  static open(call: ProgressCall): ProgressSender | undefined {
    if (call.lane < 1 || call.lane > MAX_LIVE_ATTEMPT || call.attempt * TOOL_PROGRESS_PER_ATTEMPT > 16_384) return undefined;
    try {
      const ctx = Context.current();
      const execution = ctx.info.workflowExecution;
      if (!execution) return undefined;
      const handle = ctx.client.workflow.getHandle(execution.workflowId, execution.runId);
      return new ProgressSender(
        call,
        (input) => handle.query(streamLiveQuery, input),
        () => handle.query(streamWatchedQuery, { now: Date.now() }),
      );
    } catch {
      return undefined;
    }
  }

  /** One progress notification (`progress` rising, `total` if known). */
  progress(p: { progress: number; total?: number; message?: string }): void {
    if (this.failed) return;
    this.waiting = {
      v: 1,
      type: 'tool-progress',
      agentId: this.call.agentId,
      turn: this.call.turn,
      attempt: this.call.attempt,
      toolUseId: this.call.toolUseId,
      name: this.call.name,
      progress: p.progress,
      ...(p.total !== undefined ? { total: p.total } : {}),
      ...(p.message ? { message: p.message.slice(0, 2_000) } : {}),
    };
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.busy || !this.waiting || this.failed) return;
    this.busy = true;
    try {
      if (this.watched !== true && Date.now() - this.lastAsked >= WATCH_CHECK_MS) {
        this.lastAsked = Date.now();
        this.watched = await this.isWatched().catch(() => false);
      }
      const event = this.waiting;
      if (!this.watched || !event || this.sent >= TOOL_PROGRESS_PER_ATTEMPT) return;
      this.waiting = undefined;
      const from = (this.call.attempt - 1) * TOOL_PROGRESS_PER_ATTEMPT + this.sent;
      this.sent++;
      await this.live({ turn: this.call.turn, attempt: this.call.attempt, lane: this.call.lane, from, events: [event] });
    } catch {
      this.failed = true;
    } finally {
      this.busy = false;
    }
    if (this.waiting && this.watched) void this.pump();
  }
}
