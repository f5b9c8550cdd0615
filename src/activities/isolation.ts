/**
 * Activities that set up and check where a fork may act: the AutoMem memory directory
 * (pinned when the fork starts, audited when it ends), a named agent's own memory directory
 * (opened and its index read when it starts) and git worktrees (created before the
 * first turn, removed or kept after the terminal state is recorded). They run on the
 * worker that owns the workspace.
 */
import { realpath } from 'node:fs/promises';
import { ApplicationFailure } from '@temporalio/common';
import type { MemoryScope, PathEscapeReport, WorktreeRef, WorktreeResult } from '../shared/wire/activity-io';
import { agentMemorySchema, type AgentMemory, type MemoryIndex } from '../shared/agents/agent-memory';
import { FAILURE, failure } from '../shared/wire/failures';
import { describeIssues } from '../shared/wire/fork-input-validation';
import { AgentMemoryError, openAgentMemory } from './agent-memory';
import { canonicalRoots, tenantHome } from './user-memory';
import { auditTouchedPaths } from './tools';
import { workspacePolicyOf } from './run-tool';
import { within } from './tools/sandbox';
import { resolveWorkspace } from './tools/workspace';
import { createWorktree, finishWorktree, isWorktreeError } from './worktree';

function worktreeFailure(err: unknown): unknown {
  if (!isWorktreeError(err)) return err;
  return ApplicationFailure.create({ type: `Worktree:${err.code}`, message: err.message, nonRetryable: !err.retryable });
}

export function createIsolationActivities(deps: { workspaceRoot: string; workspaceRoots?: readonly string[]; protectedPaths?: readonly string[]; hostQueue?: string; userMemoryRoot?: string }) {
  const policy = workspacePolicyOf(deps);
  return {
    /** Canonicalises the memory directory once, at the start of a memory fork; never one inside the worker's protected state. */
    async pinMemoryDir(input: { dir: string }): Promise<MemoryScope> {
      let canonicalDir: string;
      try {
        canonicalDir = await realpath(input.dir);
      } catch (err) {
        throw ApplicationFailure.create({
          type: 'MemoryDirUnavailable',
          message: `The memory directory ${input.dir} cannot be used: ${(err as Error).message}. Create it first.`,
          nonRetryable: true,
        });
      }
      if (policy.protectedPaths.some((h) => within(canonicalDir, h) || within(h, canonicalDir))) {
        throw ApplicationFailure.create({ type: 'MemoryDirUnavailable', message: `The memory directory ${input.dir} is, or holds, the worker's protected state; pick another.`, nonRetryable: true });
      }
      return { dir: input.dir, canonicalDir };
    },

    /**
     * A named agent's memory (definition `memory`): its directory in the agent's workspace
     * (`project`, `local`) or in its tenant's home (`user`), made if missing, and the start of
     * its index (agent-memory.ts).
     */
    async openAgentMemory(input: { root?: string; confinedTo?: string; memory: AgentMemory }): Promise<MemoryIndex> {
      // The name becomes a path: checked here too, whoever scheduled the call.
      const memory = agentMemorySchema.safeParse(input.memory);
      if (!memory.success) throw failure(FAILURE.agentMemoryUnavailable, `Invalid agent memory: ${describeIssues(memory.error).join('; ')}`);
      if (memory.data.scope === 'user') {
        // In the tenant's home, outside any workspace (user-memory.ts); the worker's protected state stays out of reach.
        try {
          return await openAgentMemory(await tenantHome(policy.userMemoryRoot, memory.data.tenant!, await canonicalRoots(policy.roots)), memory.data, { protectedPaths: policy.protectedPaths, hidden: [] });
        } catch (err) {
          if (err instanceof AgentMemoryError) throw failure(FAILURE.agentMemoryUnavailable, err.message);
          throw err;
        }
      }
      const workspace = await resolveWorkspace({ root: input.root, confinedTo: input.confinedTo }, policy);
      if (!workspace.ok) throw failure(FAILURE.agentMemoryUnavailable, workspace.message);
      try {
        return await openAgentMemory(workspace.root, memory.data, { protectedPaths: workspace.view.protected, hidden: workspace.view.hidden });
      } catch (err) {
        if (err instanceof AgentMemoryError) throw failure(FAILURE.agentMemoryUnavailable, err.message);
        throw err;
      }
    },

    /** Re-checks every path the fork wrote: anything now outside the memory directory is an escape. */
    async auditWrites(input: { scope: MemoryScope; paths: string[] }): Promise<PathEscapeReport[]> {
      const escapes = await auditTouchedPaths(input.paths, input.scope.canonicalDir);
      return escapes.map((e) => ({ path: e.path, reason: e.reason, detail: e.detail }));
    },

    async createWorktree(input: { repoRoot?: string; agentId: string }): Promise<WorktreeRef> {
      // The repository must be a workspace this worker serves, like any fork's workspace.
      const repo = await resolveWorkspace({ root: input.repoRoot }, policy);
      if (!repo.ok) throw ApplicationFailure.create({ type: 'Worktree:outside-roots', message: repo.message, nonRetryable: true });
      try {
        const wt = await createWorktree({ repoRoot: repo.root, agentId: input.agentId });
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
