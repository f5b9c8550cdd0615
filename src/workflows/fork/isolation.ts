/**
 * Where a fork may act, set up before its first turn and settled after its last:
 * - a worktree fork gets its own git worktree first (its opening names the paths), and the
 *   worktree is removed or kept only after the terminal state is recorded;
 * - a memory fork (autoMem filter) pins its memory directory at start, and every path it
 *   wrote is audited before its terminal state is decided: an escape fails the run;
 * - a named agent with a memory (definition `memory`) has its index read into its system prompt.
 */
import { ActivityFailure, workflowInfo } from '@temporalio/workflow';
import type { PathEscapeReport, WorktreeRef, WorktreeResult } from '../../shared/wire/activity-io';
import { memoryPromptOf } from '../../shared/agents/agent-memory';
import { FAILURE, failure } from '../../shared/wire/failures';
import type { ForkInput } from '../../shared/wire/fork-input';
import { isolation } from '../activities';
import type { ForkAgent } from './agent';

function onWorkspace(input: ForkInput, worktree?: WorktreeRef) {
  const taskQueue = worktree?.taskQueue ?? input.workspace?.taskQueue ?? workflowInfo().taskQueue;
  return { taskQueue };
}

/** Creates the fork's worktree (before its opening is written: the opening names its path). */
export async function openWorktree(agent: ForkAgent): Promise<void> {
  const { input, agentId } = agent;
  try {
    agent.workArea.setWorktree(await isolation.createWorktree.executeWithOptions({ ...onWorkspace(input), summary: 'create worktree' }, [{ repoRoot: input.workspace?.root, agentId }]));
  } catch (err) {
    const why = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
    throw failure(FAILURE.worktreeUnavailable, `Could not create the fork's worktree: ${why}`);
  }
}

export async function closeWorktree(agent: ForkAgent): Promise<WorktreeResult | undefined> {
  if (!agent.worktree) return undefined;
  return isolation.finishWorktree.executeWithOptions({ ...onWorkspace(agent.input, agent.worktree), summary: `remove or keep worktree${agent.worktree.taskQueue ? ` · on ${agent.worktree.taskQueue}` : ''}` }, [agent.worktree]);
}

export async function pinMemory(agent: ForkAgent): Promise<void> {
  const filter = agent.input.toolFilter;
  if (typeof filter !== 'object' || filter.kind !== 'autoMem') return;
  agent.workArea.pinMemory(await isolation.pinMemoryDir.executeWithOptions({ ...onWorkspace(agent.input), summary: 'pin memory directory' }, [{ dir: filter.memoryDir }]));
}

/**
 * A named agent's memory section for its system prompt (definition `memory`): its directory
 * opened and its index read on the workspace's worker, once, when the agent starts. A run that
 * continues it keeps the system prompt it started with (the prompt cache), so reads nothing.
 */
export async function openAgentMemory(agent: ForkAgent): Promise<string | undefined> {
  const { input } = agent;
  const memory = input.agentMemory;
  if (!memory || input.continuation) return undefined;
  const root = agent.workspaceRoot;
  const confinedTo = input.sandbox?.confinedTo;
  try {
    const found = await isolation.openAgentMemory.executeWithOptions({ ...onWorkspace(input, agent.worktree), summary: `read ${memory.scope} memory of ${memory.agent}` }, [
      { ...(root !== undefined ? { root } : {}), ...(confinedTo !== undefined ? { confinedTo } : {}), memory },
    ]);
    return memoryPromptOf(memory, found);
  } catch (err) {
    const why = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
    throw failure(FAILURE.agentMemoryUnavailable, `Could not open the agent's ${memory.scope} memory: ${why}`);
  }
}

/** Paths a memory fork wrote that are (now) outside its memory directory. */
export async function auditMemory(agent: ForkAgent): Promise<PathEscapeReport[]> {
  if (!agent.memory || agent.touched.length === 0) return [];
  return isolation.auditWrites.executeWithOptions({ ...onWorkspace(agent.input), summary: `audit ${agent.touched.length} written paths` }, [{ scope: agent.memory, paths: [...new Set(agent.touched)] }]);
}
