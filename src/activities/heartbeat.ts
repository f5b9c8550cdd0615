/**
 * Keeps a long activity's heartbeat going. Cancellation reaches an activity only through
 * heartbeat responses, so the beat is frequent (the worker's throttle decides how many
 * actually reach the server); stop it in `finally`.
 */
import { Context } from '@temporalio/activity';

export function startHeartbeat(details?: () => unknown): () => void {
  const ctx = Context.current();
  const timeoutMs = ctx.info.heartbeatTimeoutMs ?? 0;
  if (!timeoutMs) return () => undefined;
  // No beat at start: a short activity is done before it matters, and each beat is an RPC.
  const beat = () => ctx.heartbeat(details?.());
  const timer = setInterval(beat, Math.min(500, Math.max(50, timeoutMs / 2)));
  return () => clearInterval(timer);
}
