/**
 * Waiting on an observed condition (a query answer, a file), never on the clock: polls until
 * `check` returns a value, failing with `what` when the deadline passes.
 */
export async function waitFor<T>(check: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError instanceof Error ? ` (last error: ${lastError.message})` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** What `p` rejects with, or undefined when it resolves (for asserting on an expected failure). */
export function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (e: unknown) => e,
  );
}
