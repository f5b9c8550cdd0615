/**
 * `snapshotWorkflow`: records a parent's cache-safe snapshot in Temporal history once, so any
 * number of forks can reference it instead of copying it (`client.forkMany`). It completes
 * at once and returns the reference; Temporal answers queries on a closed run by replaying
 * it, so the snapshot keeps serving its forks — also after they outlive it — until the
 * namespace's retention ends.
 */
import { FAILURE, invalid } from '../../shared/failures';
import { validateSnapshot, type CacheSafeParams } from '../../shared/fork-input';
import { chainDigest, EMPTY_DIGEST } from '../../shared/hash';
import type { PrefixRef } from '../../shared/prefix';
import { snapshotContext } from '../../shared/snapshot';
import { contextSummaryOf, prefixRefOf, registerConversationQueries, type ConversationHolder } from '../conversation-queries';

// eslint-disable-next-line @typescript-eslint/require-await -- a workflow function is async by contract; this one has nothing to wait for
export async function snapshotWorkflow(raw: CacheSafeParams): Promise<PrefixRef> {
  const validated = validateSnapshot(raw);
  if (!validated.ok) {
    throw invalid(FAILURE.invalidSnapshot, 'Invalid snapshot', validated.issues);
  }
  // The caller's own objects, not zod's copy: their bytes are the cached prefix.
  const snapshot = raw;
  const context = snapshotContext(snapshot);
  let digest = EMPTY_DIGEST;
  for (const m of snapshot.messages) digest = chainDigest(digest, m);
  const holder: ConversationHolder = { base: 0, messages: snapshot.messages, digest, context, summary: contextSummaryOf(context) };
  registerConversationQueries(holder);
  const ref = prefixRefOf(holder);
  // The hashes of the request the snapshot was taken from, when the taker recorded them.
  return snapshot.requestHashes ? { ...ref, requestHashes: snapshot.requestHashes } : ref;
}
