/**
 * What became of an activity that did not return, in the terms the tool round decides by:
 * nobody took it (its queue is not served), it was lost on the way (a timeout: the worker
 * died, or the call ran past its limit), or it threw (the service's own failure).
 */
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';

export type CallFailure =
  | { kind: 'unserved' }
  | { kind: 'lost'; how: 'heartbeat' | 'timeout' }
  | { kind: 'threw'; message: string; type?: string; retryable: boolean }
  | { kind: 'other'; message: string };

export function callFailure(err: unknown): CallFailure {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) {
    if (cause.timeoutType === 'SCHEDULE_TO_START') return { kind: 'unserved' };
    return { kind: 'lost', how: cause.timeoutType === 'HEARTBEAT' ? 'heartbeat' : 'timeout' };
  }
  if (cause instanceof ApplicationFailure) return { kind: 'threw', message: cause.message, ...(cause.type ? { type: cause.type } : {}), retryable: !cause.nonRetryable };
  return { kind: 'other', message: cause instanceof Error ? cause.message : String(cause) };
}

/** Seconds, for messages. */
export const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`;
