/**
 * An agent's timeline: its current run's history (fetched with the client, as the Web UI reads
 * it) mapped to agent-level spans by src/client/timeline-spans.ts. The only payloads decoded
 * are the events' summaries (`turn 3 · Grep`), with the client's own data converter (so an
 * encrypted namespace reads the same); inputs, results and signal arguments stay undecoded.
 * An agent started with skipTranscript gets labels without content (see mapHistory).
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError, type Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { decodeRecorded } from '../payloads/stored';
import { AgentNotFoundError } from './errors';
import { isHidden } from './rows';
import { mapHistory, type SpanCounts, type TimelineMark, type TimelineSpan } from './timeline-spans';

export type { Lane, SpanCounts, SpanKind, SpanOutcome, TimelineMark, TimelineSpan } from './timeline-spans';

/** An agent's current run as `ForkflowClient.timeline` returns it. */
export interface AgentTimeline {
  agentId: string;
  /** The run drawn: the agent's current one. */
  runId: string;
  /** Temporal's status of the run (RUNNING, COMPLETED, CONTINUED_AS_NEW, …). */
  status: string;
  /** This run continues an earlier one of its chain (continue-as-new), which is not drawn. */
  continued: boolean;
  /** Started with skipTranscript: labels name tools and models, never content. */
  hidden: boolean;
  /** Epoch ms: the run's start, its end (absent while open), and the server's now (where open spans end). */
  start: number;
  end?: number;
  now: number;
  /** Ordered by start. */
  spans: TimelineSpan[];
  marks: TimelineMark[];
  counts: SpanCounts;
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Each event's summary (user metadata), decoded as the client's converter would; one that cannot be read is left out. */
async function summariesOf(client: Client, events: HistoryEvent[]): Promise<Map<string, string>> {
  const withSummary = events.filter((e) => e.userMetadata?.summary?.data);
  const converter = client.options.loadedDataConverter;
  const payloads = withSummary.map((e) => e.userMetadata!.summary as Payload);
  const decoded = await decodeRecorded(payloads, converter).catch(() => undefined);
  const out = new Map<string, string>();
  decoded?.forEach((p, i) => {
    try {
      const text: unknown = converter.payloadConverter.fromPayload(p);
      if (typeof text === 'string') out.set(String(withSummary[i]!.eventId), text);
    } catch {
      // An undecodable summary (a key this client lacks): the span keeps its activity type.
    }
  });
  return out;
}

/** The agent's current run (or `runId`) as spans and marks. */
export async function timelineOf(client: Client, agentId: string, opts: { runId?: string; now?: number } = {}): Promise<AgentTimeline> {
  const handle = client.workflow.getHandle(agentId, opts.runId);
  let description;
  try {
    description = await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new AgentNotFoundError(agentId);
    throw err;
  }
  const runId = description.runId;
  const events = (await client.workflow.getHandle(agentId, runId).fetchHistory()).events ?? [];
  const hidden = isHidden(description);
  const now = opts.now ?? Date.now();
  const mapped = mapHistory(events, await summariesOf(client, events), { hidden, now });
  const continued = Boolean(events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId) || description.raw.workflowExecutionInfo?.firstRunId !== runId;
  return { agentId, runId, status: description.status.name, continued, hidden, now, ...mapped };
}
