/**
 * The consolidation fork as a child workflow: its input (AutoMem filter, no transcript, the
 * four-phase directive), its start under the scope's lock id, and how its end is read back
 * (a result, a ForkFailed result, a server-side timeout, or something else).
 */
import {
  CancellationScope,
  ChildWorkflowFailure,
  isCancellation,
  patched,
  startChild,
  TerminatedFailure,
  TimeoutFailure,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import { WORKFLOW_TYPES } from '../../shared/wire/constants';
import type { DreamConfig } from '../../shared/dream/config';
import { staleAfterMs } from '../../shared/dream/gates';
import { DREAM_FORK_LABEL, DREAM_QUERY_SOURCE, dreamLockId } from '../../shared/dream/names';
import type { ForkEnd } from '../../shared/dream/outcome';
import type { ForkInputJson } from '../../shared/wire/fork-input';
import { forkResultOf } from '../../shared/wire/failures';
import { HIDDEN_MEMO } from '../../shared/wire/hidden-memo';
import { SA } from '../../shared/wire/search-attributes';
import type { ForkResult } from '../../shared/wire/status';

type ForkWorkflowFn = (input: ForkInputJson) => Promise<ForkResult>;
export type ForkChild = ChildWorkflowHandle<ForkWorkflowFn>;

/**
 * The consolidation fork's input. It may read its scope's state folder, where the staged
 * transcripts are (`sessionsDir` is `<state>/runs/<run>/sessions`): that folder lies in
 * forkflow's own `.forkflow/`, hidden from forks unless allowed.
 */
export function consolidationForkInput(cfg: DreamConfig, prompt: string, sessionsDir?: string): ForkInputJson {
  return {
    prompt,
    forkLabel: DREAM_FORK_LABEL,
    querySource: DREAM_QUERY_SOURCE,
    maxTurns: cfg.maxTurns,
    timeout: cfg.forkTimeout,
    skipTranscript: true,
    toolFilter: { kind: 'autoMem', memoryDir: cfg.memoryDir },
    ...(sessionsDir ? { sandbox: { readPaths: [sessionsDir.split('/').slice(0, -3).join('/') || '/'] } } : {}),
    budget: { maxTokens: cfg.maxTokens },
    mode: 'child',
    overrides: { agentId: dreamLockId(cfg.memoryScope) },
    ...(cfg.workspace ? { workspace: cfg.workspace } : {}),
    ...(cfg.model ? { model: cfg.model } : {}),
    // Nobody waits on a dream: half price through the Message Batches API (interactive where the provider has none).
    ...(cfg.delivery === 'batch' ? { delivery: 'batch' as const } : {}),
  };
}

/** Before this patch the consolidation fork (skipTranscript) started without the hidden memo, so listings showed it. */
export const DREAM_FORK_HIDDEN_PATCH = 'forkflow-dream-fork-hidden-1';

/**
 * Starts the fork under the lock id. Rejects with WorkflowExecutionAlreadyStartedError while
 * another run holds the lock. The server ends a fork that outlives its own timeout by the
 * stale grace (no worker made progress on it), so even a lost holder frees the lock.
 */
export function startConsolidationFork(cfg: DreamConfig, input: ForkInputJson): Promise<ForkChild> {
  const scope = cfg.memoryScope;
  return startChild<ForkWorkflowFn>(WORKFLOW_TYPES.fork, {
    args: [input],
    workflowId: dreamLockId(scope),
    taskQueue: workflowInfo().taskQueue,
    // The lock must not outlive its owner: a dream that ends (or is terminated) takes its fork with it.
    parentClosePolicy: 'TERMINATE',
    workflowExecutionTimeout: staleAfterMs(cfg),
    staticSummary: `${DREAM_FORK_LABEL}: consolidate memory scope ${scope}`,
    // It runs with skipTranscript: hidden from listings, as a client-started one is.
    ...(patched(DREAM_FORK_HIDDEN_PATCH) ? { memo: HIDDEN_MEMO } : {}),
    typedSearchAttributes: [
      { key: SA.agentId, value: dreamLockId(scope) },
      { key: SA.rootId, value: dreamLockId(scope) },
      { key: SA.label, value: DREAM_FORK_LABEL },
      { key: SA.querySource, value: DREAM_QUERY_SOURCE },
      { key: SA.state, value: 'running' },
      { key: SA.memoryScope, value: scope },
    ],
  });
}

/** Waits for the fork and says how it ended; only the dream's own cancellation propagates. */
export async function waitForFork(child: ForkChild): Promise<ForkEnd> {
  try {
    return { kind: 'returned', result: await child.result() };
  } catch (err) {
    if (isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
    if (err instanceof ChildWorkflowFailure) {
      const cause = err.cause;
      const failed = forkResultOf(cause);
      if (failed) return { kind: 'failed', result: failed };
      if (cause instanceof TimeoutFailure) return { kind: 'server_timeout', message: 'the consolidation fork made no progress within its timeout plus the stale grace (server timeout)' };
      if (cause instanceof TerminatedFailure) return { kind: 'lost', message: `the consolidation fork was terminated${cause.message ? `: ${cause.message}` : ''}` };
      return { kind: 'lost', message: `the consolidation fork failed: ${cause?.message ?? err.message}` };
    }
    throw err;
  }
}
