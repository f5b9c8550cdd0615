/**
 * autoDream's activity proxies, one per timeout profile: quick state-file updates, Temporal
 * look-ups, and the slower staging of session transcripts (heartbeating). Types only: the
 * activity code never enters the workflow bundle.
 */
import { proxyActivities, type RetryPolicy } from '@temporalio/workflow';
import type { DreamActivities } from '../../activities/dream';

const retry: RetryPolicy = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 };

/** The state file and the memory review: small file work on the memory directory's worker. */
export const dreamFiles = proxyActivities<Pick<DreamActivities, 'dreamLoadState' | 'dreamRecordScan' | 'dreamClaim' | 'dreamReview' | 'dreamSettle' | 'dreamDiscard'>>({
  startToCloseTimeout: '2m',
  retry,
});

/** Reading transcripts replays each session on a worker: minutes for a busy scope, so it heartbeats. */
export const dreamStaging = proxyActivities<Pick<DreamActivities, 'dreamPrepare'>>({
  startToCloseTimeout: '15m',
  heartbeatTimeout: '1m',
  retry: { ...retry, maximumAttempts: 3 },
});

/** Visibility and the lock holder: Temporal calls from any worker. */
export const dreamTemporal = proxyActivities<Pick<DreamActivities, 'dreamCountSessions' | 'dreamLockHolder' | 'dreamTakeOver'>>({
  startToCloseTimeout: '1m',
  retry,
});
