/**
 * Runs a model-supplied regular expression over file text in a worker thread, so that a
 * catastrophically backtracking pattern (`(a+)+$`) can be stopped: JavaScript regexes
 * cannot be interrupted, and one running on the main thread would also stop heartbeats
 * and cancellation. The worker is plain JavaScript evaluated from a string so it runs
 * the same from `src/` under tests and from `lib/` in production.
 */
import { Worker } from 'node:worker_threads';
import { ToolAbortError } from './outcome';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.source, workerData.flags);
parentPort.postMessage({ ready: true });
parentPort.on('message', (msg) => {
  const lines = msg.text.split('\\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const hits = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].endsWith('\\r') ? lines[i].slice(0, -1) : lines[i];
    if (re.test(line)) hits.push(i);
  }
  parentPort.postMessage({ id: msg.id, hits });
});
`;

/** Result of matching one text: matching line indices (0-based), or the budget ran out. */
export type MatchResult = { kind: 'hits'; lines: number[] } | { kind: 'timeout' };

/** A compiled pattern, or why it does not compile. */
export type CompiledPattern = { ok: true; source: string; flags: string } | { ok: false; message: string };

/**
 * Compiles with the `u` flag when the pattern allows it (Unicode-aware classes and case
 * folding), else without (so ripgrep habits like `\-` still work).
 */
export function compilePattern(pattern: string, caseInsensitive: boolean): CompiledPattern {
  const base = caseInsensitive ? 'i' : '';
  try {
    new RegExp(pattern, base + 'u');
    return { ok: true, source: pattern, flags: base + 'u' };
  } catch {
    try {
      new RegExp(pattern, base);
      return { ok: true, source: pattern, flags: base };
    } catch (err) {
      return { ok: false, message: err instanceof Error ? err.message : String(err) };
    }
  }
}

/** One worker holding one compiled pattern; match texts one at a time, then `close()`. */
export class LineMatcher {
  private readonly worker: Worker;
  private nextId = 0;
  private pending: { id: number; settle: (r: MatchResult | Error) => void } | undefined;
  private failure: Error | undefined;
  /** Settles when the worker has compiled the pattern: the budget counts matching, not a thread's start (slow on a busy host). */
  private readonly ready: Promise<Error | undefined>;

  constructor(pattern: { source: string; flags: string }) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: pattern, resourceLimits: { maxOldGenerationSizeMb: 512 } });
    let settleReady: (err: Error | undefined) => void = () => undefined;
    this.ready = new Promise((resolve) => (settleReady = resolve));
    this.worker.on('message', (msg: { ready?: true; id?: number; hits?: number[] }) => {
      if (msg.ready) settleReady(undefined);
      else if (this.pending && this.pending.id === msg.id) this.pending.settle({ kind: 'hits', lines: msg.hits ?? [] });
    });
    const die = (err: Error): void => {
      this.failure ??= err;
      settleReady(err);
      this.pending?.settle(err);
    };
    this.worker.on('error', die);
    this.worker.on('exit', (code) => die(new Error(`regex worker exited with code ${code}`)));
  }

  /**
   * Matches `text` line by line within `budgetMs`; on timeout the worker is terminated
   * and this matcher is unusable. Throws `ToolAbortError` if `signal` fires.
   */
  async match(text: string, budgetMs: number, signal: AbortSignal): Promise<MatchResult> {
    if (this.failure) throw this.failure;
    if (signal.aborted) throw new ToolAbortError();
    await this.whenReady(signal);
    const id = this.nextId++;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      const result = await new Promise<MatchResult | Error>((resolve) => {
        this.pending = { id, settle: resolve };
        timer = setTimeout(() => resolve({ kind: 'timeout' }), budgetMs);
        onAbort = () => resolve(new ToolAbortError());
        signal.addEventListener('abort', onAbort, { once: true });
        this.worker.postMessage({ id, text });
      });
      if (result instanceof Error) throw result;
      return result;
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
      this.pending = undefined;
    }
  }

  /** Waits for the worker's start (no budget: a start does not backtrack); throws if it died or `signal` fired. */
  private async whenReady(signal: AbortSignal): Promise<void> {
    let onAbort: (() => void) | undefined;
    try {
      const failed = await Promise.race([this.ready, new Promise<Error>((resolve) => signal.addEventListener('abort', (onAbort = () => resolve(new ToolAbortError())), { once: true }))]);
      if (failed) throw failed;
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  /** Stops the worker (also mid-match). */
  async close(): Promise<void> {
    this.failure ??= new Error('matcher closed');
    await this.worker.terminate();
  }
}
