/**
 * A model call delivered through its provider's batch interface (delivery `batch`, half price):
 * Anthropic's Message Batches, or an OpenAI-compatible provider's Batch API (batch-api.ts). Its
 * `custom_id` is the call's key digest, the same on every attempt. The call goes to the
 * worker's batcher (./batcher.ts), which coalesces it with other agents' calls into one batch
 * and watches that batch; the activity heartbeats meanwhile.
 *
 * Submitted once: before the submit, the response store keeps a mark of it (when), and once
 * the provider has it, its batch id. A retried attempt (a crash, a worker that stopped) polls
 * the batch already submitted; one that finds the mark without a batch id (the worker died
 * between submit and record) looks for its `custom_id` among the provider's batches created
 * since the mark before submitting again. A batch the provider no longer knows (404) is
 * submitted again once, under the same `custom_id`; an errored, expired or cancelled request
 * (or a second 404), or a provider with no batch interface at all, is handed back as a
 * fallback: the caller then makes the call interactively.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { MessagesRequest } from '../../shared/messages-api/anthropic';
import { NoBatchApiError, type BatchApi } from './batch-api';
import { BatchNotFoundError, type Batcher } from './batcher';
import { requestDigest, type BatchMark, type CallKey, type ResponseStore } from './response-store';

/** How far the provider's clock may be behind the worker's when a batch is looked for by `custom_id`. */
const CLOCK_SLACK_MS = 10 * 60_000;

export interface BatchCallDeps {
  /** The provider's batch interface (batch-api.ts). */
  api: BatchApi;
  batcher: Batcher;
  responses?: ResponseStore;
}

export type BatchOutcome =
  | { kind: 'message'; message: Anthropic.Messages.Message; batchId: string }
  /** Not answered by the batch: the call goes interactive. */
  | { kind: 'fallback'; reason: string; batchId: string };

interface BatchCall {
  key: CallKey | undefined;
  customId: string;
  body: MessagesRequest;
  betas?: readonly string[];
}

/** What an earlier attempt kept of this very request's submission, if the store knows it. */
async function marked(deps: BatchCallDeps, key: CallKey | undefined, digest: string): Promise<BatchMark | undefined> {
  if (!deps.responses?.getBatch || !key) return undefined;
  return deps.responses.getBatch(key, digest).catch(() => undefined);
}

/** A store that fails costs a possible second submit, never the call. */
async function mark(deps: BatchCallDeps, key: CallKey | undefined, value: BatchMark, digest: string): Promise<void> {
  if (deps.responses?.putBatch && key) await deps.responses.putBatch(key, value, digest).catch(() => undefined);
}

/**
 * The batch holding `customId` among those the provider created since `since` (newest first),
 * if any. The API lists batches without their requests, so each candidate's results are read,
 * once it has ended; a rare path (a worker that died between submit and record).
 */
export async function findSubmitted(deps: BatchCallDeps, customId: string, since: number, signal: AbortSignal): Promise<string | undefined> {
  const horizon = since - CLOCK_SLACK_MS;
  for await (const batchId of deps.api.createdSince(horizon, signal)) {
    // Someone else's batch, maybe: waiting on it never cancels it.
    const results = await deps.batcher.results(deps.api, batchId, signal, () => false);
    if (results.has(customId)) return batchId;
  }
  return undefined;
}

async function submit(deps: BatchCallDeps, call: BatchCall, digest: string, signal: AbortSignal): Promise<string> {
  // In the provider's form first: a request it cannot take fails its own call, not the batch it would join.
  const params = deps.api.prepare(call.body);
  const since = Date.now();
  // Kept before the submit: a retry that finds it without a batch id looks before submitting.
  await mark(deps, call.key, { since }, digest);
  // The request's betas (context management, the 1M window, the MCP connector) apply to its whole batch.
  let batchId: string;
  try {
    batchId = await deps.batcher.submit(deps.api, { customId: call.customId, params, betas: call.betas ?? [] }, signal);
  } catch (err) {
    // An answer with an HTTP status is a refusal (a provider without batches too): no batch was made, and a retry need not look for one.
    if (err instanceof NoBatchApiError || typeof (err as { status?: unknown } | null)?.status === 'number') await mark(deps, call.key, { since, refused: true }, digest);
    throw err;
  }
  await mark(deps, call.key, { since, batchId }, digest);
  return batchId;
}

/**
 * Submits (or finds) the call's batch, waits for it to end and reads its result. `onBatch`
 * hears the batch id (heartbeat progress). Rejects with the abort reason when `signal` aborts;
 * `cancelled` tells whether the agent was cancelled (its batch may then be cancelled at the
 * provider) rather than merely handed back by a stopping worker.
 */
export async function callViaBatch(deps: BatchCallDeps, call: BatchCall, signal: AbortSignal, cancelled: () => boolean, onBatch: (batchId: string) => void): Promise<BatchOutcome> {
  const digest = requestDigest(call.body);
  const earlier = await marked(deps, call.key, digest);
  const lookFor = earlier && !earlier.batchId && !earlier.refused;
  let batchId = earlier?.batchId ?? (lookFor ? await findSubmitted(deps, call.customId, earlier.since, signal) : undefined);
  if (lookFor && batchId) await mark(deps, call.key, { since: earlier.since, batchId }, digest);
  for (let resubmitted = false; ; resubmitted = true) {
    try {
      batchId ??= await submit(deps, call, digest, signal);
    } catch (err) {
      // Nothing was submitted, and nothing can be: the call is made interactively (or fails, under batchFallback 'fail').
      if (err instanceof NoBatchApiError) return { kind: 'fallback', reason: err.message, batchId: 'none' };
      throw err;
    }
    onBatch(batchId);
    let results: Awaited<ReturnType<Batcher['results']>>;
    try {
      results = await deps.batcher.results(deps.api, batchId, signal, cancelled);
    } catch (err) {
      if (!(err instanceof BatchNotFoundError)) throw err;
      if (resubmitted) return { kind: 'fallback', reason: err.message, batchId };
      batchId = undefined;
      continue;
    }
    const result = results.get(call.customId);
    if (!result) return { kind: 'fallback', reason: 'no result for this request', batchId };
    if (result.type === 'succeeded') return { kind: 'message', message: deps.api.answerFor ? deps.api.answerFor(result.message, call.body) : result.message, batchId };
    const why = result.type === 'errored' ? `errored: ${result.error.error.type}: ${result.error.error.message}` : result.type;
    return { kind: 'fallback', reason: why, batchId };
  }
}
