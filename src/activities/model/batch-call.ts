/**
 * A model call delivered through the Message Batches API (delivery `batch`, half price): a
 * one-request batch whose `custom_id` is the call's key digest, polled inside the model
 * activity (which heartbeats meanwhile) until it ends. The batch id is kept in the worker's
 * private response store before the first poll, so a retried attempt (a crash, a worker that
 * stopped) polls the batch already submitted instead of submitting the request again. An
 * errored, expired or cancelled request is handed back as a fallback: the caller then makes
 * the call interactively. A cancelled activity cancels its batch at the provider.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MessagesRequest } from '../../shared/anthropic';
import { requestDigest, type CallKey, type ResponseStore } from './response-store';

/** How often a submitted batch is asked about, in ms (real time). */
export const DEFAULT_BATCH_POLL_MS = 30_000;

export interface BatchCallDeps {
  anthropic: Anthropic;
  responses?: ResponseStore;
  /** Poll interval in ms (default {@link DEFAULT_BATCH_POLL_MS}). */
  pollMs?: number;
}

export type BatchOutcome =
  | { kind: 'message'; message: Anthropic.Messages.Message; batchId: string }
  /** Not answered by the batch: the call goes interactive. */
  | { kind: 'fallback'; reason: string; batchId: string };

/** The batch an earlier attempt submitted for this very request, if the store knows it. */
async function submitted(deps: BatchCallDeps, key: CallKey | undefined, digest: string): Promise<string | undefined> {
  if (!deps.responses?.getBatch || !key) return undefined;
  return deps.responses.getBatch(key, digest).catch(() => undefined);
}

async function cancelAtProvider(deps: BatchCallDeps, batchId: string): Promise<void> {
  try {
    await deps.anthropic.messages.batches.cancel(batchId, {}, { signal: AbortSignal.timeout(5_000) });
  } catch {
    // Best effort: an uncancelled batch is answered for nobody, and its request is billed once.
  }
}

/**
 * Submits (or finds) the call's batch, waits for it to end and reads its result.
 * `onBatch` hears the batch id (heartbeat progress). Rejects with the abort reason when
 * `signal` aborts; `cancelled` tells whether the provider should cancel the batch (the
 * activity was cancelled, not merely handed back by a stopping worker).
 */
export async function callViaBatch(
  deps: BatchCallDeps,
  call: { key: CallKey | undefined; customId: string; body: MessagesRequest; betas?: readonly string[] },
  signal: AbortSignal,
  cancelled: () => boolean,
  onBatch: (batchId: string) => void,
): Promise<BatchOutcome> {
  const digest = requestDigest(call.body);
  let batchId = await submitted(deps, call.key, digest);
  if (!batchId) {
    const params = call.body as unknown as Anthropic.Messages.MessageCreateParamsNonStreaming;
    // The request's betas (context management, the 1M window, the MCP connector) apply to the whole batch.
    const headers = call.betas && call.betas.length > 0 ? { 'anthropic-beta': call.betas.join(',') } : undefined;
    const batch = await deps.anthropic.messages.batches.create({ requests: [{ custom_id: call.customId, params }] }, { signal, ...(headers ? { headers } : {}) });
    batchId = batch.id;
    // Kept before anything else: a retry must find it (a store that fails costs a possible resubmit).
    if (deps.responses?.putBatch && call.key) await deps.responses.putBatch(call.key, batchId, digest).catch(() => undefined);
  }
  onBatch(batchId);
  try {
    for (;;) {
      const batch = await deps.anthropic.messages.batches.retrieve(batchId, {}, { signal });
      if (batch.processing_status === 'ended') break;
      await sleep(deps.pollMs ?? DEFAULT_BATCH_POLL_MS, undefined, { signal });
    }
    for await (const r of await deps.anthropic.messages.batches.results(batchId, {}, { signal })) {
      if (r.custom_id !== call.customId) continue;
      if (r.result.type === 'succeeded') return { kind: 'message', message: r.result.message, batchId };
      const why = r.result.type === 'errored' ? `errored: ${r.result.error.error.type}: ${r.result.error.error.message}` : r.result.type;
      return { kind: 'fallback', reason: why, batchId };
    }
    return { kind: 'fallback', reason: 'no result for this request', batchId };
  } catch (err) {
    if (signal.aborted && cancelled()) await cancelAtProvider(deps, batchId);
    throw err;
  }
}
