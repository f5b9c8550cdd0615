/**
 * A parent snapshot too large for its forks' window, compacted once where it is recorded
 * (src/workflows/snapshot/snapshot-workflow.ts) so that every sibling starts from the same
 * summary: when that is needed, and what the recording returns. Pure.
 */
import type { Usage } from '../messages-api/anthropic';
import type { CacheSafeParams } from '../wire/cache-safe-params';
import type { PrefixRef } from '../prefix/prefix';
import { estimateRequestTokens } from '../messages-api/request-tokens';
import { contextPolicyOf, thresholdTokens, type ContextManagementInput } from './policy';
import { resolveWindow } from './windows';

/** A compaction of the snapshot for forks with this window. */
export interface SnapshotCompaction {
  window: number;
  betas?: string[];
  /** Share of the window the most recent turns may keep verbatim. */
  keepRecent: number;
  instructions?: string;
}

/** What the snapshot workflow returns: the reference, and what compacting it cost (the client keeps the reference). */
export type SnapshotRecord = PrefixRef & { compaction?: { usage: Usage; summarised: number; kept: number } };

/**
 * `{ compact }` when forks with `fork`'s policy and window would start over their threshold
 * from `snapshot` (its estimated size; the directive's few tokens aside), else nothing. Every
 * policy but `off` compacts such a snapshot once, by forkflow: the provider would compact
 * each sibling's first request separately, into different summaries.
 */
export function snapshotCompactionFor(snapshot: CacheSafeParams, fork: { contextManagement?: ContextManagementInput; contextWindow?: number } | undefined): { compact?: SnapshotCompaction } {
  const policy = contextPolicyOf(fork?.contextManagement);
  if (policy.strategy === 'off') return {};
  const window = resolveWindow(snapshot.model, fork?.contextWindow);
  const size = estimateRequestTokens({ tools: snapshot.tools, system: snapshot.system, messages: snapshot.messages });
  if (size <= thresholdTokens(policy, window.tokens)) return {};
  return { compact: { window: window.tokens, ...(window.betas.length ? { betas: window.betas } : {}), keepRecent: policy.keepRecent, ...(policy.instructions ? { instructions: policy.instructions } : {}) } };
}
