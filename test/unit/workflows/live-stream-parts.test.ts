/**
 * The pure parts of the fork's live stream (src/workflows/fork/): the live deltas kept for
 * readers (kept once per key, only this agent's live kinds of the call they claim, two turns at
 * most) and the `streamRead` page (recorded and live events in seq order, from a seq on). The
 * whole stream is exercised against a dev server by test/e2e/live-stream.test.ts.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { liveSeq, recordedSeq, STREAM_TOPIC, type StreamLiveInput } from '../../../src/shared/streams/stream-events';
import { LiveDeltas } from '../../../src/workflows/fork/live-deltas';
import { readPage, type RecordedLog } from '../../../src/workflows/fork/stream-read';

const delta = (turn: number, text: string, agentId = 'a1', attempt = 1) => ({ v: 1, type: 'text-delta', agentId, turn, attempt, text });
const batch = (turn: number, from: number, events: Record<string, unknown>[], attempt = 1): StreamLiveInput => ({ turn, attempt, from, events });

test('a batch sent again is kept once, with the seqs it got the first time', () => {
  const live = new LiveDeltas();
  const first = live.keep('a1', batch(1, 0, [delta(1, 'he'), delta(1, 'llo')]), 3);
  expect(first).toEqual({ kept: 2, lastSeq: liveSeq(3, 1, 1) });
  expect(live.keep('a1', batch(1, 0, [delta(1, 'he'), delta(1, 'llo')]), 3)).toEqual({ kept: 0, lastSeq: liveSeq(3, 1, 1) });
  expect(live.kept.map((e) => e.seq)).toEqual([liveSeq(3, 1, 0), liveSeq(3, 1, 1)]);
});

test("another agent's events, another turn's, recorded kinds and tool progress without a lane are not kept", () => {
  const live = new LiveDeltas();
  const out = live.keep('a1', batch(2, 0, [delta(2, 'x', 'a2'), delta(1, 'x'), { ...delta(2, 'x'), type: 'tool-result' }, { ...delta(2, 'x'), type: 'tool-progress' }, delta(2, 'ok')]), 0);
  expect(out).toEqual({ kept: 1, lastSeq: liveSeq(0, 1, 4) });
  expect(live.kept.map((e) => e.event.text)).toEqual(['ok']);
});

test('only the last two turns are kept', () => {
  const live = new LiveDeltas();
  live.keep('a1', batch(1, 0, [delta(1, 'one')]), 0);
  live.keep('a1', batch(2, 0, [delta(2, 'two')]), 1);
  expect(live.kept.map((e) => e.turn)).toEqual([1, 2]);
  live.keep('a1', batch(3, 0, [delta(3, 'three')]), 2);
  expect(live.kept.map((e) => e.turn)).toEqual([2, 3]);
});

test('a page holds recorded and live events in seq order, from the seq asked', () => {
  const item = (event: Record<string, unknown>) => ({ topic: STREAM_TOPIC, payload: defaultPayloadConverter.toPayload(event) });
  const recorded: RecordedLog = { base: 0, log: [item({ type: 'tool-use', n: 0 }), { topic: 'other', payload: defaultPayloadConverter.toPayload({}) }, item({ type: 'turn-end', n: 2 })] };
  const live = [{ seq: liveSeq(1, 1, 0), chars: 10, event: { type: 'text-delta', n: 'live' } }];
  const page = readPage(recorded, live, 0);
  expect(page.events.map((e) => e.n)).toEqual([0, 'live', 2]);
  expect(page.events.map((e) => e.seq)).toEqual([recordedSeq(0), liveSeq(1, 1, 0), recordedSeq(2)]);
  expect(page).toMatchObject({ more: false, lastSeq: recordedSeq(2) });
  expect(readPage(recorded, live, recordedSeq(0) + 1).events.map((e) => e.n)).toEqual(['live', 2]);
  expect(readPage(recorded, live, recordedSeq(2) + 1)).toEqual({ events: [], more: false });
});
