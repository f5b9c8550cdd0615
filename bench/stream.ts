/**
 * `npm run bench:stream`: what live streams (issue 15) cost and how fast they are, on a dev
 * server with the offline model generating paced output (`@pace`: deltas of ~12 characters):
 *
 * - latency from the offline model writing a text delta to a `stream()` subscriber receiving
 *   it (median and p95), over several forks; the model stamps each SSE event as it writes it;
 * - history bytes of the same 50-turn fork (49 FileWrite calls of ~1.3 KB of generated input,
 *   then a reply) with streaming off (`stream: false`), on with nobody watching, and on with
 *   one subscriber (which must receive live events: the figure is checked against the stream);
 *   with what signals and update events account for (deltas and reads go by query: none).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ForkflowClient } from '../src/client';
import type { StreamEvent } from '../src/shared/streams/stream-events';
import { startDevStack } from '../src/testing/dev-stack';
import { rawHistory, type RawHistory } from '../test/kit/raw-history';
import { median, percentile, printTable } from './kit';

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const words = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');

/** Emitted text per model request: cumulative length after each delta, and when it was written. */
const emitted = new Map<string, { text: string; marks: { end: number; at: number }[] }>();

function onStreamEvent(requestId: string, event: { event: string; data: unknown }, at: number): void {
  const d = event.data as { type?: string; delta?: { type?: string; text?: string } };
  if (d.type !== 'content_block_delta' || d.delta?.type !== 'text_delta') return;
  const e = emitted.get(requestId) ?? { text: '', marks: [] };
  e.text += d.delta.text ?? '';
  e.marks.push({ end: e.text.length, at });
  emitted.set(requestId, e);
}

/** Latencies (ms) of one fork's text deltas: each emitted delta to the first received delta that covers it. */
async function latencies(client: ForkflowClient, agentId: string, text: string): Promise<number[]> {
  // The call waits 1.5 s before it answers: its first look for a subscriber (at its start) may
  // come before the subscription's first poll; the next, a second later, finds it.
  const handle = await client.start({ agentId, prompt: `Write.\n@sleep 1500 @pace 20 @reply ${text}` });
  let received: { end: number; at: number }[] = [];
  let got = '';
  let attempt = 1;
  const types: string[] = [];
  for await (const e of handle.stream()) {
    types.push(e.type);
    if (e.type !== 'text-delta') continue;
    // A retried call (a loaded machine can miss a heartbeat) starts over: time its last attempt.
    if (e.attempt > attempt) [attempt, got, received] = [e.attempt, '', []];
    got += e.text;
    received.push({ end: got.length, at: Date.now() });
  }
  await handle.result();
  const source = [...emitted.values()].filter((e) => e.text === text).at(-1);
  if (!source || got !== text) throw new Error(`bench:stream: ${agentId}: the stream holds ${got.length} of ${text.length} characters of the text${source ? '' : ', the model has no record of it'} (events: ${types.join(' ')})`);
  return source.marks.map((m) => received.find((r) => r.end >= m.end)!.at - m.at);
}

interface HistoryFigures {
  history: RawHistory;
  signals: { count: number; bytes: number };
  updates: { count: number; bytes: number };
  output: number;
  /** Live events (deltas) the subscriber received. */
  live: number;
}

const eventBytes = (h: RawHistory, pick: (e: RawHistory['events'][number]) => boolean) => {
  const events = h.events.filter(pick);
  return { count: events.length, bytes: events.reduce((n, e) => n + JSON.stringify(e).length, 0) };
};

/** The 50-turn fork; `watch`: one subscriber reads its stream throughout. */
async function fiftyTurns(client: ForkflowClient, temporal: ForkflowClient['temporal'], agentId: string, opts: { stream: boolean; watch: boolean }): Promise<HistoryFigures> {
  const content = (i: number) => words(`f${i}-`, 200).slice(0, 1300);
  const steps = Array.from({ length: 49 }, (_, i) => `@pace 10 @tool FileWrite ${JSON.stringify({ file_path: `out-${i % 5}.txt`, content: content(i) })}`);
  const reply = words('end', 40);
  const prompt = ['Fifty turns.', ...steps, `@pace 10 @reply ${reply}`].join('\n');
  const handle = await client.start({ agentId, prompt, maxTurns: 60, budget: { maxTokens: 100_000_000 }, ...(opts.stream ? {} : { stream: false }) });
  const events: StreamEvent[] = [];
  const watching = opts.watch ? (async () => { for await (const e of handle.stream()) events.push(e); })() : Promise.resolve();
  const result = await handle.result();
  await watching;
  if (result.turns !== 50) throw new Error(`bench:stream: ${agentId} took ${result.turns} turns`);
  const history = await rawHistory(temporal, agentId);
  const output = steps.reduce((n, _s, i) => n + JSON.stringify({ file_path: `out-${i % 5}.txt`, content: content(i) }).length, 0) + reply.length;
  const signals = eventBytes(history, (e) => Boolean(e.workflowExecutionSignaledEventAttributes));
  const updates = eventBytes(history, (e) => Boolean(e.workflowExecutionUpdateAcceptedEventAttributes || e.workflowExecutionUpdateCompletedEventAttributes));
  const live = events.filter((e) => e.type === 'text-delta' || e.type === 'tool-input-delta').length;
  if (opts.watch && live === 0) throw new Error(`bench:stream: ${agentId}: the subscriber received no live events`);
  return { history, signals, updates, output, live };
}

async function main(): Promise<void> {
  const workspace = mkdtempSync(join(tmpdir(), 'forkflow-bench-stream-'));
  const stack = await startDevStack({ workspaceRoot: workspace, server: { headless: true, logLevel: 'error' }, offlineModel: { latencyMs: 0, onStreamEvent }, logLevel: 'ERROR' });
  const { client } = stack;
  const temporal = client.temporal;
  const rows: [string, string][] = [];
  try {
    const all: number[] = [];
    for (let i = 0; i < 5; i++) all.push(...(await latencies(client, `bench-stream-latency-${Date.now()}-${i}`, words(`l${i}-`, 150))));
    rows.push(['text deltas timed (5 forks, @pace 20 ms)', String(all.length)]);
    rows.push(['latency model → subscriber, median', `${median(all)} ms`]);
    rows.push(['latency model → subscriber, p95', `${percentile(all, 95)} ms`]);
    rows.push(['latency, max', `${Math.max(...all)} ms`]);

    const stamp = Date.now();
    const off = await fiftyTurns(client, temporal, `bench-stream-off-${stamp}`, { stream: false, watch: false });
    const on = await fiftyTurns(client, temporal, `bench-stream-on-${stamp}`, { stream: true, watch: false });
    const watched = await fiftyTurns(client, temporal, `bench-stream-watched-${stamp}`, { stream: true, watch: true });
    rows.push(['50-turn fork: generated output (tool input + text)', `${fmt(off.output)} B`]);
    for (const [name, f] of [['off', off], ['on, no subscriber', on], ['on, one subscriber', watched]] as const) {
      const extra = f.history.bytes - off.history.bytes;
      rows.push([`history, streaming ${name}`, `${fmt(f.history.bytes)} B, ${f.history.events.length} events${f === off ? '' : ` (+${fmt(extra)} B = ${(extra / off.output).toFixed(2)}× the output)`}`]);
      if (f !== off) rows.push([`  signals / update events (${name})`, `${f.signals.count} signals ${fmt(f.signals.bytes)} B · ${f.updates.count} update events ${fmt(f.updates.bytes)} B (JSON size)`]);
      if (f === watched) rows.push(['  live events the subscriber received (text, tool input)', String(f.live)]);
    }
  } finally {
    await stack.stop();
  }
  printTable('Live streams (offline model, dev server, batch interval 100 ms)', rows);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
