/**
 * The two API routes: `POST /v1/messages` (validate → script → scripted faults → limits →
 * cache accounting → Message) and `POST /v1/messages/count_tokens`. They only decide the
 * reply; the server applies delays and writes it.
 */
import type { PromptCache } from '../cache';
import { ApiError } from '../errors';
import { flattenRequest } from '../flatten';
import { conversationKey, messageId } from '../ids';
import { applyLimits } from '../output';
import type { PlannedReply } from '../reply';
import { scriptedResponse } from '../scripted/model';
import type { Modifier } from '../scripted/parse';
import type { WireMessage, WireUsage } from '../types';
import { type ApiVersion, validateRequest } from './validation';

export interface MessagesDeps {
  cache: PromptCache;
  /** Attempts seen per conversation key, for scripted `@fail`/`@stream-error`/`@drop`. */
  attempts: Map<string, number>;
  minCacheableTokens: (model: string) => number;
}

type FaultModifier = Extract<Modifier, { kind: 'fail' | 'stream-error' | 'drop' }>;

/**
 * The scripted fault for this attempt, if any. Attempts are recognised by the request's
 * conversation key, so a retry of the same request moves on to the next fault and, after
 * all of them, succeeds.
 */
function scriptedFault(modifiers: Modifier[], attempts: Map<string, number>, key: string): { fault: FaultModifier; attempt: number } | undefined {
  const faults = modifiers.filter((m): m is FaultModifier => m.kind !== 'sleep' && m.kind !== 'pace');
  if (faults.length === 0) return undefined;
  const attempt = attempts.get(key) ?? 0;
  attempts.set(key, attempt + 1);
  let upTo = 0;
  for (const fault of faults) {
    upTo += fault.times;
    if (attempt < upTo) return { fault, attempt };
  }
  return undefined;
}

/**
 * Plans the answer to `POST /v1/messages`. `streamErrorAfter` comes from a programmatic
 * `stream_error` fault. Throws {@link ApiError} for rejections.
 */
export function planMessages(
  body: unknown,
  version: ApiVersion,
  deps: MessagesDeps,
  owner: number,
  streamErrorAfter?: number,
): PlannedReply {
  const req = validateRequest(body, { version, route: 'messages' });
  const conversation = conversationKey(req);
  const scripted = scriptedResponse(req, conversation);
  const delayMs = scripted.modifiers.reduce((ms, m) => (m.kind === 'sleep' ? ms + m.ms : ms), 0);
  const stream = req.stream === true;

  const hit = scriptedFault(scripted.modifiers, deps.attempts, conversation);
  if (hit?.fault.kind === 'fail') {
    const { status, retryAfterSeconds } = hit.fault;
    const headers: Record<string, string> = retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) };
    const error = new ApiError(status, `Scripted failure: @fail ${status} (attempt ${hit.attempt + 1}).`, { headers, outcome: 'fault' });
    return { reply: { kind: 'error', error }, delayMs };
  }
  if (hit?.fault.kind === 'drop') return { reply: { kind: 'drop' }, delayMs };
  if (hit?.fault.kind === 'stream-error') {
    if (!stream) {
      const error = new ApiError(529, `Scripted failure: @stream-error on a non-streaming request (attempt ${hit.attempt + 1}).`, { outcome: 'fault' });
      return { reply: { kind: 'error', error }, delayMs };
    }
    streamErrorAfter = 1;
  }

  const out = applyLimits(scripted.content, scripted.stopReason, req.max_tokens as number, req.stop_sequences);
  const { accounting, ticket } = deps.cache.plan(flattenRequest(req), deps.minCacheableTokens(req.model), owner);
  const usage: WireUsage = {
    input_tokens: accounting.input,
    output_tokens: out.outputTokens,
    cache_creation_input_tokens: accounting.creation5m + accounting.creation1h,
    cache_read_input_tokens: accounting.read,
    cache_creation: { ephemeral_5m_input_tokens: accounting.creation5m, ephemeral_1h_input_tokens: accounting.creation1h },
  };
  const message: WireMessage = {
    id: messageId(conversation),
    type: 'message',
    role: 'assistant',
    model: req.model,
    content: out.content,
    stop_reason: out.stopReason,
    stop_sequence: out.stopSequence,
    usage,
  };
  const pace = scripted.modifiers.find((m) => m.kind === 'pace');
  return { reply: { kind: 'message', message, stream, ticket, streamErrorAfter, ...(pace ? { paceMs: pace.ms } : {}) }, delayMs };
}

/** Plans the answer to `POST /v1/messages/count_tokens`: `{input_tokens}` of the request. */
export function planCountTokens(body: unknown, version: ApiVersion): PlannedReply {
  const req = validateRequest(body, { version, route: 'count_tokens' });
  return { reply: { kind: 'json', body: { input_tokens: flattenRequest(req).totalTokens } }, delayMs: 0 };
}
