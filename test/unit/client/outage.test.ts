/**
 * OutageGuard.read with a connection whose calls fail as the server answers them: a query
 * that no worker picked up in the server's time is asked once more (a worker restarting), a
 * second such timeout is the caller's; other errors pass through at once.
 */
import type { ConnectionLike } from '@temporalio/client';
import { ServiceError } from '@temporalio/client';
import { OutageGuard, WORKER_WAITS } from '../../../src/client/outage';

function grpcError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code, details: message.replace(/^\d+ \w+: /, ''), metadata: {} });
}
const queryTimedOut = () => new ServiceError('Failed to query Workflow', { cause: grpcError(4, '4 DEADLINE_EXCEEDED: query timed out before a worker could process it') });

const connection = { withDeadline: <R>(_deadline: number | Date, fn: () => Promise<R>) => fn() } as unknown as ConnectionLike;

test('a query no worker answered in time is asked again, and answered', async () => {
  const guard = new OutageGuard(connection, 'h:7233', { deadlineMs: 60_000 });
  let calls = 0;
  const answer = await guard.read('status', () => {
    calls++;
    return calls === 1 ? Promise.reject(queryTimedOut()) : Promise.resolve('running');
  });
  expect(answer).toBe('running');
  expect(calls).toBe(2);
});

test(`after ${WORKER_WAITS} such timeouts the error is the caller's`, async () => {
  const guard = new OutageGuard(connection, 'h:7233', { deadlineMs: 60_000 });
  let calls = 0;
  const err = await guard.read('status', () => {
    calls++;
    return Promise.reject(queryTimedOut());
  }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ServiceError);
  expect(calls).toBe(WORKER_WAITS);
});

test('any other error passes through at once', async () => {
  const guard = new OutageGuard(connection, 'h:7233', { deadlineMs: 60_000 });
  let calls = 0;
  const err = await guard.read('status', () => {
    calls++;
    return Promise.reject(new ServiceError('Failed to query Workflow', { cause: grpcError(9, '9 FAILED_PRECONDITION: no') }));
  }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ServiceError);
  expect(calls).toBe(1);
});

test('a DEADLINE_EXCEEDED past our own deadline is not a worker timeout', async () => {
  const guard = new OutageGuard(connection, 'h:7233', { deadlineMs: 0 });
  let calls = 0;
  const err = await guard.read('status', () => {
    calls++;
    return Promise.reject(queryTimedOut());
  }).catch((e: unknown) => e);
  // Past our own (zero) deadline it counts as unreachable, and a zero deadline fails at once.
  expect(calls).toBe(1);
  expect(err).toBeInstanceOf(Error);
});
