/**
 * Bounded capture of a command's output: the first and the last part are kept and the
 * middle is replaced by a visible `[... N chars truncated ...]` marker, because both the
 * start (what ran) and the end (the error, the summary) of long output matter.
 */

/** Keeps at most `headChars + tailChars` characters of everything pushed. */
export class HeadTailBuffer {
  private head = '';
  private tail = '';
  private total = 0;

  constructor(
    private readonly headChars: number,
    private readonly tailChars: number,
  ) {}

  push(chunk: string): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.head.length < this.headChars) {
      const room = this.headChars - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
    }
    if (rest.length > 0) {
      this.tail += rest;
      if (this.tail.length > this.tailChars) this.tail = this.tail.slice(-this.tailChars);
    }
  }

  /** Characters pushed so far, kept or not. */
  get length(): number {
    return this.total;
  }

  /** The kept text, with a marker where characters were dropped. */
  text(): string {
    const dropped = this.total - this.head.length - this.tail.length;
    if (dropped === 0) return this.head + this.tail;
    return `${this.head}\n[... ${dropped} chars truncated ...]\n${this.tail}`;
  }
}
