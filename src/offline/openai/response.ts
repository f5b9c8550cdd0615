/**
 * The offline model's OpenAI Chat Completions side, response half: a scripted Message as a
 * `chat.completion` object, as the `chat.completion.chunk` events of a stream, and errors in
 * OpenAI's `{ error: { message, type, param, code } }` shape. Usage follows OpenAI's
 * accounting: `prompt_tokens` counts every input token, cached ones included, and
 * `prompt_tokens_details.cached_tokens` the part read from the prompt cache (OpenAI charges
 * no cache writes, so the emulated writes are plain input here). A scripted step's reasoning
 * (`@think`) comes as `reasoning_content`, the field OpenAI-compatible servers of reasoning
 * models (vLLM, SGLang, DeepSeek) add to the message and its deltas, and its tokens as
 * `completion_tokens_details.reasoning_tokens` (part of `completion_tokens`).
 */
import { estimateTextTokens } from '../../shared/messages-api/tokens';
import type { StopReason } from '../../shared/messages-api/anthropic';
import type { WireMessage, WireUsage } from '../types';

/** `finish_reason` per Messages `stop_reason`. */
function finishReason(stop: StopReason | null): 'stop' | 'length' | 'tool_calls' {
  if (stop === 'tool_use') return 'tool_calls';
  if (stop === 'max_tokens' || stop === 'model_context_window_exceeded') return 'length';
  return 'stop';
}

/** OpenAI usage from the emulator's Messages usage; `reasoning`: the reasoning tokens among the output. */
export function chatUsage(u: WireUsage, reasoning = 0) {
  const prompt = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output_tokens,
    total_tokens: prompt + u.output_tokens,
    prompt_tokens_details: { cached_tokens: u.cache_read_input_tokens, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

/** The completion's id: the Message id's hash part, so the same request gets the same id on both wires. */
const completionId = (m: WireMessage): string => `chatcmpl-${m.id.replace(/^msg_/, '')}`;

function toolCalls(m: WireMessage) {
  return m.content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, type: 'function' as const, function: { name: b.name, arguments: JSON.stringify(b.input) } }] : []));
}

function text(m: WireMessage): string {
  return m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
}

/** The message's reasoning (its thinking blocks), or undefined when it has none. */
function reasoning(m: WireMessage): string | undefined {
  const parts = m.content.flatMap((b) => (b.type === 'thinking' ? [b.thinking] : []));
  return parts.length > 0 ? parts.join('') : undefined;
}

const reasoningTokens = (m: WireMessage) => estimateTextTokens(reasoning(m) ?? '');

/** The non-streaming body. `created` is whole seconds on the emulated clock. */
export function chatCompletion(m: WireMessage, createdMs: number) {
  const calls = toolCalls(m);
  const content = text(m);
  return {
    id: completionId(m),
    object: 'chat.completion' as const,
    created: Math.floor(createdMs / 1000),
    model: m.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant' as const,
          content: content === '' && calls.length > 0 ? null : content,
          refusal: null,
          ...(reasoning(m) !== undefined ? { reasoning_content: reasoning(m) } : {}),
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
        },
        finish_reason: finishReason(m.stop_reason),
        logprobs: null,
      },
    ],
    usage: chatUsage(m.usage, reasoningTokens(m)),
  };
}

/**
 * The `data:` payloads of a stream, in order: the role, text deltas, each tool call (id
 * and name first, then its arguments in pieces), the finish reason, and, when the client
 * asked with `stream_options.include_usage`, a last chunk with no choices and the usage.
 * `split` cuts a string into deltas (the Messages stream's own splitter).
 */
export function chatChunks(m: WireMessage, createdMs: number, includeUsage: boolean, split: (s: string) => string[]): unknown[] {
  const base = { id: completionId(m), object: 'chat.completion.chunk' as const, created: Math.floor(createdMs / 1000), model: m.model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const out: unknown[] = [chunk({ role: 'assistant', content: '', refusal: null })];
  for (const part of split(reasoning(m) ?? '')) out.push(chunk({ reasoning_content: part }));
  for (const part of split(text(m))) out.push(chunk({ content: part }));
  toolCalls(m).forEach((call, index) => {
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
    for (const part of split(call.function.arguments)) out.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
  });
  out.push(chunk({}, finishReason(m.stop_reason)));
  if (includeUsage) out.push({ ...base, choices: [], usage: chatUsage(m.usage, reasoningTokens(m)) });
  return out;
}

/** OpenAI's error `type` per status (its API uses few: requests it refuses, limits, its own faults). */
function errorType(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** OpenAI's `code` where its API sets one for the status. */
function errorCode(status: number): string | null {
  if (status === 401) return 'invalid_api_key';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limit_exceeded';
  return null;
}

/** The error body OpenAI sends (and the SDK reads into `APIError.error`, `.type`, `.code`). */
export function chatErrorBody(status: number, message: string) {
  return { error: { message, type: errorType(status), param: null, code: errorCode(status) } };
}
