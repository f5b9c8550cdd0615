/**
 * `stream()`: an agent's live events (issue 15) as an async iterator. It reads them with the
 * fork workflow's `streamRead` query, which nothing records: watching an agent adds nothing to
 * its history (src/shared/streams/stream-events.ts). Each event is parsed with the shared zod
 * schemas; the iterator ends after `done`, when the agent's run has closed without one
 * (terminated), or when `signal` aborts. A subscriber that lost its connection resumes with
 * `fromSeq: lastSeq + 1`. When the agent continues as new, the rest of the old run is read
 * (by its run id) before the new one, and so is every run between them: a run can start and
 * close between two reads.
 */
import { QueryNotRegisteredError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { streamReadQuery } from '../shared/wire/messages';
import { parseStreamEvent, STREAM_READ_MAX_BACKOFF_MS, type StreamEvent, type StreamReadResult } from '../shared/streams/stream-events';
import { ForkflowError } from './errors';

export interface StreamOptions {
  /** The first seq wanted (default 0: everything the agent's current run still holds). */
  fromSeq?: number;
  /** Ends the iteration (quietly) when aborted. */
  signal?: AbortSignal;
  /**
   * Pause between two reads that found nothing new (default 50 ms). A read is a query: it
   * costs the agent's worker an activation, and its history nothing.
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

/** The agent's workflow could not be read for this long without a break: the stream gives up. */
const GIVE_UP_MS = 120_000;
/** While nothing new arrives, whether the run has closed is checked this often. */
const CLOSED_CHECK_MS = 1_000;

const ABORTED = Symbol('aborted');
/** At most this many runs are followed from the one being read to the newest (a bound, not a limit met in practice). */
const MAX_RUNS_FOLLOWED = 10_000;

/** The run a closed run continued as, from its close event; undefined when it did not continue. */
async function continuedAs(temporal: Client, workflowId: string, runId: string): Promise<string | undefined> {
  const res = await temporal.workflowService.getWorkflowExecutionHistory({
    namespace: temporal.options.namespace,
    execution: { workflowId, runId },
    historyEventFilterType: proto.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT,
  });
  return res.history?.events?.[0]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId || undefined;
}

export async function* streamEvents(temporal: Client, agentId: string, opts: StreamOptions = {}): AsyncGenerator<StreamEvent, void, undefined> {
  const { signal } = opts;
  const cooldown = opts.pollCooldownMs ?? 50;
  const aborted = new Promise<typeof ABORTED>((resolve) => {
    if (signal?.aborted) resolve(ABORTED);
    signal?.addEventListener('abort', () => resolve(ABORTED), { once: true });
  });
  const pause = (ms: number) =>
    new Promise<void | typeof ABORTED>((resolve) => {
      if (signal?.aborted) return resolve(ABORTED);
      const onAbort = () => {
        clearTimeout(timer);
        resolve(ABORTED);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });

  let from = opts.fromSeq ?? 0;
  /** The run being read; undefined until the first answer. */
  let runId: string | undefined;
  let failingSince: number | undefined;
  let backoff = 100;
  let idleSince = Date.now();

  /** One read, retried while the workflow cannot be reached (a worker restarting, the server away). */
  const read = async (run: string | undefined): Promise<StreamReadResult | typeof ABORTED> => {
    for (;;) {
      try {
        const handle = temporal.workflow.getHandle(agentId, run);
        const result = await Promise.race([handle.query(streamReadQuery, { fromSeq: from, now: Date.now() }), aborted]);
        failingSince = undefined;
        backoff = 100;
        return result;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) throw new ForkflowError(`No agent ${agentId} to stream: ${err.message}`);
        if (err instanceof QueryNotRegisteredError) throw new ForkflowError(`Agent ${agentId} runs workflow code without stream reads (streamRead): ${err.message}`);
        failingSince ??= Date.now();
        if (Date.now() - failingSince > GIVE_UP_MS) throw err;
        if ((await pause(backoff)) === ABORTED) return ABORTED;
        backoff = Math.min(backoff * 2, STREAM_READ_MAX_BACKOFF_MS);
      }
    }
  };

  /** Parses and yields one answer's events past `from`; true when `done` came. */
  function* deliver(result: StreamReadResult): Generator<StreamEvent, boolean, undefined> {
    for (const item of result.events) {
      const seq = typeof item.seq === 'number' ? item.seq : -1;
      if (seq < from) continue;
      let event: StreamEvent;
      try {
        event = parseStreamEvent(item, seq);
      } catch (err) {
        throw new StreamEventError(agentId, seq, err instanceof Error ? err.message.slice(0, 500) : String(err));
      }
      from = seq + 1;
      yield event;
      if (event.type === 'done') return true;
    }
    return false;
  }

  for (;;) {
    const result = await read(undefined);
    if (result === ABORTED) return;
    if (runId !== undefined && result.runId !== runId) {
      // A new run (continue-as-new): first whatever of the old one is still unread, then each
      // run it continued as, up to the newest.
      let run: string | undefined = runId;
      for (let followed = 0; run !== undefined && run !== result.runId && followed < MAX_RUNS_FOLLOWED; followed++) {
        for (;;) {
          const rest = await read(run);
          if (rest === ABORTED) return;
          if (yield* deliver(rest)) return;
          if (!rest.more) break;
        }
        run = await continuedAs(temporal, agentId, run);
      }
    }
    runId = result.runId;
    const before = from;
    if (yield* deliver(result)) return;
    if (result.more) continue;
    if (from !== before) idleSince = Date.now();
    else if (Date.now() - idleSince >= CLOSED_CHECK_MS) {
      idleSince = Date.now();
      // A run that ends without `done` (terminated, timed out) would be read forever.
      const { status } = await temporal.workflow.getHandle(agentId, runId).describe();
      if (status.name !== 'RUNNING' && status.name !== 'CONTINUED_AS_NEW') {
        const last = await read(runId);
        if (last === ABORTED) return;
        yield* deliver(last);
        return;
      }
    }
    if ((await pause(cooldown)) === ABORTED) return;
  }
}
