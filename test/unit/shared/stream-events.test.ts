/**
 * Stream events (issue 15): the schemas a client parses every item with, and the assembly rule
 * that drops an abandoned attempt's deltas.
 */
import { StreamAssembler } from '../../../src/shared/stream-assembly';
import { parseStreamEvent, streamPreview, STREAM_PREVIEW_CHARS, type StreamEvent } from '../../../src/shared/stream-events';

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
