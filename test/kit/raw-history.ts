/**
 * A run's history as the server stores it: read over raw gRPC, so external-storage
 * references stay references (the SDK client's fetchHistory resolves them), for tests and
 * benchmarks that measure what history holds.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

type Payload = temporal.api.common.v1.IPayload;

export interface RawHistory {
  events: temporal.api.history.v1.IHistoryEvent[];
  /** Encoded size of the whole history. */
  bytes: number;
}

/**
 * `maximumPageSize` (events per page; default the server's) keeps each page under gRPC's 4 MB
 * message limit for histories whose events carry whole conversations (bench:peer's peer).
 */
export async function rawHistory(client: Client, workflowId: string, runId?: string, opts: { maximumPageSize?: number } = {}): Promise<RawHistory> {
  const events: temporal.api.history.v1.IHistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const res = await client.workflowService.getWorkflowExecutionHistory({ namespace: client.options.namespace, execution: { workflowId, runId }, nextPageToken, maximumPageSize: opts.maximumPageSize });
    events.push(...(res.history?.events ?? []));
    nextPageToken = res.nextPageToken?.length ? res.nextPageToken : undefined;
  } while (nextPageToken);
  return { events, bytes: temporal.api.history.v1.History.encode({ events }).finish().length };
}

/** Every payload anywhere in the events (a walk over the decoded messages). */
export function payloadsOf(value: unknown, out: Payload[] = []): Payload[] {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return out;
  if (Array.isArray(value)) {
    for (const v of value) payloadsOf(v, out);
    return out;
  }
  const o = value as Record<string, unknown>;
  if (o.data instanceof Uint8Array && o.metadata && typeof o.metadata === 'object') {
    out.push(o);
    return out;
  }
  for (const v of Object.values(o)) payloadsOf(v, out);
  return out;
}

/** The encoded size of the largest payload the history holds inline. */
export function largestPayload(history: RawHistory): number {
  return Math.max(0, ...payloadsOf(history.events).map((p) => temporal.api.common.v1.Payload.encode(p).finish().length));
}

/** How many payloads are external-storage references. */
export function referenceCount(history: RawHistory): number {
  const type = (p: Payload) => new TextDecoder().decode(p.metadata?.messageType ?? new Uint8Array());
  return payloadsOf(history.events).filter((p) => type(p) === 'temporal.api.sdk.v1.ExternalStorageReference').length;
}

/** History bytes plus the bytes its references stand for: what the run recorded, wherever it lives. */
export function recordedBytes(history: RawHistory): number {
  const referenced = payloadsOf(history.events).flatMap((p) => p.externalPayloads ?? []).reduce((n, d) => n + Number(d.sizeBytes ?? 0), 0);
  return history.bytes + referenced;
}
