import { processRootGate, RootUpdateGate, ROOT_UPDATES_DEFAULT } from '../../../src/activities/root-gate';
import { InvalidWorkerTuningError, rootUpdatesSetting } from '../../../src/worker/config';

/** A call that stays in flight until the test ends it. */
function pending<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every settled promise run its continuations. */
const drain = () => new Promise<void>((r) => setImmediate(r));

describe("a tree root's update gate", () => {
  it('keeps at most `limit` calls to one root in flight and starts the waiting ones in the order they came', async () => {
    const gate = new RootUpdateGate(3);
    const calls = Array.from({ length: 8 }, () => pending<number>());
    const started: number[] = [];
    let inFlight = 0;
    let most = 0;
    const results = calls.map((c, i) =>
      gate.run('root-a', async () => {
        started.push(i);
        most = Math.max(most, ++inFlight);
        try {
          return await c.promise;
        } finally {
          inFlight--;
        }
      }),
    );
    const settledAll = Promise.allSettled(results);
    await drain();
    expect(started).toEqual([0, 1, 2]);
    expect(gate.load('root-a')).toEqual({ running: 3, waiting: 5 });
    // Ended out of order (one of them failing): each end lets exactly the next waiting call go.
    calls[1]!.resolve(1);
    await drain();
    expect(started).toEqual([0, 1, 2, 3]);
    calls[0]!.reject(new Error('root refused'));
    await drain();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    for (const [i, c] of calls.entries()) c.resolve(i);
    const settled = await settledAll;
    expect(settled.map((s) => s.status)).toEqual(['rejected', ...Array.from({ length: 7 }, () => 'fulfilled')]);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
    // Nothing is kept for a root with nothing in flight.
    expect(gate.load('root-a')).toEqual({ running: 0, waiting: 0 });
  });

  it('counts each root apart: a busy root does not hold back calls to another', async () => {
    const gate = new RootUpdateGate(1);
    const a = pending<string>();
    const first = gate.run('root-a', () => a.promise);
    const second = gate.run('root-a', () => Promise.resolve('a2'));
    await expect(gate.run('root-b', () => Promise.resolve('b1'))).resolves.toBe('b1');
    expect(gate.load('root-a')).toEqual({ running: 1, waiting: 1 });
    a.resolve('a1');
    await expect(Promise.all([first, second])).resolves.toEqual(['a1', 'a2']);
  });

  it('is one per process and limit (every worker of a process shares it), and refuses a limit below 1', () => {
    expect(processRootGate()).toBe(processRootGate(ROOT_UPDATES_DEFAULT));
    expect(processRootGate(2)).not.toBe(processRootGate());
    expect(processRootGate().limit).toBe(ROOT_UPDATES_DEFAULT);
    expect(() => new RootUpdateGate(0)).toThrow(RangeError);
  });

  it('reads FORKFLOW_ROOT_UPDATES as a positive whole number, and names it when it is not one', () => {
    expect(rootUpdatesSetting({})).toBeUndefined();
    expect(rootUpdatesSetting({ FORKFLOW_ROOT_UPDATES: ' 2 ' })).toBe(2);
    expect(() => rootUpdatesSetting({ FORKFLOW_ROOT_UPDATES: '0' })).toThrow(InvalidWorkerTuningError);
    expect(() => rootUpdatesSetting({ FORKFLOW_ROOT_UPDATES: 'many' })).toThrow(/FORKFLOW_ROOT_UPDATES/);
  });
});
