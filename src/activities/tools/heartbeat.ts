/**
 * Heartbeats from long tool work, throttled to about once a second: Temporal only needs
 * one per heartbeat timeout, and a loop over thousands of files must not send thousands.
 */
import type { ToolContext } from './types';

/** Minimum gap between two heartbeats sent from a loop. */
export const HEARTBEAT_INTERVAL_MS = 1000;

/**
 * Returns `beat(details)`, which forwards to `ctx.heartbeat` at most once per interval.
 * The first call always goes through, so even short work reports once.
 */
export function throttledHeartbeat(ctx: ToolContext, tool: string): (details?: Record<string, unknown>) => void {
  let last = -Infinity;
  return (details) => {
    const now = Date.now();
    if (now - last < HEARTBEAT_INTERVAL_MS) return;
    last = now;
    ctx.heartbeat({ tool, ...details });
  };
}
