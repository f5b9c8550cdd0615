/**
 * A consolidation once the cheap gates have passed: the lock (the fork's fixed workflow id;
 * a stale holder is terminated and taken over), the staged transcripts, the fork, the dream's
 * own review of what it wrote, and the claim on "last consolidated" settled — kept on success,
 * rolled back on any failure, cancellation included.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ActivityFailure, CancellationScope, isCancellation, workflowInfo } from '@temporalio/workflow';
import type { DreamConfig } from '../../shared/dream/config';
import { staleAfterMs } from '../../shared/dream/gates';
import { dreamLockId, runKeyOf } from '../../shared/dream/names';
import { countChanges, forkSummaryOf, verdictOf, type DreamOutcome, type DreamRunInfo, type ForkEnd, type LockHolder, type MemoryChanges, type Takeover } from '../../shared/dream/outcome';
import { consolidationPrompt } from '../../shared/dream/prompt';
import type { DreamStateView } from '../../shared/dream/state';
import { dreamFiles, dreamStaging, dreamTemporal } from './activities';
import { consolidationForkInput, startConsolidationFork, waitForFork, type ForkChild } from './fork-child';

export interface ConsolidationContext {
  cfg: DreamConfig;
  /** Gate time (ms): the workflow clock or the config's `now`. */
  now: number;
  run: DreamRunInfo;
  view: DreamStateView;
  /** Task queue of the worker that owns the memory directory. */
  filesQueue: string;
}

const NO_CHANGES: MemoryChanges = { created: [], updated: [], removed: [] };

function messageOf(err: unknown): string {
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}

/** The lock before any work: blocked by a live holder, or free (after taking over a stale one). */
async function checkLock(c: ConsolidationContext): Promise<{ blocked: LockHolder } | { takeover?: Takeover }> {
  const workflowId = dreamLockId(c.cfg.memoryScope);
  const holder = await dreamTemporal.dreamLockHolder.executeWithOptions({ summary: 'who holds the lock' }, [{ workflowId }]);
  if (!holder.running) return {};
  // A holder started with a longer limit than ours is given that long: until then the server may still end it.
  const staleAfter = Math.max(staleAfterMs(c.cfg), holder.executionTimeoutMs ?? 0);
  const info: LockHolder = { workflowId, runId: holder.runId, startedAt: holder.startedAt, runningForMs: c.now - Date.parse(holder.startedAt), staleAfterMs: staleAfter };
  if (info.runningForMs <= info.staleAfterMs) return { blocked: info };
  // Running far past its own timeout means no worker is making progress on it (its queue lost its workers, or its
  // workflow task keeps failing) and nothing will end it: it would never release the lock by itself.
  const reason = `stale consolidation lock of scope ${c.cfg.memoryScope}: running for ${Math.round(info.runningForMs / 1000)} s, beyond its timeout plus grace (${Math.round(info.staleAfterMs / 1000)} s); taken over by ${workflowInfo().workflowId}`;
  await dreamTemporal.dreamTakeOver.executeWithOptions({ summary: 'terminate the stale lock holder' }, [{ workflowId, runId: holder.runId, reason }]);
  return { takeover: { workflowId, runId: holder.runId, startedAt: holder.startedAt, reason } };
}

function lockBlocked(c: ConsolidationContext, holder: LockHolder): DreamOutcome {
  const reason = `another consolidation of scope ${c.cfg.memoryScope} holds the lock (${holder.workflowId}, run ${holder.runId}, running for ${Math.round(holder.runningForMs / 1000)} s)`;
  return { ...c.run, kind: 'lock_blocked', reason, holder };
}

/** Runs the consolidation; see the file header. */
export async function consolidate(c: ConsolidationContext): Promise<DreamOutcome> {
  const lock = await checkLock(c);
  if ('blocked' in lock) return lockBlocked(c, lock.blocked);
  const takeover = lock.takeover;

  const info = workflowInfo();
  const by = { workflowId: info.workflowId, runId: info.runId };
  const runKey = runKeyOf(info.workflowId);
  const { stateDir, state } = c.view;
  const since = state.lastConsolidatedAt;
  const onFiles = (summary: string) => ({ taskQueue: c.filesQueue, summary });
  const attemptBase = { sessionsReviewed: 0, changes: NO_CHANGES, lastConsolidatedAt: since, rolledBack: false, ...(takeover ? { takeover } : {}) };

  let staged: { sessionsDir: string; staged: number };
  try {
    staged = await dreamStaging.dreamPrepare.executeWithOptions(onFiles('stage session transcripts'), [
      { stateDir, runKey, scope: c.cfg.memoryScope, memoryDir: c.cfg.memoryDir, since, until: c.run.at, maxSessions: c.cfg.maxSessions },
    ]);
  } catch (err) {
    if (isCancellation(err)) throw err;
    await CancellationScope.nonCancellable(() => dreamFiles.dreamDiscard.executeWithOptions(onFiles('discard staging'), [{ stateDir, runKey }]));
    return { ...c.run, ...attemptBase, kind: 'errored', error: `could not stage the sessions: ${messageOf(err)}` };
  }

  const prompt = consolidationPrompt({
    scope: c.cfg.memoryScope,
    memoryDir: c.cfg.memoryDir,
    indexFile: c.cfg.indexFile,
    maxIndexLines: c.cfg.maxIndexLines,
    sessionsDir: staged.sessionsDir,
    sessionsStaged: staged.staged,
    since,
    extraInstructions: c.cfg.extraInstructions,
  });
  let child: ForkChild;
  try {
    child = await startConsolidationFork(c.cfg, consolidationForkInput(c.cfg, prompt, staged.sessionsDir));
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    // Another run took the lock between the check and the start.
    await dreamFiles.dreamDiscard.executeWithOptions(onFiles('discard staging'), [{ stateDir, runKey }]);
    const holder = await dreamTemporal.dreamLockHolder.executeWithOptions({ summary: 'who holds the lock' }, [{ workflowId: dreamLockId(c.cfg.memoryScope) }]);
    const startedAt = holder.running ? holder.startedAt : c.run.at;
    return lockBlocked(c, { workflowId: dreamLockId(c.cfg.memoryScope), runId: holder.running ? holder.runId : '', startedAt, runningForMs: c.now - Date.parse(startedAt), staleAfterMs: staleAfterMs(c.cfg) });
  }

  const settle = (success: boolean, outcome: string) =>
    CancellationScope.nonCancellable(() =>
      dreamFiles.dreamSettle.executeWithOptions(onFiles(success ? 'keep last consolidated time' : 'roll back last consolidated time'), [
        { stateDir, scope: c.cfg.memoryScope, by, success, outcome, at: c.run.at, runKey },
      ]),
    );

  const attempted = { ...attemptBase, sessionsReviewed: staged.staged };
  let end: ForkEnd;
  try {
    await dreamFiles.dreamClaim.executeWithOptions(onFiles('claim the consolidation'), [
      { stateDir, scope: c.cfg.memoryScope, by, lock: { workflowId: child.workflowId, runId: child.firstExecutionRunId }, at: c.run.at, runKey },
    ]);
    end = await waitForFork(child);
  } catch (err) {
    const settled = await settle(false, isCancellation(err) ? 'cancelled' : 'errored');
    if (isCancellation(err)) throw err;
    return { ...c.run, ...attempted, ...settled, kind: 'errored', error: messageOf(err) };
  }
  return finish(c, child, end, attempted, settle);
}

async function finish(
  c: ConsolidationContext,
  child: ForkChild,
  end: ForkEnd,
  attempted: { sessionsReviewed: number; takeover?: Takeover },
  settle: (success: boolean, outcome: string) => Promise<{ lastConsolidatedAt: string | null; rolledBack: boolean }>,
): Promise<DreamOutcome> {
  const result = end.kind === 'returned' || end.kind === 'failed' ? end.result : undefined;
  const fork = result ? forkSummaryOf(result, child.firstExecutionRunId) : undefined;
  const verdict = verdictOf(end);
  const { stateDir } = c.view;
  const runKey = runKeyOf(workflowInfo().workflowId);
  let review: { escapes: { path: string; reason: string; detail: string }[]; changes: MemoryChanges; indexLines: number | null };
  try {
    review = await CancellationScope.nonCancellable(() =>
      dreamFiles.dreamReview.executeWithOptions({ taskQueue: c.filesQueue, summary: 'review what the fork wrote' }, [
        { stateDir, runKey, memoryDir: c.cfg.memoryDir, indexFile: c.cfg.indexFile, touched: result?.touched ?? [], prune: verdict.kind === 'completed' },
      ]),
    );
  } catch (err) {
    const settled = await settle(false, 'errored');
    return { ...c.run, ...attempted, ...settled, changes: NO_CHANGES, kind: 'errored', error: `could not review the fork's writes: ${messageOf(err)}`, ...(fork ? { fork } : {}) };
  }
  // The fork audits itself; this second look, by the dream, turns a "completed" with an escape into a failure too.
  const kind = verdict.kind === 'completed' && review.escapes.length > 0 ? 'escape_audit_failed' : verdict.kind;
  const settled = await settle(kind === 'completed', kind);
  const base = { ...c.run, ...attempted, ...settled, changes: review.changes };
  if (kind === 'completed' && fork) return { ...base, kind, memoriesChanged: countChanges(review.changes), indexLines: review.indexLines, fork };
  switch (kind) {
    case 'escape_audit_failed': {
      const error = verdict.kind === 'escape_audit_failed' ? verdict.error : `escape audit failed: ${review.escapes.map((e) => `${e.path} (${e.reason})`).join('; ')}`;
      return { ...base, kind, escapes: review.escapes, error, ...(fork ? { fork } : {}) };
    }
    case 'timed_out':
    case 'errored':
      return { ...base, kind, error: 'error' in verdict ? verdict.error : kind, ...(fork ? { fork } : {}) };
    default:
      return { ...base, kind: 'errored', error: 'the fork completed without a result', ...(fork ? { fork } : {}) };
  }
}
