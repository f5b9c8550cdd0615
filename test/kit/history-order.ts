/**
 * Assertions on the order of a run's history events instead of on wall-clock time: "the
 * cancellation reached the model call in the first workflow task after the request, and
 * nothing new started" is a fact of history, true on a fast machine and a slow one alike.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

export const E = temporal.api.enums.v1.EventType;
type Event = temporal.api.history.v1.IHistoryEvent;

export async function historyEvents(handle: WorkflowHandle): Promise<Event[]> {
  return (await handle.fetchHistory()).events ?? [];
}

/** The events from the run's cancellation request on, split at each completed workflow task. */
export function afterCancelRequest(events: Event[]): { firstTask: Event[]; rest: Event[]; all: Event[] } {
  const at = events.findIndex((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED);
  if (at < 0) throw new Error('no cancellation request in this history');
  const all = events.slice(at);
  const done = all.findIndex((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  // The commands of the first workflow task after the request follow its completion, up to the next task.
  const next = all.findIndex((e, i) => i > done && e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
  const firstTask = all.slice(done + 1, next < 0 ? undefined : next);
  return { firstTask, rest: all.slice(next < 0 ? all.length : next), all };
}

/** Event types that start new work: none may follow a cancellation request of a fork. */
export const NEW_WORK = new Set([E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, E.EVENT_TYPE_TIMER_STARTED, E.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED]);

export function typesOf(events: Event[]): string[] {
  return events.map((e) => E[e.eventType ?? 0] ?? String(e.eventType));
}
