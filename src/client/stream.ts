/**
 * `stream()`: an agent's live events (issue 15) as an async iterator, over the fork workflow's
 * `@temporalio/workflow-streams` log. Each item is parsed with the shared zod schemas (its
 * offset becomes `seq`); the iterator ends after `done`, when the agent's run has closed, or
 * when `signal` aborts. A subscriber that lost its connection resumes with
 * `fromSeq: lastSeq + 1`; the package follows continue-as-new on its own.
 */
import type { Client } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { parseStreamEvent, STREAM_TOPIC, type StreamEvent } from '../shared/stream-events';
import { ForkflowError } from './errors';

export interface StreamOptions {
  /** The first seq wanted (default 0: everything the agent's current run still holds). */
  fromSeq?: number;
  /** Ends the iteration (quietly) when aborted. */
  signal?: AbortSignal;
  /**
   * Pause between two polls that returned everything there was (default 50 ms). Each poll is
   * an update in the agent's history: a longer pause batches more events per poll.
   */
  pollCooldownMs?: number;
}

/** An item of the stream that is not a forkflow event (a version this client does not know, or corrupt). */
export class StreamEventError extends ForkflowError {
  override name = 'StreamEventError';
  constructor(
    readonly agentId: string,
    readonly seq: number,
    detail: string,
  ) {
    super(`Stream item ${seq} of agent ${agentId} is not a forkflow event (${detail}); resume with fromSeq: ${seq + 1} to skip it.`);
  }
}

const ABORTED = Symbol('aborted');

export async function* streamEvents(temporal: Client, agentId: string, opts: StreamOptions = {}): AsyncGenerator<StreamEvent, void, undefined> {
  const { signal } = opts;
  if (signal?.aborted) return;
  const items = WorkflowStreamClient.create(temporal, agentId)
    .topic(STREAM_TOPIC)
    .subscribe(opts.fromSeq ?? 0, { pollCooldown: opts.pollCooldownMs ?? 50 });
  // A poll waits in the workflow for the next event: an abort must not wait for it.
  const aborted = new Promise<typeof ABORTED>((resolve) => signal?.addEventListener('abort', () => resolve(ABORTED), { once: true }));
  try {
    for (;;) {
      const next = await Promise.race([items.next(), aborted]);
      if (next === ABORTED || next.done) return;
      let event: StreamEvent;
      try {
        event = parseStreamEvent(next.value.data, next.value.offset);
      } catch (err) {
        throw new StreamEventError(agentId, next.value.offset, err instanceof Error ? err.message.slice(0, 500) : String(err));
      }
      yield event;
      if (event.type === 'done') return;
    }
  } finally {
    // The generator may be parked in a poll; ending it is enough (its pending update is dropped).
    void items.return(undefined).catch(() => undefined);
  }
}
