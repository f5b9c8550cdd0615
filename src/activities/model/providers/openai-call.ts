/**
 * One model call to an `openai-compatible` provider, with the Messages body in and the
 * Messages response out (openai-request.ts, openai-response.ts). Streaming calls feed the
 * translated stream events to `onEvent` and hand the final Message to `onFinal` the moment
 * the stream ends (where the Anthropic path keeps its response). The `openai` SDK's errors
 * are restated as the Anthropic SDK's, so src/activities/model/errors.ts classifies every
 * provider's failures one way (4xx non-retryable, 429/529/5xx retried, `retry-after` kept).
 */
import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import type { MessagesRequest } from '../../../shared/messages-api/anthropic';
import { toChatRequest, UnsupportedByProvider } from './openai-request';
import { ChunkTranslator, fromChatCompletion } from './openai-response';
import { agentToolNames, withAgentToolNames } from './openai-tool-names';

type Message = Anthropic.Messages.Message;

export interface ChatCallOptions {
  stream: boolean;
  signal: AbortSignal;
  headers?: Record<string, string>;
  onEvent?: (event: Anthropic.Messages.RawMessageStreamEvent) => void;
  onFinal?: (message: Message, requestId: string | undefined) => void;
}

/** The `openai` SDK's error as the Anthropic SDK's (same status, body, headers; a mid-stream error has no status). */
export function restated(err: unknown): unknown {
  if (err instanceof UnsupportedByProvider) return ApplicationFailure.create({ type: 'ModelInvalidRequest', message: err.message, nonRetryable: true });
  if (err instanceof OpenAI.APIUserAbortError) return new Anthropic.APIUserAbortError({ message: err.message });
  if (err instanceof OpenAI.APIConnectionError) return new Anthropic.APIConnectionError({ message: err.message, cause: err });
  if (err instanceof OpenAI.APIError) {
    const inner = err.error as { message?: unknown; type?: unknown } | undefined;
    const body = { error: { type: typeof inner?.type === 'string' ? inner.type : 'api_error', message: typeof inner?.message === 'string' ? inner.message : err.message }, request_id: err.requestID ?? undefined };
    const status = err.status as number | undefined;
    const headers = err.headers as Headers | undefined;
    if (status === undefined || headers === undefined) return new Anthropic.APIError(undefined, body, err.message, undefined);
    return Anthropic.APIError.generate(status, body, err.message, headers);
  }
  return err;
}

/**
 * Calls `client` with `body` restated as Chat Completions. Resolves with the Message;
 * rejects with Anthropic-SDK errors (see {@link restated}).
 */
export async function callChatCompletions(client: OpenAI, body: MessagesRequest, opts: ChatCallOptions): Promise<{ message: Message; requestId?: string }> {
  const request = { signal: opts.signal, ...(opts.headers ? { headers: opts.headers } : {}) };
  const names = agentToolNames(body);
  try {
    if (!opts.stream) {
      const params = toChatRequest(body, false) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
      const { data, request_id } = await client.chat.completions.create(params, request).withResponse();
      const message = withAgentToolNames(fromChatCompletion(data), names);
      opts.onFinal?.(message, request_id ?? undefined);
      return { message, ...(request_id ? { requestId: request_id } : {}) };
    }
    const params = toChatRequest(body, true) as OpenAI.Chat.ChatCompletionCreateParamsStreaming;
    const { data: stream, request_id } = await client.chat.completions.create(params, request).withResponse();
    const translator = new ChunkTranslator(names);
    for await (const chunk of stream) for (const event of translator.push(chunk)) opts.onEvent?.(event);
    const { events, message } = translator.end();
    for (const event of events) opts.onEvent?.(event);
    opts.onFinal?.(message, request_id ?? undefined);
    return { message, ...(request_id ? { requestId: request_id } : {}) };
  } catch (err) {
    throw restated(err);
  }
}
