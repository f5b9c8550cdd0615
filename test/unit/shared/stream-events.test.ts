/**
 * Stream events (issue 15): the schemas a client parses every item with, and the assembly rule
 * that drops an abandoned attempt's deltas.
 */
import { StreamAssembler } from '../../../src/shared/streams/stream-assembly';
import { firstOffsetFrom, LIVE_SEQ_PER_ATTEMPT, liveSeq, MAX_LIVE_ATTEMPT, parseStreamEvent, recordedSeq, streamPreview, STREAM_PREVIEW_CHARS, type StreamEvent } from '../../../src/shared/streams/stream-events';

const at = (seq: number, e: Record<string, unknown>): StreamEvent => parseStreamEvent({ v: 1, agentId: 'a-1', ...e }, seq);

describe('parseStreamEvent', () => {
  it('takes the seq from the stream offset', () => {
    expect(at(7, { type: 'text-delta', turn: 1, attempt: 1, index: 0, text: 'hi' })).toEqual({
      v: 1,
      agentId: 'a-1',
      type: 'text-delta',
      turn: 1,
      attempt: 1,
      index: 0,
      text: 'hi',
      seq: 7,
    });
  });

  it.each([
    ['an unknown type', { v: 1, agentId: 'a', type: 'exploit', turn: 1 }],
    ['another version', { v: 2, agentId: 'a', type: 'done', turn: 1, status: 'completed' }],
    ['an extra field', { v: 1, agentId: 'a', type: 'done', turn: 1, status: 'completed', html: '<script>' }],
    ['attempt 0', { v: 1, agentId: 'a', type: 'text-delta', turn: 1, attempt: 0, index: 0, text: 'x' }],
    ['a negative turn', { v: 1, agentId: 'a', type: 'turn-end', turn: -1, stopReason: 'end_turn' }],
    ['not an object', 'text'],
    ['an array', [1, 2]],
  ])('rejects %s', (_what, value) => {
    expect(() => parseStreamEvent(value, 0)).toThrow();
  });

  it('cuts previews and keeps the whole length', () => {
    const long = 'x'.repeat(STREAM_PREVIEW_CHARS + 10);
    expect(streamPreview(long)).toEqual({ preview: 'x'.repeat(STREAM_PREVIEW_CHARS), chars: STREAM_PREVIEW_CHARS + 10 });
    expect(streamPreview('short')).toEqual({ preview: 'short', chars: 5 });
  });
});

describe('StreamAssembler', () => {
  it('joins text blocks of a turn by newlines in block order', () => {
    const s = new StreamAssembler();
    s.apply(at(0, { type: 'turn-start', turn: 1, attempt: 1 }));
    s.apply(at(1, { type: 'text-delta', turn: 1, attempt: 1, index: 2, text: 'second' }));
    s.apply(at(2, { type: 'text-delta', turn: 1, attempt: 1, index: 0, text: 'fi' }));
    s.apply(at(3, { type: 'text-delta', turn: 1, attempt: 1, index: 0, text: 'rst' }));
    expect(s.text(1)).toBe('first\nsecond');
  });

  it('drops the deltas of an abandoned attempt, late ones included', () => {
    const s = new StreamAssembler();
    s.apply(at(0, { type: 'turn-start', turn: 1, attempt: 1 }));
    s.apply(at(1, { type: 'text-delta', turn: 1, attempt: 1, index: 0, text: 'partial ' }));
    s.apply(at(2, { type: 'turn-start', turn: 1, attempt: 2 }));
    s.apply(at(3, { type: 'attempt-abandoned', turn: 1, attempt: 2, abandonedAttempt: 1 }));
    s.apply(at(4, { type: 'text-delta', turn: 1, attempt: 1, index: 0, text: 'late' }));
    s.apply(at(5, { type: 'text-delta', turn: 1, attempt: 2, index: 0, text: 'whole answer' }));
    expect(s.text(1)).toBe('whole answer');
    expect(s.attempt(1)).toBe(2);
    expect(s.discarded(1)).toBe(2);
  });

  it('ignores an overlapping resume (seq already applied)', () => {
    const s = new StreamAssembler();
    const e = at(3, { type: 'text-delta', turn: 1, attempt: 1, index: 0, text: 'once' });
    expect(s.apply(e)).toBe(true);
    expect(s.apply(e)).toBe(false);
    expect(s.text(1)).toBe('once');
  });

  it('reports the latest non-empty turn text, like a fork result', () => {
    const s = new StreamAssembler();
    s.apply(at(0, { type: 'text-delta', turn: 1, attempt: 1, index: 0, text: 'one' }));
    s.apply(at(1, { type: 'tool-input-delta', turn: 2, attempt: 1, index: 0, partialJson: '{"a"' }));
    s.apply(at(2, { type: 'done', turn: 2, status: 'completed' }));
    expect(s.lastText()).toBe('one');
    expect(s.done).toBe(true);
  });
});

describe('seqs of recorded and live events', () => {
  it('orders a live event after every recorded event before it and before every one after it, across attempts', () => {
    // The log ends at 3 (offsets 0..2 recorded) while attempt 1 sends; then offset 3 is recorded; then attempt 2 sends.
    const seqs = [recordedSeq(2), liveSeq(3, 1, 0), liveSeq(3, 1, LIVE_SEQ_PER_ATTEMPT - 1), liveSeq(3, 2, 0), liveSeq(3, MAX_LIVE_ATTEMPT, LIVE_SEQ_PER_ATTEMPT - 1), recordedSeq(3), liveSeq(4, 1, 0)];
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs.every(Number.isSafeInteger)).toBe(true);
  });

  it('finds the first recorded offset at or after a seq', () => {
    expect(firstOffsetFrom(0)).toBe(0);
    expect(firstOffsetFrom(recordedSeq(5))).toBe(5);
    expect(firstOffsetFrom(recordedSeq(5) + 1)).toBe(6);
    expect(firstOffsetFrom(liveSeq(5, 1, 0))).toBe(5);
  });
});

describe('turn-end carries the reply whole', () => {
  it('wins over deltas that missed the end of it', () => {
    const a = new StreamAssembler();
    a.apply(at(1, { type: 'text-delta', turn: 1, attempt: 1, index: 0, text: 'The answer ' }));
    expect(a.text(1)).toBe('The answer ');
    a.apply(at(2, { type: 'turn-end', turn: 1, stopReason: 'end_turn', text: 'The answer is 42.', textChars: 17 }));
    expect(a.lastText()).toBe('The answer is 42.');
  });

  it('does not replace the deltas with a cut preview', () => {
    const a = new StreamAssembler();
    a.apply(at(1, { type: 'text-delta', turn: 1, attempt: 1, index: 0, text: 'abcdef' }));
    a.apply(at(2, { type: 'turn-end', turn: 1, stopReason: 'end_turn', text: 'abc', textChars: 6 }));
    expect(a.text(1)).toBe('abcdef');
  });
});
