/**
 * Activities that set up and check where a fork may act: the AutoMem memory directory
 * (pinned when the fork starts, audited when it ends) and git worktrees (created before the
 * first turn, removed or kept after the terminal state is recorded). They run on the
 * worker that owns the workspace.
 */
import { realpath } from 'node:fs/promises';
import { ApplicationFailure } from '@temporalio/common';
import type { MemoryScope, PathEscapeReport, WorktreeRef, WorktreeResult } from '../shared/activity-io';
import { auditTouchedPaths } from './tools';
import { createWorktree, finishWorktree, isWorktreeError } from './worktree';

function worktreeFailure(err: unknown): unknown {
  if (!isWorktreeError(err)) return err;
  return ApplicationFailure.create({ type: `Worktree:${err.code}`, message: err.message, nonRetryable: !err.retryable });
}

export function createIsolationActivities(deps: { workspaceRoot: string; hostQueue?: string }) {
  return {
    /** Canonicalises the memory directory once, at the start of a memory fork. */
    async pinMemoryDir(input: { dir: string }): Promise<MemoryScope> {
      try {
        return { dir: input.dir, canonicalDir: await realpath(input.dir) };
      } catch (err) {
        throw ApplicationFailure.create({
          type: 'MemoryDirUnavailable',
          message: `The memory directory ${input.dir} cannot be used: ${(err as Error).message}. Create it first.`,
          nonRetryable: true,
        });
      }
    },

    /** Re-checks every path the fork wrote: anything now outside the memory directory is an escape. */
    async auditWrites(input: { scope: MemoryScope; paths: string[] }): Promise<PathEscapeReport[]> {
      const escapes = await auditTouchedPaths(input.paths, input.scope.canonicalDir);
      return escapes.map((e) => ({ path: e.path, reason: e.reason, detail: e.detail }));
    },

    async createWorktree(input: { repoRoot?: string; agentId: string }): Promise<WorktreeRef> {
      try {
        const wt = await createWorktree({ repoRoot: input.repoRoot ?? deps.workspaceRoot, agentId: input.agentId });
        return { path: wt.path, branch: wt.branch, baseCommit: wt.baseCommit, repoRoot: wt.repoRoot, ...(deps.hostQueue ? { taskQueue: deps.hostQueue } : {}) };
      } catch (err) {
        throw worktreeFailure(err);
      }
    },

    async finishWorktree(input: WorktreeRef): Promise<WorktreeResult> {
      try {
        return await finishWorktree(input);
      } catch (err) {
        throw worktreeFailure(err);
      }
    },
  };
}
