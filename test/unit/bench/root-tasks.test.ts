/**
 * bench:tree's reading of the root's workflow tasks (bench/tree/history.ts `rootTasks`): what
 * tells a root replayed by another worker after a sticky timeout from one served in place.
 */
import { temporal } from '@temporalio/proto';
import { rootTasks } from '../../../bench/tree/history';

const E = temporal.api.enums.v1.EventType;
const T = temporal.api.enums.v1.TimeoutType;
type Event = temporal.api.history.v1.IHistoryEvent;

// Seconds as a plain number: what eventMs reads (the proto type says Long).
const at = (s: number) => ({ eventTime: { seconds: s, nanos: 0 } }) as unknown as Pick<Event, 'eventTime'>;
const started = (s: number): Event => ({ eventType: E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, ...at(s) });
const taskStarted = (s: number, identity: string): Event => ({ eventType: E.EVENT_TYPE_WORKFLOW_TASK_STARTED, workflowTaskStartedEventAttributes: { identity }, ...at(s) });
const taskCompleted = (s: number): Event => ({ eventType: E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, ...at(s) });
const timedOut = (s: number, timeoutType: temporal.api.enums.v1.TimeoutType): Event => ({ eventType: E.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT, workflowTaskTimedOutEventAttributes: { timeoutType }, ...at(s) });

test('counts sticky and running timeouts, tasks that moved to another worker, and the longest task', () => {
  const events: Event[] = [
    started(0),
    taskStarted(1, 'w1'),
    taskCompleted(2),
    // Waited on w1's sticky queue too long; w2 took it from the shared queue and ran past its timeout.
    timedOut(5, T.TIMEOUT_TYPE_SCHEDULE_TO_START),
    taskStarted(6, 'w2'),
    timedOut(19, T.TIMEOUT_TYPE_START_TO_CLOSE),
    taskStarted(20, 'w2'),
    taskCompleted(23),
    // The next run starts on whichever worker: not a move.
    started(30),
    taskStarted(31, 'w3'),
    taskCompleted(32),
  ];
  expect(rootTasks(events)).toEqual({ started: 4, scheduleToStart: 1, startToClose: 1, moved: 1, longestMs: 13_000 });
});

test('a root served in place: no timeout, no move', () => {
  expect(rootTasks([started(0), taskStarted(1, 'w1'), taskCompleted(2), taskStarted(3, 'w1'), taskCompleted(5)])).toEqual({ started: 2, scheduleToStart: 0, startToClose: 0, moved: 0, longestMs: 2_000 });
});
