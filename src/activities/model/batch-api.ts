/**
 * A provider's batch interface as the worker's batch desk (batcher.ts) and a batched call
 * (batch-call.ts) use it: submit requests as one batch, ask whether it has ended, read its
 * results by `custom_id`, cancel it, and list the batches created since a time. Two wires
 * implement it: Anthropic's Message Batches (here) and OpenAI's Batch API, a JSONL file of
 * Chat Completions requests (providers/openai-batches.ts). Results come in one shape, the
 * Message Batches' (a Chat Completions answer is restated as a Message), so the desk, the
 * fallbacks and the accounting are the same for every provider.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { MessagesRequest } from '../../shared/messages-api/anthropic';

export type BatchRequestResult = Anthropic.Messages.Batches.MessageBatchResult;

/** One request of a batch: its `custom_id` and its body in the provider's own form (see {@link BatchApi.prepare}). */
export interface BatchRequest {
  customId: string;
  params: unknown;
}

export interface BatchApi {
  /**
   * The body a request of this call sends in a batch, in the provider's form (a request this
   * provider cannot take throws here, for its call alone, before anything is submitted).
   */
  prepare(body: MessagesRequest): unknown;
  /**
   * Which requests may share a batch, besides the provider and the betas: OpenAI's Batch API
   * runs one model per batch (its file is refused otherwise), Message Batches mix them.
   */
  groupOf?(params: unknown): string;
  /**
   * A succeeded result's Message as the call's own request names things (OpenAI's Batch API:
   * a tool sent under a stand-in name is the agent's tool again). Absent: the Message as read.
   */
  answerFor?(message: Anthropic.Messages.Message, body: MessagesRequest): Anthropic.Messages.Message;
  /** Submits the requests as one batch; resolves with its id. `betas`: Anthropic beta headers for all of them. */
  create(requests: readonly BatchRequest[], betas: readonly string[], signal: AbortSignal): Promise<string>;
  /** Whether the batch has ended, and how many requests it holds. */
  retrieve(batchId: string, signal: AbortSignal): Promise<{ ended: boolean; total: number }>;
  /** Every result of an ended batch, by `custom_id`. */
  results(batchId: string, signal: AbortSignal): Promise<Map<string, BatchRequestResult>>;
  cancel(batchId: string, signal: AbortSignal): Promise<void>;
  /** The ids of batches created at `sinceMs` (the provider's clock) or later, newest first. */
  createdSince(sinceMs: number, signal: AbortSignal): AsyncIterable<string>;
}

/** A provider without a batch interface (its batch endpoints answer 404 or 405): batched calls to it are made interactively. */
export class NoBatchApiError extends Error {
  override name = 'NoBatchApiError';
}

/** Anthropic's Message Batches through the SDK. */
export function anthropicBatches(client: Anthropic): BatchApi {
  return {
    prepare: (body) => body,
    async create(requests, betas, signal) {
      const headers = betas.length > 0 ? { 'anthropic-beta': betas.join(',') } : undefined;
      const params = requests.map((r) => ({ custom_id: r.customId, params: r.params as Anthropic.Messages.MessageCreateParamsNonStreaming }));
      const batch = await client.messages.batches.create({ requests: params }, { ...(headers ? { headers } : {}), signal });
      return batch.id;
    },
    async retrieve(batchId, signal) {
      const batch = await client.messages.batches.retrieve(batchId, {}, { signal });
      const c = batch.request_counts;
      return { ended: batch.processing_status === 'ended', total: c.processing + c.succeeded + c.errored + c.canceled + c.expired };
    },
    async results(batchId, signal) {
      const out = new Map<string, BatchRequestResult>();
      for await (const r of await client.messages.batches.results(batchId, {}, { signal })) out.set(r.custom_id, r.result);
      return out;
    },
    async cancel(batchId, signal) {
      await client.messages.batches.cancel(batchId, {}, { signal });
    },
    async *createdSince(sinceMs, signal) {
      for await (const batch of client.messages.batches.list({ limit: 100 }, { signal })) {
        if (Date.parse(batch.created_at) < sinceMs) return;
        yield batch.id;
      }
    },
  };
}

const apis = new WeakMap<object, BatchApi>();

/** One batch interface per client (the desk groups requests by it): made once, then the same. */
export function batchApiOf<C extends object>(client: C, make: (client: C) => BatchApi): BatchApi {
  let api = apis.get(client);
  if (!api) apis.set(client, (api = make(client)));
  return api;
}
