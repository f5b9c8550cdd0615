/**
 * Clients that ride out an outage: a dev server stopped mid fork and restarted on its database
 * file and port. A handle's pending result, and a status and a transcript asked for while the
 * server is down, wait it out and resolve with the fork's values; a client whose deadline
 * passes fails with one TemporalUnavailableError. No sleeps: the test moves on events (a
 * model request in flight, the client's own retry notices).
 */
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ForkflowClient, TemporalUnavailableError, type OutageRetry } from '../../src/client';
import { startOfflineModel, type OfflineModel } from '../../src/offline';
import { freePort, startDevServer, type DevServer } from '../../src/worker/dev-server';
import { tempDir, testEnv, uniqueTaskQueue } from '../kit/env';
import { startWorkerProcess } from '../kit/processes';
import { rejectionOf } from '../kit/wait';
import { forkflowConnectionOptions } from '../../src/client/connection-options';

jest.setTimeout(180_000);

/** The client's retry notices, and a promise for the first one of an operation. */
class RetryLog {
  readonly seen: OutageRetry[] = [];
  private waiters: { operation: string; resolve: () => void }[] = [];

  readonly onRetry = (r: OutageRetry): void => {
    this.seen.push(r);
    for (const w of this.waiters.filter((w) => w.operation === r.operation)) w.resolve();
    this.waiters = this.waiters.filter((w) => w.operation !== r.operation);
  };

  retried(operation: string): Promise<void> {
    if (this.seen.some((r) => r.operation === operation)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ operation, resolve }));
  }
}

/** A promise with its settlement visible, so a test can say "still pending". */
function watched<T>(p: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  const promise = p.finally(() => (settled = true));
  // The test awaits `promise` later; an early rejection must not count as unhandled meanwhile.
  promise.catch(() => undefined);
  return { promise, settled: () => settled };
}

let model: OfflineModel;
beforeAll(async () => {
  model = await startOfflineModel();
});
afterAll(() => model.close());

test('a server outage mid fork: a pending handle.result(), status() and transcript() wait it out and resolve', async () => {
  const dir = tempDir('outage');
  const port = await freePort();
  const dbFile = join(dir, 'temporal.db');
  let server: DevServer = await startDevServer({ dbFile, port, headless: true, logLevel: 'error' });
  const taskQueue = uniqueTaskQueue('outage');
  const connection = await Connection.connect(forkflowConnectionOptions({ address: server.address }));
  const client = new Client({ connection, namespace: server.namespace });
  // The worker in a process of its own (as in production), riding out the outage on its own.
  const worker = await startWorkerProcess({ address: server.address, taskQueue, modelUrl: model.url, workspace: dir, bundlePath: testEnv().bundlePath });
  const retries = new RetryLog();
  const forkflow = new ForkflowClient(client, { taskQueue, outage: { onRetry: retries.onRetry } });
  try {
    const prompt = 'Wait, then report.\n@sleep 2000 @reply done after the outage';
    const handle = await forkflow.fork({ agentId: 'outage-fork', prompt }, { mode: 'forget' });
    await model.log.waitFor((e) => e.outcome === 'pending' && JSON.stringify(e.body ?? '').includes('Wait, then report.'), { timeoutMs: 30_000 });

    await server.stop();
    const result = watched(handle.result());
    const status = watched(forkflow.status('outage-fork'));
    const transcript = watched(forkflow.transcript('outage-fork'));
    // The outage is real and each call has met it: every one has retried at least once.
    await Promise.all([retries.retried('result'), retries.retried('status'), retries.retried('transcript')]);
    expect([result.settled(), status.settled(), transcript.settled()]).toEqual([false, false, false]);

    server = await startDevServer({ dbFile, port, headless: true, logLevel: 'error' });
    const [done, seen, messages] = await Promise.all([result.promise, status.promise, transcript.promise]);
    expect(done).toMatchObject({ agentId: 'outage-fork', status: 'completed', text: 'done after the outage', turns: 1 });
    expect(seen.agentId).toBe('outage-fork');
    expect(['running', 'completed']).toContain(seen.state);
    const final = await forkflow.transcript('outage-fork');
    expect(final.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(messages.length).toBeGreaterThanOrEqual(1);
    expect(messages).toEqual(final.slice(0, messages.length));
    // The client's result can still be read again, any number of times.
    expect(await forkflow.result('outage-fork')).toEqual(done);
  } finally {
    await worker.kill();
    await connection.close();
    await server.stop();
  }
});

test('a short deadline against a stopped server: one TemporalUnavailableError that names the address', async () => {
  const server = await startDevServer({ headless: true, logLevel: 'error' });
  const connection = await Connection.connect(forkflowConnectionOptions({ address: server.address }));
  const retries = new RetryLog();
  const forkflow = new ForkflowClient(new Client({ connection, namespace: server.namespace }), { outage: { deadlineMs: 1000, onRetry: retries.onRetry } });
  try {
    await server.stop();
    const err = await rejectionOf(forkflow.status('any-agent'));
    expect(err).toBeInstanceOf(TemporalUnavailableError);
    const unavailable = err as TemporalUnavailableError;
    expect(unavailable.name).toBe('TemporalUnavailableError');
    expect(unavailable.address).toBe(server.address);
    expect(unavailable.deadlineMs).toBe(1000);
    expect(unavailable.message).toContain(`Check that the server at ${server.address} is running`);
    expect(unavailable.message).toContain('outage deadline 1.0 s');
  } finally {
    await connection.close();
  }

  // Nothing listening at all: connect() waits out the same deadline, then the same error.
  const dead = `127.0.0.1:${await freePort()}`;
  const connectErr = await ForkflowClient.connect({ address: dead, outage: { deadlineMs: 1000 } }).then(
    (c) => c.close(),
    (e: unknown) => e,
  );
  expect(connectErr).toBeInstanceOf(TemporalUnavailableError);
  expect((connectErr as TemporalUnavailableError).address).toBe(dead);
});
