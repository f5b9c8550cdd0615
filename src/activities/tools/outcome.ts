/**
 * Small constructors for tool outcomes and the one error a tool may throw: cancellation.
 * Everything else a model can cause is returned as data (`isError: true`), so a turn never
 * crashes on a bad tool call; only the activity's own cancellation unwinds the stack.
 */
import type { ToolOutcome } from './types';

/** A successful outcome. */
export function ok(content: string, touched?: string[]): ToolOutcome {
  return touched === undefined ? { content, isError: false } : { content, isError: false, touched };
}

/** A failure the model can act on; `content` should say what to do instead. */
export function fail(content: string): ToolOutcome {
  return { content, isError: true };
}

/**
 * Thrown when the caller's `AbortSignal` fires. Its `name` is `'AbortError'`, the name
 * Node and the Temporal SDK use for cancellation, so callers can test `err.name`.
 */
export class ToolAbortError extends Error {
  override readonly name = 'AbortError';
  constructor(message = 'The tool call was cancelled.') {
    super(message);
  }
}

/** True for any cancellation error (ours, Node's or the SDK's), by name. */
export function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === 'AbortError';
}

/** Throws a `ToolAbortError` if the signal has already fired. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new ToolAbortError();
}

/** The `code` of a Node system error (`ENOENT`, `ELOOP`, ...), if any. */
export function errnoCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = err.code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/** A message for an error of unknown shape. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
