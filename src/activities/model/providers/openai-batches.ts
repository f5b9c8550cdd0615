/**
 * OpenAI's Batch API as a batch interface (../batch-api.ts), for providers of kind
 * `openai-compatible`: a batch is a JSONL file of Chat Completions requests uploaded with
 * purpose `batch` (`POST /files`), then `POST /batches` on it (endpoint
 * `/v1/chat/completions`, window `24h`); it has ended when its status is `completed`,
 * `failed`, `expired` or `cancelled`, and its results are the lines of its output file
 * (answers) and error file (refused, expired and cancelled requests), each by `custom_id`.
 * Every answer is restated as a Message (openai-response.ts), its tool calls named as the
 * agent's tools (openai-tool-names.ts, through `answerFor`), so a batched call on this wire
 * is recorded, charged and priced like one on Anthropic's.
 *
 * A provider whose files or batches endpoint answers 404 or 405 has no Batch API (vLLM,
 * Ollama): the first such answer is remembered for the client's life and its batched calls
 * fall back at once (NoBatchApiError), as an unanswered batch does.
 */
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { z } from 'zod';
import { NoBatchApiError, type BatchApi, type BatchRequestResult } from '../batch-api';
import { restated } from './openai-call';
import { toChatRequest } from './openai-request';
import { fromChatCompletion } from './openai-response';
import { agentToolNames, withAgentToolNames } from './openai-tool-names';

/** The endpoint every request of a batch goes to (the Batch API's name for it, whatever the base URL). */
export const CHAT_BATCH_ENDPOINT = '/v1/chat/completions';

const ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** One line of an output or error file, as far as it is read (anything else there is ignored). */
const outputLine = z.looseObject({
  custom_id: z.string(),
  response: z.looseObject({ status_code: z.number().int(), body: z.unknown() }).nullish(),
  error: z.looseObject({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
});

const errored = (type: string, message: string): BatchRequestResult => ({ type: 'errored', error: { type: 'error', error: { type, message } as never, request_id: null } });

/** A result line as a Message Batches result. */
function resultOf(line: z.infer<typeof outputLine>): BatchRequestResult {
  const response = line.response;
  if (response && response.status_code >= 200 && response.status_code < 300) {
    const body = response.body as OpenAI.Chat.ChatCompletion | undefined;
    if (body && Array.isArray(body.choices)) return { type: 'succeeded', message: fromChatCompletion(body) };
    return errored('api_error', 'the batch answered this request without a chat completion');
  }
  if (response) {
    const inner = (response.body as { error?: { type?: unknown; message?: unknown } } | undefined)?.error;
    return errored(typeof inner?.type === 'string' ? inner.type : 'api_error', `${response.status_code}: ${typeof inner?.message === 'string' ? inner.message : 'refused'}`);
  }
  const code = line.error?.code ?? '';
  if (code === 'batch_expired') return { type: 'expired' };
  if (code === 'batch_cancelled') return { type: 'canceled' };
  return errored(code || 'api_error', line.error?.message ?? 'no answer');
}

const missing = (err: unknown) => {
  const status = (err as { status?: unknown } | null)?.status;
  return status === 404 || status === 405;
};

/** Runs `fn`, its `openai` SDK errors restated as the Anthropic SDK's (errors.ts classifies those). */
async function restating<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw restated(err);
  }
}

/** The Batch API of `client` (see the file header). */
export function openaiBatches(client: OpenAI): BatchApi {
  let absent: string | undefined;
  const fileLines = async (fileId: string | null | undefined, signal: AbortSignal): Promise<z.infer<typeof outputLine>[]> => {
    if (!fileId) return [];
    const text = await (await client.files.content(fileId, { signal })).text();
    return text.split('\n').flatMap((raw) => {
      if (raw.trim() === '') return [];
      try {
        const parsed = outputLine.safeParse(JSON.parse(raw));
        return parsed.success ? [parsed.data] : [];
      } catch {
        return [];
      }
    });
  };
  return {
    prepare: (body) => toChatRequest(body, false),
    answerFor: (message, body) => withAgentToolNames(message, agentToolNames(body)),
    // One model per batch: the API refuses a file whose lines name several.
    groupOf: (params) => String((params as { model?: unknown }).model),
    create: (requests, _betas, signal) =>
      restating(async () => {
        if (absent) throw new NoBatchApiError(absent);
        const jsonl = requests.map((r) => JSON.stringify({ custom_id: r.customId, method: 'POST', url: CHAT_BATCH_ENDPOINT, body: r.params })).join('\n') + '\n';
        try {
          const file = await client.files.create({ file: await toFile(Buffer.from(jsonl, 'utf8'), 'forkflow-batch.jsonl', { type: 'application/jsonl' }), purpose: 'batch' }, { signal });
          const batch = await client.batches.create({ input_file_id: file.id, endpoint: CHAT_BATCH_ENDPOINT, completion_window: '24h' }, { signal });
          return batch.id;
        } catch (err) {
          if (!missing(err)) throw err;
          absent = `the provider has no Batch API (${(err as Error).message.slice(0, 200)})`;
          throw new NoBatchApiError(absent);
        }
      }),
    retrieve: (batchId, signal) =>
      restating(async () => {
        const batch = await client.batches.retrieve(batchId, { signal });
        // A batch still `validating` reports zero requests (it has not read its file): not known yet, as for an absent count.
        return { ended: ENDED.has(batch.status), total: batch.request_counts?.total || Number.POSITIVE_INFINITY };
      }),
    results: (batchId, signal) =>
      restating(async () => {
        const batch = await client.batches.retrieve(batchId, { signal });
        const out = new Map<string, BatchRequestResult>();
        // Answers first, then the error file: a request is in one of them.
        for (const line of [...(await fileLines(batch.output_file_id, signal)), ...(await fileLines(batch.error_file_id, signal))]) out.set(line.custom_id, resultOf(line));
        return out;
      }),
    cancel: (batchId, signal) =>
      restating(async () => {
        await client.batches.cancel(batchId, { signal });
      }),
    createdSince(sinceMs, signal) {
      return (async function* () {
        try {
          for await (const batch of client.batches.list({ limit: 100 }, { signal })) {
            if (batch.created_at * 1000 < sinceMs) return;
            yield batch.id;
          }
        } catch (err) {
          throw restated(err);
        }
      })();
    },
  };
}
