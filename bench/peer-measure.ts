/**
 * The figures of `npm run bench:peer`, taken the same way for both systems: histories as the
 * server stores them (raw gRPC), and the offline model's own log of the requests it served.
 */
import type { Client } from '@temporalio/client';
import type { RequestLogEntry } from '../src/offline';
import { largestPayload, rawHistory } from '../test/kit/raw-history';
import { median, percentile } from './kit';

export interface SystemFigures {
  wallMs: number;
  /** Model requests of the agent (its turns) and of all its siblings. */
  agentTurns: number;
  siblingRequests: number;
  history: {
    /** The agent's history plus every sibling's. */
    totalBytes: number;
    agentBytes: number;
    agentBytesPerTurn: number;
    siblingBytesMedian: number;
    agentEvents: number;
    eventsPerTurn: number;
    /** The largest payload held inline in any of the histories. */
    largestPayloadBytes: number;
  };
  /**
   * Between one model response's end and the agent's next request (the tool call, the
   * activity and workflow-task round trips, payload conversion): what durability costs per
   * turn, the model's own time left out.
   */
  overheadMs: { median: number; p95: number; max: number };
  /** The model's own time per agent request (received → response ended), left out of the overhead. */
  modelMs: { median: number; p95: number };
  /**
   * Where the wall time went: start → the agent's first model request; the agent's loop
   * (first request → last response); last response → each sibling's first request (median,
   * max: the agent's end, the siblings' start); last response → all siblings done.
   */
  phasesMs: { startToFirstRequest: number; agentLoop: number; siblingFirstRequest: { median: number; max: number }; siblingsDone: number };
  /** cache_read / all input tokens of each sibling's first request. */
  siblingFirstCacheRead: { median: number; min: number };
  tokens: { input: number; cacheCreation: number; cacheRead: number; total: number };
}

const r1 = (n: number) => Math.round(n * 10) / 10;

export async function measureSystem(
  temporal: Client,
  o: { workflowId: string; siblingIds: string[]; log: RequestLogEntry[]; startedAt: number; wallMs: number; siblings: string[] },
): Promise<SystemFigures> {
  const requests = o.log.filter((e) => e.path === '/v1/messages' && e.outcome === 'completed');
  const ofSibling = (e: RequestLogEntry) => o.siblings.findIndex((s) => e.rawBody.includes(JSON.stringify(s.split('\n')[0]).slice(1, -1)));
  const agent = requests.filter((e) => ofSibling(e) < 0).sort((a, b) => a.receivedAt - b.receivedAt);
  const siblingReqs = requests.filter((e) => ofSibling(e) >= 0);
  const gaps = agent.slice(1).map((e, i) => e.receivedAt - agent[i]!.endedAt!);
  const modelTimes = agent.map((e) => e.endedAt! - e.receivedAt);
  const firsts = o.siblings.map((_, i) => siblingReqs.filter((e) => ofSibling(e) === i).sort((a, b) => a.receivedAt - b.receivedAt)[0]);
  if (firsts.some((e) => !e)) throw new Error('a sibling made no model request');
  const shares = firsts.map((e) => {
    const u = e!.usage!;
    const read = u.cache_read_input_tokens ?? 0;
    return read / (u.input_tokens + (u.cache_creation_input_tokens ?? 0) + read);
  });
  const agentEnd = agent[agent.length - 1]!.endedAt!;
  const siblingStarts = firsts.map((e) => e!.receivedAt - agentEnd);
  const tokens = { input: 0, cacheCreation: 0, cacheRead: 0, total: 0 };
  for (const e of requests) {
    tokens.input += e.usage?.input_tokens ?? 0;
    tokens.cacheCreation += e.usage?.cache_creation_input_tokens ?? 0;
    tokens.cacheRead += e.usage?.cache_read_input_tokens ?? 0;
  }
  tokens.total = tokens.input + tokens.cacheCreation + tokens.cacheRead;

  // Small pages: the peer's events each carry a whole conversation (up to ~100 KB at 50 turns).
  const read = (id: string) => rawHistory(temporal, id, undefined, { maximumPageSize: 20 });
  const agentHistory = await read(o.workflowId);
  const siblingHistories = await Promise.all(o.siblingIds.map(read));
  const all = [agentHistory, ...siblingHistories];
  return {
    wallMs: o.wallMs,
    agentTurns: agent.length,
    siblingRequests: siblingReqs.length,
    history: {
      totalBytes: all.reduce((n, h) => n + h.bytes, 0),
      agentBytes: agentHistory.bytes,
      agentBytesPerTurn: Math.round(agentHistory.bytes / agent.length),
      siblingBytesMedian: median(siblingHistories.map((h) => h.bytes)),
      agentEvents: agentHistory.events.length,
      eventsPerTurn: r1(agentHistory.events.length / agent.length),
      largestPayloadBytes: Math.max(...all.map(largestPayload)),
    },
    overheadMs: { median: median(gaps), p95: percentile(gaps, 95), max: Math.max(...gaps) },
    modelMs: { median: median(modelTimes), p95: percentile(modelTimes, 95) },
    phasesMs: {
      startToFirstRequest: agent[0]!.receivedAt - o.startedAt,
      agentLoop: agentEnd - agent[0]!.receivedAt,
      siblingFirstRequest: { median: median(siblingStarts), max: Math.max(...siblingStarts) },
      siblingsDone: o.startedAt + o.wallMs - agentEnd,
    },
    siblingFirstCacheRead: { median: Math.round(median(shares) * 1000) / 1000, min: Math.round(Math.min(...shares) * 1000) / 1000 },
    tokens,
  };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** Rows of the side-by-side table: label, forkflow, peer (with the ratio where it helps). */
export function compareRow(a: SystemFigures, b: SystemFigures): [string, string, string][] {
  const x = (fa: number, fb: number) => (fa > 0 ? ` (${(fb / fa).toFixed(1)}×)` : '');
  return [
    ['history bytes, total', fmt(a.history.totalBytes), `${fmt(b.history.totalBytes)}${x(a.history.totalBytes, b.history.totalBytes)}`],
    ['history bytes, agent', fmt(a.history.agentBytes), `${fmt(b.history.agentBytes)}${x(a.history.agentBytes, b.history.agentBytes)}`],
    ['history bytes per agent turn', fmt(a.history.agentBytesPerTurn), `${fmt(b.history.agentBytesPerTurn)}${x(a.history.agentBytesPerTurn, b.history.agentBytesPerTurn)}`],
    ['history bytes per sibling (median)', fmt(a.history.siblingBytesMedian), `${fmt(b.history.siblingBytesMedian)}${x(a.history.siblingBytesMedian, b.history.siblingBytesMedian)}`],
    ['largest single payload', fmt(a.history.largestPayloadBytes), `${fmt(b.history.largestPayloadBytes)}${x(a.history.largestPayloadBytes, b.history.largestPayloadBytes)}`],
    ['events per agent turn', String(a.history.eventsPerTurn), String(b.history.eventsPerTurn)],
    ['durable overhead per turn, median ms', String(a.overheadMs.median), String(b.overheadMs.median)],
    ['durable overhead per turn, p95 ms', String(a.overheadMs.p95), String(b.overheadMs.p95)],
    ["  (the model's own time per turn, median ms, left out)", String(a.modelMs.median), String(b.modelMs.median)],
    ["cache-read share, siblings' first request (median / min)", `${a.siblingFirstCacheRead.median} / ${a.siblingFirstCacheRead.min}`, `${b.siblingFirstCacheRead.median} / ${b.siblingFirstCacheRead.min}`],
    ['model input tokens (uncached + cache write + cache read)', fmt(a.tokens.total), `${fmt(b.tokens.total)}${x(a.tokens.total, b.tokens.total)}`],
    ['  uncached', fmt(a.tokens.input), fmt(b.tokens.input)],
    ['  cache write', fmt(a.tokens.cacheCreation), fmt(b.tokens.cacheCreation)],
    ['  cache read', fmt(a.tokens.cacheRead), fmt(b.tokens.cacheRead)],
    ['model requests (agent + siblings)', `${a.agentTurns} + ${a.siblingRequests}`, `${b.agentTurns} + ${b.siblingRequests}`],
    ['wall time, ms', fmt(a.wallMs), fmt(b.wallMs)],
    ['  start → first model request', fmt(a.phasesMs.startToFirstRequest), fmt(b.phasesMs.startToFirstRequest)],
    ["  the agent's loop", fmt(a.phasesMs.agentLoop), fmt(b.phasesMs.agentLoop)],
    ["  agent's end → siblings' first request (median / max)", `${fmt(a.phasesMs.siblingFirstRequest.median)} / ${fmt(a.phasesMs.siblingFirstRequest.max)}`, `${fmt(b.phasesMs.siblingFirstRequest.median)} / ${fmt(b.phasesMs.siblingFirstRequest.max)}`],
    ["  agent's end → all siblings done", fmt(a.phasesMs.siblingsDone), fmt(b.phasesMs.siblingsDone)],
  ];
}
