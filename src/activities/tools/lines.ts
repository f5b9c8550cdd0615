/**
 * Streaming line splitter with a per-line cap, for Read: a file of one 500 MB line must
 * not be held in memory just to show its first 2000 characters. Counts each line's full
 * length so the caller can say how much was cut.
 */
import { StringDecoder } from 'node:string_decoder';

/** One line of a file, possibly cut. */
export interface CappedLine {
  /** At most `cap` characters of the line, without the newline. */
  text: string;
  /** The line's full length in characters. */
  length: number;
}

/**
 * Yields the lines of a byte stream (UTF-8), each cut to `cap` characters. A final line
 * without a newline is yielded; a trailing newline does not produce an empty line.
 */
export async function* cappedLines(chunks: AsyncIterable<Buffer | string>, cap: number): AsyncGenerator<CappedLine> {
  const decoder = new StringDecoder('utf8');
  let text = '';
  let length = 0;
  const take = (piece: string): void => {
    if (text.length < cap) text += piece.slice(0, cap - text.length);
    length += piece.length;
  };
  const feed = function* (s: string): Generator<CappedLine> {
    let start = 0;
    for (;;) {
      const nl = s.indexOf('\n', start);
      take(nl === -1 ? s.slice(start) : s.slice(start, nl));
      if (nl === -1) return;
      yield { text, length };
      text = '';
      length = 0;
      start = nl + 1;
    }
  };
  for await (const chunk of chunks) {
    yield* feed(typeof chunk === 'string' ? chunk : decoder.write(chunk));
  }
  yield* feed(decoder.end());
  if (length > 0) yield { text, length };
}
