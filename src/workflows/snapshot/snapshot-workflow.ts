/**
 * `snapshotWorkflow`: records a parent's cache-safe snapshot in Temporal history once, so any
 * number of forks can reference it instead of copying it (`client.forkMany`). It completes
 * at once and returns the reference; Temporal answers queries on a closed run by replaying
 * it, so the snapshot keeps serving its forks — also after they outlive it — until the
 * namespace's retention ends.
 *
 * A parent too large for its forks' context window is compacted here, once (`compact`): one
 * forkflow compaction call summarises its older turns, the summary message (and the most
 * recent turns, copied) joins the snapshot's conversation, and the reference says where
 * requests start. Every sibling then starts from the same compacted prefix, byte for byte.
 */
import { log, workflowInfo } from '@temporalio/workflow';
import { FAILURE, invalid } from '../../shared/wire/failures';
import { validateSnapshot } from '../../shared/wire/fork-input-validation';
import { type CacheSafeParams } from '../../shared/wire/cache-safe-params';
import { chainDigest, EMPTY_DIGEST } from '../../shared/base/hash';
import type { MessageParam } from '../../shared/messages-api/anthropic';
import type { SnapshotCompaction, SnapshotRecord } from '../../shared/context/snapshot';
import type { PrefixRef } from '../../shared/prefix/prefix';
import { snapshotContext } from '../../shared/prefix/snapshot';
import { summaryMaxTokens, summaryMessage } from '../../shared/context/summary';
import { recentTurnsStart } from '../../shared/context/view';
import { compactor } from '../activities';
import { mediaRulesFor } from '../fork/media-rules';
import { contextSummaryOf, prefixRefOf, registerConversationQueries, type ConversationHolder } from '../conversation-queries';

export async function snapshotWorkflow(raw: CacheSafeParams, opts: { compact?: SnapshotCompaction } = {}): Promise<SnapshotRecord> {
  const validated = validateSnapshot(raw);
  if (!validated.ok) {
    throw invalid(FAILURE.invalidSnapshot, 'Invalid snapshot', validated.issues);
  }
  // The caller's own objects, not zod's copy: their bytes are the cached prefix.
  const snapshot = raw;
  const context = snapshotContext(snapshot);
  let digest = EMPTY_DIGEST;
  for (const m of snapshot.messages) digest = chainDigest(digest, m);
  const holder: { -readonly [K in keyof ConversationHolder]: ConversationHolder[K] } = { base: 0, messages: [...snapshot.messages], digest, context, summary: contextSummaryOf(context) };
  registerConversationQueries(holder);
  const compaction = opts.compact ? await compact(holder, opts.compact) : undefined;
  const ref = prefixRefOf(holder);
  // The hashes of the request the snapshot was taken from, when the taker recorded them.
  return { ...ref, ...(snapshot.requestHashes && !compaction ? { requestHashes: snapshot.requestHashes } : {}), ...(compaction ? { compaction } : {}) };
}

async function compact(holder: { messages: MessageParam[]; digest: string; summary: ConversationHolder['summary']; cut?: PrefixRef['window'] }, c: SnapshotCompaction): Promise<SnapshotRecord['compaction']> {
  const info = workflowInfo();
  const count = holder.messages.length;
  const keepFrom = recentTurnsStart(holder.messages, 0, 0, Math.floor(c.window * c.keepRecent), mediaRulesFor(holder.messages));
  try {
    const result = await compactor.compactContext.executeWithOptions({ summary: `compaction of the snapshot · model ${holder.summary.model}` }, [
      {
        call: {
          run: { workflowId: info.workflowId, runId: info.runId },
          agentId: info.workflowId,
          turn: 1,
          messageCount: count,
          digest: holder.digest,
          contextKey: holder.summary.contextKey,
          context: { window: c.window, ...(c.betas?.length ? { betas: c.betas } : {}) },
        },
        keepFrom,
        compaction: 1,
        maxTokens: summaryMaxTokens(c.window),
        ...(c.instructions ? { instructions: c.instructions } : {}),
      },
    ]);
    const kept = holder.messages.slice(keepFrom, count);
    for (const m of [summaryMessage(result.summary, { compaction: 1, turn: 0, from: 0, to: keepFrom }), ...kept]) {
      holder.messages.push(m);
      holder.digest = chainDigest(holder.digest, m);
    }
    holder.cut = { from: count, compactions: 1 };
    return { usage: result.usage, summarised: keepFrom, kept: kept.length };
  } catch (err) {
    // Not fatal: the forks start from the whole snapshot, and compact on their own.
    log.warn('snapshot compaction failed; forks start from the whole snapshot', { error: err instanceof Error ? err.message : String(err) });
    return undefined;
  }
}
