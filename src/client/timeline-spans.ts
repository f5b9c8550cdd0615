/**
 * An agent's run as spans an operator reads — turns, model calls, tool calls, sub-agents,
 * waits, compactions, keep-alives — mapped from its workflow history, the way the Temporal
 * Web UI draws a timeline of events but at the agent's level. Pure: history events and the
 * decoded activity summaries in, spans out (src/client/timeline.ts fetches and decodes).
 *
 * What each span is comes from what the workflow recorded: the activity type (`callModel`,
 * `runTool`, `compactContext`, …), its summary (`turn 3 · model …`, `turn 3 · Grep`,
 * `compaction 1 · before turn 9 · …`, `keep-alive 2 · after turn 4 · …`; a failover's call
 * says `(fallback)`), a batched call's schedule (the batch profile's 25-hour start-to-close:
 * src/workflows/activities.ts `batchModel`), a local activity's marker (short read-only tools),
 * timers, child workflows, signals and updates. Nothing is decoded here: payloads stay bytes.
 */
import type { temporal } from '@temporalio/proto';
import { ACTIVITY_PROFILES } from '../shared/wire/constants';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** What a span is: a turn, a model call (or keep-alive, or compaction), a tool call, a sub-agent, a wait, other work. */
export type SpanKind = 'turn' | 'model' | 'keep-alive' | 'compaction' | 'tool' | 'child' | 'wait' | 'other';
/** The row a span is drawn in. */
export type Lane = 'turns' | 'model' | 'tools' | 'sub-agents' | 'waits' | 'other';
/** How a span ended (`running`: it has not). */
export type SpanOutcome = 'ok' | 'failed' | 'timed out' | 'cancelled' | 'terminated' | 'running';

/** One stretch of an agent's run. */
export interface TimelineSpan {
  lane: Lane;
  kind: SpanKind;
  /** What to call it: the model, the tool's name and host, the sub-agent's id (and what it was told, unless hidden), the wait. */
  label: string;
  /** Epoch ms: when it was scheduled (a call waits in its queue from then). */
  start: number;
  /** Epoch ms; absent while it is in flight. */
  end?: number;
  outcome: SpanOutcome;
  /** The agent's turn it belongs to, when its summary says. */
  turn?: number;
  /** The attempt that ran last (a retried call). */
  attempt?: number;
  /** A model call delivered by the Message Batches API. */
  batch?: true;
  /** A model call that went to a fallback provider (failover). */
  fallback?: true;
  /** Why it failed (left out for an agent whose content is hidden). */
  error?: string;
}

/** A moment of an agent's run: a message or report arrived, an approval was decided, a message was sent. */
export interface TimelineMark {
  /** Epoch ms. */
  at: number;
  kind: 'message' | 'child-report' | 'approval' | 'interrupt' | 'sent' | 'signal' | 'update';
  /** The signal or update's name (a sent message: and whom to). */
  label: string;
}

/** How many spans of each kind a run has. */
export interface SpanCounts {
  /** Model calls of turns (keep-alives and compactions apart). */
  modelCalls: number;
  toolCalls: number;
  compactions: number;
  keepAlives: number;
  /** Model calls a fallback provider served. */
  failovers: number;
  /** Model calls delivered by Message Batches. */
  batched: number;
  /** Sub-agents it started. */
  children: number;
  waits: number;
  /** Tree-ledger traffic at a root (admissions, reservations, charges, routed messages): counted, not drawn. */
  ledgerUpdates: number;
}

/** One run mapped: its start and end (epoch ms; no end while open), spans, marks and counts. */
export interface MappedRun {
  start: number;
  end?: number;
  spans: TimelineSpan[];
  marks: TimelineMark[];
  counts: SpanCounts;
}

/** A gap with nothing in flight shorter than this is a workflow task's turnaround, not a wait. */
export const MIN_WAIT_MS = 1000;

const TOOL_ACTIVITIES = new Set(['runTool', 'forkflow.callTool', 'mcpCall', 'startShellTask', 'readShellTask', 'stopShellTask', 'watchShellTask']);
const LEDGER = /^tree[A-Z]/;
const SIGNAL_MARKS: Record<string, TimelineMark['kind']> = { sendMessage: 'message', childOutcome: 'child-report', approvalDecision: 'approval', interruptTurn: 'interrupt' };
const UPDATE_MARKS: Record<string, TimelineMark['kind']> = { decideApproval: 'approval', interrupt: 'interrupt', backgroundChild: 'update' };

/** A history timestamp (seconds as a Long, a string or a number) in epoch ms. */
export function timeOf(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): number | undefined {
  if (!ts) return undefined;
  const s = ts.seconds as { toNumber?: () => number } | string | number | null | undefined;
  const seconds = typeof s === 'object' && s !== null && typeof s.toNumber === 'function' ? s.toNumber() : Number(s ?? 0);
  return seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1_000_000);
}

/** An event id (a Long from the SDK, a string from JSON) as a map key. */
const idOf = (v: { toString(): string } | string | number | null | undefined): string => (v === null || v === undefined ? '' : v.toString());
const secondsOf = (d: { seconds?: unknown } | null | undefined): number => timeOf(d ? { seconds: d.seconds, nanos: 0 } : undefined)! / 1000 || 0;

/** What a summary says of its turn, and the words after it. */
function parseSummary(summary: string | undefined): { turn?: number; rest: string } {
  if (!summary) return { rest: '' };
  const m = /^turn (\d+) · (.*)$/s.exec(summary) ?? /^(?:compaction \d+ · before|keep-alive \d+ · after) turn (\d+)(?: · (.*))?$/s.exec(summary);
  return m ? { turn: Number(m[1]), rest: m[2] ?? summary } : { rest: summary };
}

/** A tool call's label: the tool's name and where it ran (never its input). */
const toolLabel = (rest: string, fallback: string) => rest.split(' · ').filter((p) => !p.startsWith('attempt ')).join(' · ') || fallback;

interface Open {
  span: TimelineSpan;
}

/**
 * Maps one run's events to spans and marks. `summaries`: each event's decoded summary by event
 * id; `hidden`: the agent runs with skipTranscript, so labels keep only tool and model names
 * and failures say no more than that they failed; `now`: where a span in flight ends for drawing.
 */
export function mapHistory(events: HistoryEvent[], summaries: ReadonlyMap<string, string>, opts: { hidden: boolean; now: number }): MappedRun {
  const spans: TimelineSpan[] = [];
  const marks: TimelineMark[] = [];
  const byScheduled = new Map<string, Open>();
  const counts: SpanCounts = { modelCalls: 0, toolCalls: 0, compactions: 0, keepAlives: 0, failovers: 0, batched: 0, children: 0, waits: 0, ledgerUpdates: 0 };
  let start = timeOf(events[0]?.eventTime) ?? opts.now;
  let end: number | undefined;
  let taskStarted: number | undefined;
  const add = (key: string, span: TimelineSpan) => {
    spans.push(span);
    byScheduled.set(key, { span });
  };
  const close = (key: Parameters<typeof idOf>[0], at: number | undefined, outcome: SpanOutcome, failure?: { message?: string | null } | null) => {
    const open = byScheduled.get(idOf(key));
    if (!open) return;
    open.span.end = at;
    open.span.outcome = outcome;
    if (failure?.message && !opts.hidden) open.span.error = failure.message.slice(0, 300);
  };
  for (const e of events) {
    const at = timeOf(e.eventTime);
    const id = idOf(e.eventId);
    const summary = summaries.get(id);
    if (e.workflowExecutionStartedEventAttributes) start = at ?? start;
    else if (e.workflowTaskStartedEventAttributes) taskStarted = at;
    else if (e.activityTaskScheduledEventAttributes) {
      const a = e.activityTaskScheduledEventAttributes;
      add(id, activitySpan(a.activityType?.name ?? 'activity', summary, at ?? start, opts.hidden, secondsOf(a.startToCloseTimeout) * 1000));
    } else if (e.activityTaskStartedEventAttributes) {
      const open = byScheduled.get(idOf(e.activityTaskStartedEventAttributes.scheduledEventId));
      if (open && (e.activityTaskStartedEventAttributes.attempt ?? 1) > 1) open.span.attempt = e.activityTaskStartedEventAttributes.attempt!;
    } else if (e.activityTaskCompletedEventAttributes) close(e.activityTaskCompletedEventAttributes.scheduledEventId, at, 'ok');
    else if (e.activityTaskFailedEventAttributes) close(e.activityTaskFailedEventAttributes.scheduledEventId, at, 'failed', e.activityTaskFailedEventAttributes.failure);
    else if (e.activityTaskTimedOutEventAttributes) close(e.activityTaskTimedOutEventAttributes.scheduledEventId, at, 'timed out', e.activityTaskTimedOutEventAttributes.failure);
    else if (e.activityTaskCanceledEventAttributes) close(e.activityTaskCanceledEventAttributes.scheduledEventId, at, 'cancelled');
    else if (e.markerRecordedEventAttributes?.markerName === 'core_local_activity') {
      // It ran inside the workflow task that recorded it: from that task's start to its completion.
      const local = localActivityOf(e.markerRecordedEventAttributes);
      const from = taskStarted ?? at ?? start;
      const span = activitySpan(local.type ?? 'local activity', summary, from, opts.hidden, 0);
      spans.push({ ...span, end: Math.max(from, local.completed ?? at ?? from), outcome: 'ok', ...(local.attempt && local.attempt > 1 ? { attempt: local.attempt } : {}) });
    } else if (e.timerStartedEventAttributes) {
      const t = e.timerStartedEventAttributes;
      add(`timer:${id}`, { lane: 'waits', kind: 'wait', label: opts.hidden || !summary ? `timer ${formatSeconds(secondsOf(t.startToFireTimeout))}` : summary, start: at ?? start, outcome: 'running' });
    } else if (e.timerFiredEventAttributes) close(`timer:${idOf(e.timerFiredEventAttributes.startedEventId)}`, at, 'ok');
    else if (e.timerCanceledEventAttributes) close(`timer:${idOf(e.timerCanceledEventAttributes.startedEventId)}`, at, 'cancelled');
    else if (e.startChildWorkflowExecutionInitiatedEventAttributes) {
      const child = e.startChildWorkflowExecutionInitiatedEventAttributes.workflowId ?? 'sub-agent';
      add(`child:${id}`, { lane: 'sub-agents', kind: 'child', label: opts.hidden || !summary ? child : `${child} · ${summary}`, start: at ?? start, outcome: 'running' });
    } else if (e.startChildWorkflowExecutionFailedEventAttributes) close(`child:${idOf(e.startChildWorkflowExecutionFailedEventAttributes.initiatedEventId)}`, at, 'failed');
    else if (e.childWorkflowExecutionCompletedEventAttributes) close(`child:${idOf(e.childWorkflowExecutionCompletedEventAttributes.initiatedEventId)}`, at, 'ok');
    else if (e.childWorkflowExecutionFailedEventAttributes) close(`child:${idOf(e.childWorkflowExecutionFailedEventAttributes.initiatedEventId)}`, at, 'failed', e.childWorkflowExecutionFailedEventAttributes.failure);
    else if (e.childWorkflowExecutionCanceledEventAttributes) close(`child:${idOf(e.childWorkflowExecutionCanceledEventAttributes.initiatedEventId)}`, at, 'cancelled');
    else if (e.childWorkflowExecutionTimedOutEventAttributes) close(`child:${idOf(e.childWorkflowExecutionTimedOutEventAttributes.initiatedEventId)}`, at, 'timed out');
    else if (e.childWorkflowExecutionTerminatedEventAttributes) close(`child:${idOf(e.childWorkflowExecutionTerminatedEventAttributes.initiatedEventId)}`, at, 'terminated');
    else if (e.workflowExecutionSignaledEventAttributes) {
      const name = e.workflowExecutionSignaledEventAttributes.signalName ?? 'signal';
      if (LEDGER.test(name)) counts.ledgerUpdates += 1;
      else marks.push({ at: at ?? start, kind: SIGNAL_MARKS[name] ?? 'signal', label: name });
    } else if (e.workflowExecutionUpdateAcceptedEventAttributes) {
      const name = e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name ?? 'update';
      if (LEDGER.test(name)) counts.ledgerUpdates += 1;
      else marks.push({ at: at ?? start, kind: UPDATE_MARKS[name] ?? 'update', label: name });
    } else if (e.signalExternalWorkflowExecutionInitiatedEventAttributes) {
      const s = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
      marks.push({ at: at ?? start, kind: 'sent', label: `${s.signalName ?? 'signal'} → ${s.workflowExecution?.workflowId ?? '?'}` });
    } else if (e.workflowExecutionCompletedEventAttributes || e.workflowExecutionFailedEventAttributes || e.workflowExecutionCanceledEventAttributes || e.workflowExecutionTerminatedEventAttributes || e.workflowExecutionTimedOutEventAttributes || e.workflowExecutionContinuedAsNewEventAttributes) end = at;
  }
  settleOpen(spans, end);
  const all = [...spans, ...turnSpans(spans), ...gapWaits(spans, start, end ?? opts.now, end === undefined)];
  for (const s of all) {
    if (s.kind === 'model') counts.modelCalls += 1;
    if (s.kind === 'tool') counts.toolCalls += 1;
    if (s.kind === 'compaction') counts.compactions += 1;
    if (s.kind === 'keep-alive') counts.keepAlives += 1;
    if (s.kind === 'child') counts.children += 1;
    if (s.kind === 'wait') counts.waits += 1;
    if (s.fallback) counts.failovers += 1;
    if (s.batch) counts.batched += 1;
  }
  all.sort((a, b) => a.start - b.start);
  return { start, ...(end !== undefined ? { end } : {}), spans: all, marks, counts };
}

function formatSeconds(s: number): string {
  return s >= 3600 ? `${Math.round(s / 360) / 10} h` : s >= 60 ? `${Math.round(s / 6) / 10} min` : `${s} s`;
}

/** An activity's span from its type and summary (a local activity's too). */
function activitySpan(type: string, summary: string | undefined, start: number, hidden: boolean, startToCloseMs: number): TimelineSpan {
  const { turn, rest } = parseSummary(summary);
  const base = { start, outcome: 'running' as const, ...(turn !== undefined ? { turn } : {}) };
  if (type === 'callModel') {
    const keepAlive = summary?.startsWith('keep-alive') === true;
    const batch = startToCloseMs >= ACTIVITY_PROFILES.batchModel.startToCloseMs;
    const fallback = / \(fallback\)$/.test(rest);
    const label = keepAlive ? `keep-alive${turn !== undefined ? ` after turn ${turn}` : ''}` : rest || 'model call';
    return { ...base, lane: 'model', kind: keepAlive ? 'keep-alive' : 'model', label: batch ? `${label} · batch` : label, ...(batch ? { batch: true as const } : {}), ...(fallback ? { fallback: true as const } : {}) };
  }
  if (type === 'compactContext') return { ...base, lane: 'model', kind: 'compaction', label: `compaction${turn !== undefined ? ` before turn ${turn}` : ''}` };
  if (TOOL_ACTIVITIES.has(type)) return { ...base, lane: 'tools', kind: 'tool', label: turn !== undefined ? toolLabel(rest, type) : hidden ? type : summary || type };
  return { ...base, lane: 'other', kind: 'other', label: hidden || !summary ? type : summary };
}

/** What a local activity's marker says of itself (core writes it as plain JSON; anything else is left alone). */
function localActivityOf(marker: temporal.api.history.v1.IMarkerRecordedEventAttributes): { type?: string; completed?: number; attempt?: number } {
  const payload = marker.details?.data?.payloads?.[0];
  const encoding = payload?.metadata?.encoding ? Buffer.from(payload.metadata.encoding).toString() : '';
  if (!payload?.data || encoding !== 'json/plain') return {};
  try {
    const d = JSON.parse(Buffer.from(payload.data).toString()) as { activity_type?: string; attempt?: number; complete_time?: { seconds?: number; nanos?: number } };
    return { ...(typeof d.activity_type === 'string' ? { type: d.activity_type } : {}), ...(typeof d.attempt === 'number' ? { attempt: d.attempt } : {}), completed: timeOf(d.complete_time) };
  } catch {
    return {};
  }
}

/**
 * Spans the history never closed. A timer whose condition came true first is often left
 * unfired (the workflow went on without it): it ends where the next call or sub-agent began,
 * or with the run. Anything else still open in a closed run ended with it, cut short.
 */
function settleOpen(spans: TimelineSpan[], end: number | undefined): void {
  const starts = spans.filter((s) => s.kind !== 'wait').map((s) => s.start).sort((a, b) => a - b);
  for (const s of spans) {
    if (s.end !== undefined) continue;
    if (s.kind === 'wait') {
      const next = starts.find((t) => t > s.start);
      const to = next ?? end;
      if (to !== undefined) Object.assign(s, { end: to, outcome: 'ok' });
    } else if (end !== undefined) Object.assign(s, { end, outcome: 'cancelled' });
  }
}

/** One span per turn: from its first model or tool call to the end of its last. */
function turnSpans(spans: TimelineSpan[]): TimelineSpan[] {
  const turns = new Map<number, TimelineSpan>();
  for (const s of spans) {
    if (s.turn === undefined || (s.kind !== 'model' && s.kind !== 'tool')) continue;
    const t = turns.get(s.turn);
    if (!t) {
      turns.set(s.turn, { lane: 'turns', kind: 'turn', label: `turn ${s.turn}`, turn: s.turn, start: s.start, ...(s.end !== undefined ? { end: s.end } : {}), outcome: s.outcome });
      continue;
    }
    t.start = Math.min(t.start, s.start);
    if (s.end === undefined || t.end === undefined) {
      delete t.end;
      t.outcome = 'running';
    } else t.end = Math.max(t.end, s.end);
    if (s.outcome !== 'ok' && s.outcome !== 'running' && t.outcome === 'ok') t.outcome = s.outcome;
  }
  return [...turns.values()];
}

/**
 * Waits nobody recorded as a timer: stretches of at least MIN_WAIT_MS with no call, timer or
 * local activity in flight — waiting on sub-agents when one was running, else for a message.
 */
function gapWaits(spans: TimelineSpan[], start: number, end: number, open: boolean): TimelineSpan[] {
  const busy = spans.filter((s) => s.lane !== 'sub-agents').map((s) => [s.start, s.end ?? end] as const).sort((a, b) => a[0] - b[0]);
  const children = spans.filter((s) => s.lane === 'sub-agents');
  const out: TimelineSpan[] = [];
  let cursor = start;
  const gap = (from: number, to: number) => {
    if (to - from < MIN_WAIT_MS) return;
    const onChildren = children.some((c) => c.start < to && (c.end ?? end) > from);
    // A run still open is still waiting: that wait has no end yet.
    const ongoing = open && to === end;
    out.push({ lane: 'waits', kind: 'wait', label: onChildren ? 'waiting on sub-agents' : 'waiting', start: from, ...(ongoing ? {} : { end: to }), outcome: ongoing ? 'running' : 'ok' });
  };
  for (const [from, to] of busy) {
    if (from > cursor) gap(cursor, from);
    cursor = Math.max(cursor, to);
  }
  if (end > cursor) gap(cursor, end);
  return out;
}
