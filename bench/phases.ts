/**
 * Where a durable turn's time goes, read from facts rather than guessed: the run's history
 * (event times the server recorded) and the offline model's log (when each request arrived
 * and its response ended). Phases of a turn, in order:
 *
 * - `activity report → workflow task scheduled`: the model/tool activity's completion reaching
 *   history and the server scheduling the workflow task that reacts to it;
 * - `workflow task queued`: scheduled → picked up by the worker (sticky queue);
 * - `workflow task on worker`: picked up → completed (replay-free activation, payload
 *   conversion, commands back to the server);
 * - `activity queued`: scheduled → started (schedule-to-start);
 * - `activity start → model request`: inside the model activity before the request leaves
 *   (conversation from cache or query, request build, cache-break hashing, handover write);
 * - `model response end → activity completed`: inside the activity after the response
 *   (response kept, result conversion, completion RPC).
 *
 * Local activities (short tools) run inside a workflow task and show up in its time.
 */
import { temporal } from '@temporalio/proto';
import type { RequestLogEntry } from '../src/offline';
import { median, percentile } from './kit';

const E = temporal.api.enums.v1.EventType;
type Event = temporal.api.history.v1.IHistoryEvent;

function ms(e: Event | undefined): number {
  const t = e?.eventTime;
  if (!t) return NaN;
  return Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6;
}

export interface PhaseSamples {
  [phase: string]: number[];
}

export const PHASES = [
  'activity report → workflow task scheduled',
  'workflow task queued',
  'workflow task on worker',
  'activity queued',
  'activity start → model request',
  'model response end → activity completed',
] as const;

/** Samples of each phase in one run's history; `model` is the log of that run's model requests, in order. */
export function phaseSamples(events: Event[], model: RequestLogEntry[]): PhaseSamples {
  const out: PhaseSamples = Object.fromEntries(PHASES.map((p) => [p, [] as number[]]));
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  let lastActivityDone: number | undefined;
  let modelCall = 0;
  for (const e of events) {
    switch (e.eventType) {
      case E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
        if (lastActivityDone !== undefined) out[PHASES[0]]!.push(ms(e) - lastActivityDone);
        lastActivityDone = undefined;
        break;
      case E.EVENT_TYPE_WORKFLOW_TASK_STARTED:
        out[PHASES[1]]!.push(ms(e) - ms(byId.get(Number(e.workflowTaskStartedEventAttributes?.scheduledEventId))));
        break;
      case E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
        out[PHASES[2]]!.push(ms(e) - ms(byId.get(Number(e.workflowTaskCompletedEventAttributes?.startedEventId))));
        break;
      case E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const a = e.activityTaskCompletedEventAttributes!;
        const scheduled = byId.get(Number(a.scheduledEventId));
        const started = byId.get(Number(a.startedEventId));
        out[PHASES[3]]!.push(ms(started) - ms(scheduled));
        lastActivityDone = ms(e);
        if (scheduled?.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel') {
          const request = model[modelCall++];
          if (request?.endedAt !== undefined) {
            out[PHASES[4]]!.push(request.receivedAt - ms(started));
            out[PHASES[5]]!.push(ms(e) - request.endedAt);
          }
        }
        break;
      }
      default:
        break;
    }
  }
  return out;
}

/** Merges samples of several runs. */
export function mergeSamples(all: PhaseSamples[]): PhaseSamples {
  const out: PhaseSamples = {};
  for (const s of all) for (const [k, v] of Object.entries(s)) (out[k] ??= []).push(...v);
  return out;
}

/** `median / p95 ms (n)` per phase, for a table. */
export function phaseRows(samples: PhaseSamples, indent = '  '): [string, string][] {
  return PHASES.map((p) => {
    const v = samples[p] ?? [];
    return [`${indent}${p}`, v.length ? `${median(v).toFixed(1)} / ${percentile(v, 95).toFixed(1)} ms (n=${v.length})` : 'n/a'];
  });
}
