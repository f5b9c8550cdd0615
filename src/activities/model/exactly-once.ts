/**
 * What makes a model call paid once, whatever its provider: its key at the model gateway (the
 * same on every attempt, src/gateway), the cancel that stops it there, and its response kept in
 * the worker's response store until the workflow has it (response-store.ts). Used by the turn
 * call (call-model.ts) and forkflow's compaction call (compact.ts).
 */
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { MessagesRequest } from '../../shared/messages-api/anthropic';
import type { ModelCallResult } from '../../shared/wire/activity-io';
import { CALL_PROOF_HEADER, CANCEL_PATH_PREFIX } from '../../shared/providers/model-gateway';
import { requestDigest, type CallKey, type ResponseStore } from './response-store';

/** The gateway's name for a call: the same on every attempt of it, and nothing else. */
export function callKeyDigest(key: CallKey): string {
  return createHash('sha256').update(JSON.stringify([key.namespace, key.workflowId, key.runId, key.activityId, key.turn])).digest('hex');
}

/**
 * Whether an attempt's cancellation should stop its call upstream: only when the workflow asked
 * (an interrupt, a kill, a timeout of the fork). An attempt the server gave up on — its heartbeat
 * timed out while the server was away, so it is "not found" or "timed out" when it is back —
 * will be retried, and the retry attaches to the call the gateway kept running instead of paying
 * for it twice (an outage of 30 s cancelled one call this way in the crash-exact test).
 */
export function cancelsUpstream(details: { cancelRequested: boolean } | undefined): boolean {
  return details?.cancelRequested === true;
}

/**
 * Best effort, and short: a gateway that does not hear of the cancel finishes the call for
 * nobody. `proof`: what this attempt sent with its call (only its worker knows it).
 */
export async function cancelAtGateway(gateway: string, digest: string, proof: string): Promise<void> {
  try {
    await fetch(`${gateway.replace(/\/$/, '')}${CANCEL_PATH_PREFIX}${digest}`, { method: 'DELETE', headers: { [CALL_PROOF_HEADER]: proof }, signal: AbortSignal.timeout(2_000) });
  } catch {
    // The gateway is away or slow: the call runs to its end upstream, unseen.
  }
}

/**
 * Stores are an aid, not a dependency: a store that fails costs a possible re-call, never a
 * turn. A kept response is returned only for the request it answers (`request`, the one an
 * earlier attempt left): without that request there is nothing to bind it to, and the call is made.
 */
export async function kept(store: ResponseStore | undefined, key: CallKey | undefined, request: MessagesRequest | undefined): Promise<ModelCallResult | undefined> {
  if (!store || !key || !request) return undefined;
  try {
    await store.settle(key);
    return await store.get(key, requestDigest(request));
  } catch (err) {
    Context.current().log.warn('response store unreadable; asking the model', { error: String(err) });
    return undefined;
  }
}

/** The request an earlier attempt of this call left, if any. */
export async function handedOver(store: ResponseStore | undefined, key: CallKey | undefined): Promise<MessagesRequest | undefined> {
  if (!store || !key) return undefined;
  return store.getRequest(key).catch(() => undefined);
}

export async function keep(store: ResponseStore | undefined, key: CallKey | undefined, result: ModelCallResult, request: MessagesRequest): Promise<void> {
  try {
    if (store && key) await store.put(key, result, requestDigest(request));
  } catch (err) {
    Context.current().log.warn('response store unwritable; a retry of this call would ask the model again', { error: String(err) });
  }
}

