/**
 * bench:tree's readings of histories: the root's, over all its runs (events, bytes, updates,
 * signals), and how long members waited for a share of the budget, read where it happened —
 * the root's history says which asks it answered at once and which waited, and what it had
 * just heard when it served a waiting one; each member's history says when it asked and when
 * the answer reached it.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { percentile } from '../kit';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EVENT = temporal.api.enums.v1.EventType;

export interface RootHistory {
  runs: number;
  updates: number;
  signals: number;
  events: number;
  bytes: number;
  /** The root's workflow tasks: see {@link rootTasks}. */
  tasks: RootTasks;
  /** Every run's events, oldest run first. */
  all: HistoryEvent[];
}

/**
 * How the root's workflow tasks went. A task that waits on a busy worker's sticky queue past
 * its schedule-to-start timeout goes to the shared queue, where any worker may take it: one
 * that does not hold the root in its cache replays its whole history first (`moved`). A task
 * whose completion comes after its start-to-close timeout is the worker's "Workflow task not
 * found" (`startToClose`).
 */
export interface RootTasks {
  started: number;
  /** Timed out waiting to be taken (a sticky queue's timeout: the task goes to the shared queue). */
  scheduleToStart: number;
  /** Timed out while a worker had it. */
  startToClose: number;
  /** Tasks started by another worker than the run's previous task. */
  moved: number;
  /** The longest a task ran (started → completed or timed out), ms. */
  longestMs: number;
}

export function rootTasks(all: HistoryEvent[]): RootTasks {
  const t: RootTasks = { started: 0, scheduleToStart: 0, startToClose: 0, moved: 0, longestMs: 0 };
  let lastIdentity: string | undefined;
  let startedAt = 0;
  for (const e of all) {
    if (e.eventType === EVENT.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED) lastIdentity = undefined;
    if (e.eventType === EVENT.EVENT_TYPE_WORKFLOW_TASK_STARTED) {
      t.started += 1;
      const identity = e.workflowTaskStartedEventAttributes?.identity ?? '';
      if (lastIdentity !== undefined && identity !== lastIdentity) t.moved += 1;
      lastIdentity = identity;
      startedAt = eventMs(e);
    }
    if (e.eventType === EVENT.EVENT_TYPE_WORKFLOW_TASK_COMPLETED || e.eventType === EVENT.EVENT_TYPE_WORKFLOW_TASK_FAILED) t.longestMs = Math.max(t.longestMs, eventMs(e) - startedAt);
    if (e.eventType === EVENT.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) {
      const kind = e.workflowTaskTimedOutEventAttributes?.timeoutType;
      if (kind === temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START) t.scheduleToStart += 1;
      else {
        t.startToClose += 1;
        t.longestMs = Math.max(t.longestMs, eventMs(e) - startedAt);
      }
    }
  }
  return t;
}

/** Milliseconds since the epoch of an event. */
export function eventMs(e: HistoryEvent): number {
  const t = e.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
}

/** The JSON argument of a signal (forkflow's payloads are plain JSON unless a codec is configured). */
export function signalArg(input: temporal.api.common.v1.IPayloads | null | undefined): Record<string, unknown> | undefined {
  const data = input?.payloads?.[0]?.data;
  if (!data) return undefined;
  try {
    return JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The root's runs (continue-as-new chain), newest last, with their sizes. */
export async function rootHistory(client: Client, rootId: string): Promise<RootHistory> {
  const runs: HistoryEvent[][] = [];
  let runId: string | undefined = (await client.workflow.getHandle(rootId).describe()).runId;
  while (runId) {
    const h = await client.workflow.getHandle(rootId, runId).fetchHistory();
    runs.unshift(h.events ?? []);
    runId = h.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
    if (runId === '') runId = undefined;
  }
  let bytes = 0;
  for (const events of runs) bytes += temporal.api.history.v1.History.encode({ events }).finish().length;
  const all = runs.flat();
  return {
    runs: runs.length,
    updates: all.filter((e) => e.eventType === EVENT.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED).length,
    signals: all.filter((e) => e.eventType === EVENT.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED).length,
    events: all.length,
    bytes,
    tasks: rootTasks(all),
    all,
  };
}

export interface WaitFigures {
  count: number;
  p50: number;
  p95: number;
  max: number;
}

export interface ShareWaits {
  /** Asks the root answered in the workflow task that took them. */
  immediate: number;
  /** Asks that waited for budget to come back. */
  waited: number;
  /** A share's round trip: a member's ask sent → the root's grant received (asks answered at once). */
  roundTripMs: WaitFigures;
  /** A waiting ask: the root hearing of the budget that served it → the member receiving the grant. */
  afterReturnMs: WaitFigures;
}

function figures(values: number[]): WaitFigures {
  return { count: values.length, p50: percentile(values, 50), p95: percentile(values, 95), max: values.length ? Math.max(...values) : NaN };
}

export interface Grant {
  to: string;
  id: string;
  waited: boolean;
  /** When the root took what freed the budget for a waiting ask (absent: nothing did — it was not told). */
  triggerAt?: number;
}

/**
 * What the root takes that can free budget for a waiting ask: a member's return or end
 * (`treeShare`), a sub-agent's end (`treeAgentEnded`, its `childOutcome` report, or its completion as the root's child),
 * or the root's own model call ending (it reports its spend and may give back its share).
 */
const FREES = new Set<number>([
  EVENT.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
  EVENT.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED,
  EVENT.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED,
  EVENT.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED,
  EVENT.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED,
  EVENT.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
]);

/** The root's grants of members' asks, each marked answered at once or after a wait. */
export function grantsIn(events: HistoryEvent[]): Grant[] {
  const askTask = new Map<string, number>();
  const grants: Grant[] = [];
  // Signals arrive before the workflow task that takes them starts.
  let task = 0;
  let heard: HistoryEvent[] = [];
  let taking: HistoryEvent[] = [];
  for (const e of events) {
    if (e.eventType === EVENT.EVENT_TYPE_WORKFLOW_TASK_STARTED) {
      task += 1;
      taking = heard;
      heard = [];
      for (const s of taking) {
        const arg = signalArg(s.workflowExecutionSignaledEventAttributes?.input);
        if (s.workflowExecutionSignaledEventAttributes?.signalName === 'treeShare' && arg?.kind === 'ask') askTask.set(`${String(arg.agentId)}|${String(arg.id)}`, task);
      }
    } else if (FREES.has(e.eventType ?? 0)) {
      heard.push(e);
    } else if (e.eventType === EVENT.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED) {
      const a = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
      const arg = signalArg(a?.input);
      if (a?.signalName !== 'treeAnswer' || arg?.kind !== 'share' || typeof arg.tokens !== 'number') continue;
      const to = a.workflowExecution?.workflowId ?? '';
      const asked = askTask.get(`${to}|${String(arg.id)}`);
      if (asked === undefined) continue;
      const waited = asked !== task;
      const trigger = taking.filter((s) => s.eventType !== EVENT.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED || ['treeShare', 'treeAgentEnded', 'childOutcome'].includes(s.workflowExecutionSignaledEventAttributes?.signalName ?? '')).at(-1);
      grants.push({ to, id: String(arg.id), waited, ...(waited && trigger ? { triggerAt: eventMs(trigger) } : {}) });
    }
  }
  return grants;
}

/** How long members waited for shares (reads the histories of the members that asked). */
export async function shareWaits(client: Client, root: RootHistory): Promise<ShareWaits> {
  const grants = grantsIn(root.all);
  const roundTrips: number[] = [];
  const afterReturn: number[] = [];
  const members = [...new Set(grants.map((g) => g.to))];
  const times = new Map<string, { sent?: number; got?: number }>();
  for (const id of members) {
    const events = (await client.workflow.getHandle(id).fetchHistory().catch(() => undefined))?.events ?? [];
    for (const e of events) {
      const sent = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
      const got = e.workflowExecutionSignaledEventAttributes;
      const arg = signalArg(sent?.input ?? got?.input);
      if (!arg || typeof arg.id !== 'string') continue;
      const key = `${id}|${arg.id}`;
      const t = times.get(key) ?? {};
      if (sent?.signalName === 'treeShare' && arg.kind === 'ask') t.sent = eventMs(e);
      if (got?.signalName === 'treeAnswer' && arg.kind === 'share') t.got ??= eventMs(e);
      times.set(key, t);
    }
  }
  for (const g of grants) {
    const t = times.get(`${g.to}|${g.id}`);
    if (!t?.got) continue;
    if (!g.waited && t.sent) roundTrips.push(t.got - t.sent);
    if (g.waited && g.triggerAt) afterReturn.push(t.got - g.triggerAt);
  }
  return { immediate: grants.filter((g) => !g.waited).length, waited: grants.filter((g) => g.waited).length, roundTripMs: figures(roundTrips), afterReturnMs: figures(afterReturn) };
}
