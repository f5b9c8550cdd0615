/**
 * The stream endpoint's wire format: one Server-Sent Event per stream event, its `id` the
 * event's seq, so the browser's EventSource sends it back as `Last-Event-ID` when it
 * reconnects and the relay resumes right after it (src/cli/web/params.ts, `resumeSeq`).
 */
import type { StreamEvent } from '../../shared/streams/stream-events';

/** Where the relay reads an agent's events (ForkflowClient.stream, or a test's source). */
export type StreamSource = (agentId: string, opts: { fromSeq?: number; signal?: AbortSignal }) => AsyncIterable<StreamEvent>;

/**
 * One event as an SSE frame. JSON.stringify escapes every newline inside strings, so the
 * data is one line and model text cannot start a field of its own (`id:`, `event:`).
 */
export function sseFrame(event: StreamEvent): string {
  return `id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`;
}
