/**
 * The model activity's live publisher when its workflow is briefly out of reach: a send that
 * fails is sent again with the same `from` (the workflow keeps each event once), so a call
 * retried after a worker's crash still streams; a workflow that never answers costs the call
 * nothing but its stream.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { LivePublisher } from '../../../src/activities/model/live-publisher';
import type { StreamLiveAck, StreamLiveInput } from '../../../src/shared/streams/stream-events';

type Send = (input: StreamLiveInput) => Promise<StreamLiveAck>;

function textDelta(text: string): Anthropic.Messages.RawMessageStreamEvent {
  return { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } };
}

/** A publisher for turn 2, attempt 2 (a retried call), watched from the start. */
function publisher(send: Send): LivePublisher {
  return new LivePublisher(send, 'wf-live-unit', 'agent-live-unit', 2, 2, { batchIntervalMs: 5 }, () => Promise.resolve(true), true, false);
}

test('a send that fails is sent again with the same from; every event reaches the workflow once', async () => {
  const calls: StreamLiveInput[] = [];
  const kept = new Map<number, unknown>();
  let failures = 2;
  const send: Send = (input) => {
    calls.push(structuredClone(input));
    if (failures-- > 0) return Promise.reject(new Error('workflow unreachable (its worker restarting)'));
    input.events.forEach((e, i) => kept.set(input.from + i, e));
    return Promise.resolve({ kept: input.events.length, lastSeq: 1000 + input.from + input.events.length - 1, readUpTo: 1_000_000 });
  };
  const p = publisher(send);
  p.start('m');
  for (const w of ['one ', 'two ', 'three']) p.onEvent(textDelta(w));
  await p.close();

  // The first batch (turn-start and attempt-abandoned) failed twice; each send after it began
  // with the same events at the same from (with whatever queued meanwhile after them).
  expect(calls.length).toBeGreaterThanOrEqual(3);
  for (const again of calls.slice(1, 3)) {
    expect(again.from).toBe(0);
    expect(again.events.slice(0, calls[0]!.events.length)).toEqual(calls[0]!.events);
  }
  const events = [...kept.entries()].sort(([a], [b]) => a - b).map(([, e]) => e as { type: string; text?: string });
  expect([...kept.keys()].sort((a, b) => a - b)).toEqual(events.map((_, i) => i));
  expect(events.slice(0, 2).map((e) => e.type)).toEqual(['turn-start', 'attempt-abandoned']);
  expect(
    events
      .filter((e) => e.type === 'text-delta')
      .map((e) => e.text)
      .join(''),
  ).toBe('one two three');
});

test('a workflow that never answers: the publisher gives up, close() returns, and nothing is sent after it', async () => {
  jest.useFakeTimers();
  try {
    let calls = 0;
    const send: Send = () => {
      calls++;
      return Promise.reject(new Error('unreachable'));
    };
    const p = publisher(send);
    p.start('m');
    p.onEvent(textDelta('lost'));
    const closing = p.close();
    await jest.advanceTimersByTimeAsync(30_000);
    await closing;
    const after = calls;
    // Sent again a few times (each pause doubling to 1 s), not once per 100 ms for 30 s.
    expect(after).toBeGreaterThan(1);
    expect(after).toBeLessThan(30);
    await jest.advanceTimersByTimeAsync(30_000);
    expect(calls).toBe(after);
  } finally {
    jest.useRealTimers();
  }
});
