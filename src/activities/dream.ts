/**
 * autoDream's activities: the scope's durable state (load with orphan recovery, scan record,
 * claim, settle with rollback), the session count and transcript staging (Temporal
 * visibility and queries), the lock holder (describe, terminate a stale one), and the review
 * of what the consolidation fork did (re-audit, memory diff). File work runs on the worker
 * that owns the memory directory; Temporal look-ups anywhere.
 */
import { mkdir, realpath } from 'node:fs/promises';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import type { PathEscapeReport } from '../shared/wire/activity-io';
import type { RunRef } from '../shared/prefix/prefix';
import type { MemoryChanges } from '../shared/dream/outcome';
import type { DreamState, DreamStateView } from '../shared/dream/state';
import { diffManifests, indexLines, manifestOf, removeRetired } from './consolidation/memory-diff';
import { assertStateOutsideMemory, readManifest, removeRunDir, sessionsDirOf, writeManifest } from './consolidation/run-dir';
import { countSessions, stageSessions } from './consolidation/sessions';
import { defaultStateDir, updateDreamState } from './consolidation/state-file';
import { startHeartbeat } from './heartbeat';
import { auditTouchedPaths } from './tools';

export { defaultStateDir, readDreamState, writeDreamState } from './consolidation/state-file';

/**
 * Who holds a scope's lock (its consolidation fork's workflow id) right now, and the
 * execution timeout it was started with (the server ends it then, whatever its workers do).
 */
export type LockHolderInfo = { running: false } | { running: true; runId: string; startedAt: string; executionTimeoutMs?: number };

export interface DreamActivityDeps {
  client: Client;
  /** The worker's default workspace root (the default state directory lives below it). */
  workspaceRoot: string;
}

const sameRun = (a: RunRef, b: RunRef) => a.workflowId === b.workflowId && a.runId === b.runId;

export function createDreamActivities(deps: DreamActivityDeps) {
  async function isRunning(run: RunRef): Promise<boolean> {
    try {
      return (await deps.client.workflow.getHandle(run.workflowId, run.runId).describe()).status.name === 'RUNNING';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  return {
    /**
     * Resolves the state directory and reads the state. A claim whose run is gone (terminated,
     * crashed past retries) is rolled back here, so a dead run cannot hold the time forward.
     */
    async dreamLoadState(input: { scope: string; memoryDir: string; stateDir?: string; workspaceRoot?: string }): Promise<DreamStateView> {
      const stateDir = input.stateDir ?? defaultStateDir(input.workspaceRoot ?? deps.workspaceRoot, input.scope);
      await assertStateOutsideMemory(stateDir, input.memoryDir);
      return updateDreamState<DreamStateView>(stateDir, input.scope, async (state) => {
        const claim = state.claim;
        if (!claim || (await isRunning(claim.by))) return { state, value: { stateDir, state } };
        await removeRunDir(stateDir, claim.runKey);
        const next: DreamState = { ...state, lastConsolidatedAt: claim.previous, claim: null };
        return { state: next, value: { stateDir, state: next, recovered: { claim, restoredTo: claim.previous } } };
      });
    },

    /** Records that sessions were scanned now (the scan throttle's clock). */
    async dreamRecordScan(input: { stateDir: string; scope: string; at: string }): Promise<void> {
      await updateDreamState(input.stateDir, input.scope, (state) => ({ state: { ...state, lastScanAt: input.at }, value: undefined }));
    },

    /** Sessions of the scope closed in (since, until], from visibility. */
    async dreamCountSessions(input: { scope: string; since: string | null; until: string }): Promise<number> {
      return countSessions(deps.client, input.scope, input.since, input.until);
    },

    async dreamLockHolder(input: { workflowId: string }): Promise<LockHolderInfo> {
      try {
        const d = await deps.client.workflow.getHandle(input.workflowId).describe();
        if (d.status.name !== 'RUNNING') return { running: false };
        const timeout = optionalTsToMs(d.raw.executionConfig?.workflowExecutionTimeout);
        return { running: true, runId: d.runId, startedAt: d.startTime.toISOString(), ...(timeout ? { executionTimeoutMs: timeout } : {}) };
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return { running: false };
        throw err;
      }
    },

    /** Terminates exactly that run of the lock holder (a newer run under the same id is left alone). */
    async dreamTakeOver(input: { workflowId: string; runId: string; reason: string }): Promise<void> {
      const handle = deps.client.workflow.getHandle(input.workflowId, input.runId);
      try {
        if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate(input.reason);
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    },

    /**
     * Stages the sessions' transcripts (read-only) and records the memory directory's manifest,
     * creating the memory directory if the scope has none yet.
     */
    async dreamPrepare(input: { stateDir: string; runKey: string; scope: string; memoryDir: string; since: string | null; until: string; maxSessions: number }) {
      const ctx = Context.current();
      // Beating before the first I/O: a large memory directory makes the manifest alone slow.
      const stopHeartbeat = startHeartbeat();
      try {
        await mkdir(input.memoryDir, { recursive: true });
        await assertStateOutsideMemory(input.stateDir, input.memoryDir);
        await removeRunDir(input.stateDir, input.runKey); // a leftover of an earlier attempt under this id
        await writeManifest(input.stateDir, input.runKey, await manifestOf(input.memoryDir));
        const staged = await stageSessions(deps.client, {
          scope: input.scope,
          since: input.since,
          until: input.until,
          max: input.maxSessions,
          dir: sessionsDirOf(input.stateDir, input.runKey),
          onProgress: () => ctx.heartbeat(),
        });
        return { sessionsDir: staged.dir, staged: staged.staged, total: staged.total, unavailable: staged.unavailable };
      } finally {
        stopHeartbeat();
      }
    },

    /**
     * Claims the consolidation: `lastConsolidatedAt` becomes `at`, remembering the value to
     * restore. A leftover claim of another run (a holder just taken over) is void: its
     * `previous` is what this run restores on failure.
     */
    async dreamClaim(input: { stateDir: string; scope: string; by: RunRef; lock: RunRef; at: string; runKey: string }): Promise<{ previous: string | null }> {
      return updateDreamState(input.stateDir, input.scope, async (state) => {
        const old = state.claim;
        if (old && !sameRun(old.by, input.by) && old.runKey !== input.runKey) await removeRunDir(input.stateDir, old.runKey);
        const previous = old && !sameRun(old.by, input.by) ? old.previous : state.lastConsolidatedAt;
        const claim = { by: input.by, lock: input.lock, at: input.at, previous, runKey: input.runKey };
        return { state: { ...state, lastConsolidatedAt: input.at, claim }, value: { previous } };
      });
    },

    /**
     * The dream's own check of the fork's work: every touched path re-audited against the
     * memory directory, retired (emptied) topic files removed when `prune`, and the change
     * set computed against the manifest taken before the fork.
     */
    async dreamReview(input: { stateDir: string; runKey: string; memoryDir: string; indexFile: string; touched: string[]; prune: boolean }): Promise<{ escapes: PathEscapeReport[]; changes: MemoryChanges; indexLines: number | null }> {
      const escapes = (await auditTouchedPaths(input.touched, input.memoryDir)).map((e) => ({ path: e.path, reason: e.reason, detail: e.detail }));
      if (input.prune && escapes.length === 0) await removeRetired(input.touched, await realpath(input.memoryDir), input.indexFile);
      const changes = diffManifests(await readManifest(input.stateDir, input.runKey), await manifestOf(input.memoryDir));
      return { escapes, changes, indexLines: await indexLines(input.memoryDir, input.indexFile) };
    },

    /**
     * Ends this run's claim: kept on success, rolled back to the previous time on failure. Only
     * this run's own claim is touched (a run that was taken over must not undo its successor's).
     * The run's staging folder is removed either way.
     */
    async dreamSettle(input: { stateDir: string; scope: string; by: RunRef; success: boolean; outcome: string; at: string; runKey: string }): Promise<{ lastConsolidatedAt: string | null; rolledBack: boolean }> {
      const result = await updateDreamState(input.stateDir, input.scope, (state) => {
        const claim = state.claim;
        if (!claim || !sameRun(claim.by, input.by)) return { state, value: { lastConsolidatedAt: state.lastConsolidatedAt, rolledBack: false } };
        const lastConsolidatedAt = input.success ? state.lastConsolidatedAt : claim.previous;
        const next: DreamState = { ...state, lastConsolidatedAt, claim: null, lastOutcome: { kind: input.outcome, at: input.at, by: input.by } };
        return { state: next, value: { lastConsolidatedAt, rolledBack: !input.success } };
      });
      await removeRunDir(input.stateDir, input.runKey);
      return result;
    },

    /** Removes a run's staging folder when it never claimed (the lock was taken meanwhile). */
    async dreamDiscard(input: { stateDir: string; runKey: string }): Promise<void> {
      await removeRunDir(input.stateDir, input.runKey);
    },
  };
}

export type DreamActivities = ReturnType<typeof createDreamActivities>;
