/**
 * An agent's timeline from its history (src/client/timeline-spans.ts), over committed replay
 * fixtures (histories real runs recorded) and a few events made here for what no fixture holds
 * (a batched call, a failover, a run still open). Each span must say what the run did: a model
 * call per turn, tools by name, sub-agents by id, waits, compactions, keep-alives, retries.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { mapHistory, MIN_WAIT_MS, type MappedRun, type TimelineSpan } from '../../../src/client/timeline-spans';
import { HISTORY_FIXTURES } from '../../kit/histories';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

function fixture(path: string): HistoryEvent[] {
  return historyFromJSON(JSON.parse(readFileSync(join(HISTORY_FIXTURES, path), 'utf8'))).events ?? [];
}

/** Summaries as the client decodes them (these fixtures' payloads are plain JSON). */
function summaries(events: HistoryEvent[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of events) if (e.userMetadata?.summary) out.set(String(e.eventId), defaultPayloadConverter.fromPayload<string>(e.userMetadata.summary));
  return out;
}

const mapped = (events: HistoryEvent[], hidden = false): MappedRun => mapHistory(events, summaries(events), { hidden, now: Date.now() });
const of = (run: MappedRun, kind: TimelineSpan['kind']) => run.spans.filter((s) => s.kind === kind);
const labels = (run: MappedRun, kind: TimelineSpan['kind']) => of(run, kind).map((s) => s.label);

test('approvals: a model call per turn, the approved write as a tool call of turn 1, the waits for a decision, the decisions as marks', () => {
  const run = mapped(fixture('v3-tree-ledger/approvals-approve-deny.json'));
  expect(of(run, 'model').map((s) => s.turn)).toEqual([1, 2, 3]);
  expect(of(run, 'turn').map((s) => s.label)).toEqual(['turn 1', 'turn 2', 'turn 3']);
  expect(of(run, 'tool').map((s) => [s.turn, s.label, s.outcome])).toEqual([[1, 'FileWrite', 'ok']]);
  expect(run.marks.map((m) => [m.kind, m.label])).toEqual([['approval', 'decideApproval'], ['approval', 'decideApproval']]);
  // Each wait for a decision (a timer the decision made moot) ends where the run went on, not at its hour.
  const waits = of(run, 'wait');
  expect(waits.map((w) => w.label)).toEqual(['timer 1 h', 'timer 1 h']);
  for (const w of waits) expect(run.spans.some((s) => s.kind !== 'wait' && s.start === w.end)).toBe(true);
  expect(run.end).toBeDefined();
  expect(run.spans.every((s) => s.end !== undefined && s.end >= s.start)).toBe(true);
});

test('keep-alives and a compaction are model calls of their own kind, named by the turn they follow or precede', () => {
  const kept = mapped(fixture('v3-tree-ledger/cache-while-waiting-keep-alive.json'));
  expect(kept.counts).toMatchObject({ modelCalls: 2, keepAlives: 5 });
  expect(new Set(labels(kept, 'keep-alive'))).toEqual(new Set(['keep-alive after turn 1']));
  expect(of(kept, 'keep-alive').every((s) => s.lane === 'model')).toBe(true);
  const compacted = mapped(fixture('v3-tree-ledger/context-forkflow-compaction.json'));
  expect(of(compacted, 'compaction').map((s) => [s.lane, s.label, s.turn])).toEqual([['model', 'compaction before turn 47', 47]]);
  // Read runs as a local activity (a marker): still a tool call of its turn, inside its workflow task.
  expect(compacted.counts.toolCalls).toBe(24);
  expect(of(compacted, 'tool').every((s) => s.label === 'Read' && s.end! >= s.start)).toBe(true);
});

test('a retried call shows its last attempt; an interrupted tool call ends cancelled, and so does its turn', () => {
  expect(of(mapped(fixture('v2-local-read-tools/retry-after-529.json')), 'model').map((s) => [s.attempt, s.outcome])).toEqual([[2, 'ok']]);
  const run = mapped(fixture('v3-tree-ledger/interrupt-during-tool-call.json'));
  expect(of(run, 'tool').map((s) => [s.label, s.outcome])).toEqual([['Bash', 'cancelled']]);
  expect(of(run, 'turn').map((s) => s.outcome)).toEqual(['cancelled', 'ok']);
  expect(run.marks.map((m) => m.kind)).toEqual(['interrupt']);
});

test('a team lead: its teammates as sub-agent spans, their reports and its messages as marks, ledger traffic counted but not drawn', () => {
  const run = mapped(fixture('v3-tree-ledger/teams-relay.json'));
  expect(labels(run, 'child')).toEqual(['team-lead.a-1 · teammate a: Teammate a.', 'team-lead.b-2 · teammate b: Teammate b.', 'team-lead.c-3 · teammate c: Teammate c.']);
  expect(run.marks.filter((m) => m.kind === 'child-report')).toHaveLength(3);
  expect(run.marks.filter((m) => m.kind === 'sent').map((m) => m.label)).toContain('sendMessage → team-lead.a-1');
  expect(run.counts.ledgerUpdates).toBeGreaterThan(0);
  expect(run.marks.some((m) => m.label.startsWith('tree'))).toBe(false);
  // Hidden content: a sub-agent is its id, nothing of what it was told.
  expect(labels(mapped(fixture('v3-tree-ledger/teams-relay.json'), true), 'child')).toEqual(['team-lead.a-1', 'team-lead.b-2', 'team-lead.c-3']);
});

// Events made here: a run's start, then what the test adds, at seconds after it.
const T0 = 1_700_000_000;
let nextId = 1;
const at = (s: number) => ({ seconds: T0 + Math.floor(s), nanos: Math.round((s % 1) * 1e9) });
const summary = (text: string) => ({ summary: defaultPayloadConverter.toPayload(text) });
// Plain numbers where the SDK has Longs: the mapping reads both (JSON histories have strings).
function ev(s: number, attrs: Record<string, unknown>, text?: string): HistoryEvent {
  return { eventId: nextId++, eventTime: at(s), ...attrs, ...(text ? { userMetadata: summary(text) } : {}) } as unknown as HistoryEvent;
}
const started = () => ev(0, { workflowExecutionStartedEventAttributes: {} });
const scheduled = (s: number, type: string, text: string, startToCloseSeconds = 600) => ev(s, { activityTaskScheduledEventAttributes: { activityType: { name: type }, startToCloseTimeout: { seconds: startToCloseSeconds } } }, text);
const completed = (s: number, scheduledEventId: number) => ev(s, { activityTaskCompletedEventAttributes: { scheduledEventId } });
const failed = (s: number, scheduledEventId: number, message: string) => ev(s, { activityTaskFailedEventAttributes: { scheduledEventId, failure: { message } } });

test('a batched call (scheduled with the batch profile), a failover call, a failure’s reason, waits between, and a run still open', () => {
  nextId = 1;
  const events = [started()];
  const batched = scheduled(0.1, 'callModel', 'turn 1 · model claude-sonnet-5-5', 25 * 3600);
  events.push(batched, completed(3, Number(batched.eventId)));
  const failing = scheduled(3.2, 'callModel', 'turn 2 · anthropic claude-sonnet-5-5');
  events.push(failing, failed(3.5, Number(failing.eventId), 'overloaded: the secret was 42'));
  const fallback = scheduled(3.6, 'callModel', 'turn 2 · openai gpt-4.1-mini (fallback)');
  events.push(fallback, completed(4, Number(fallback.eventId)));
  const tool = scheduled(4.1, 'runTool', 'turn 2 · Bash · on host-a · attempt 2');
  events.push(tool);
  const now = (T0 + 10) * 1000;
  const run = mapHistory(events, summaries(events), { hidden: false, now });
  expect(run.end).toBeUndefined();
  expect(of(run, 'model').map((s) => [s.label, s.batch ?? false, s.fallback ?? false, s.outcome])).toEqual([
    ['model claude-sonnet-5-5 · batch', true, false, 'ok'],
    ['anthropic claude-sonnet-5-5', false, false, 'failed'],
    ['openai gpt-4.1-mini (fallback)', false, true, 'ok'],
  ]);
  expect(run.counts).toMatchObject({ batched: 1, failovers: 1, modelCalls: 3, toolCalls: 1 });
  expect(of(run, 'model')[1]!.error).toBe('overloaded: the secret was 42');
  // In flight: no end, and its turn is still going.
  expect(of(run, 'tool').map((s) => [s.label, s.end, s.outcome])).toEqual([['Bash · on host-a', undefined, 'running']]);
  expect(of(run, 'turn').map((s) => [s.turn, s.outcome])).toEqual([[1, 'ok'], [2, 'running']]);
  // A hidden agent's failure says only that it failed.
  expect(of(mapHistory(events, summaries(events), { hidden: true, now }), 'model')[1]!.error).toBeUndefined();
  // Nothing in flight for a while: a wait, still going at `now` while the run is open.
  const idle = [started(), ...events.slice(1, 3)];
  const waiting = mapHistory(idle, summaries(idle), { hidden: false, now });
  expect(of(waiting, 'wait').map((w) => [w.label, w.start, w.end, w.outcome])).toEqual([['waiting', (T0 + 3) * 1000, undefined, 'running']]);
  expect(now - (T0 + 3) * 1000).toBeGreaterThanOrEqual(MIN_WAIT_MS);
});
