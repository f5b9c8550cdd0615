/**
 * The two API routes: `POST /v1/messages` (validate → script → scripted faults → limits →
 * cache accounting → Message) and `POST /v1/messages/count_tokens`. They only decide the
 * reply; the server applies delays and writes it.
 */
import type { MessageParam } from '../../shared/messages-api/anthropic';
import { estimateTextTokens } from '../../shared/messages-api/tokens';
import type { CacheAccounting, CacheTicket, PromptCache } from '../cache';
import { applyClearing, checkCompactionBlocks, compactEdit, contextEditsOf, DEFAULT_COMPACTION_TRIGGER, fromLastCompaction } from '../context-editing';
import { ApiError } from '../errors';
import { atMessageEnds, flattenRequest } from '../flatten';
import type { MediaRules } from '../../shared/messages-api/media-tokens';
import { conversationKey, messageId } from '../ids';
import { promptTooLong } from '../limits';
import { applyLimits } from '../output';
import type { PlannedReply } from '../reply';
import { scriptedResponse, type ScriptedResponse } from '../scripted/model';
import type { Modifier } from '../scripted/parse';
import { offlineSummary } from '../scripted/summary';
import type { OutputBlock, WireIterationUsage, WireMessage } from '../types';
import { type ApiVersion, type ValidRequest, validateRequest } from './validation';
import { sha256HexNative } from '../native-hash';

export interface MessagesDeps {
  cache: PromptCache;
  /** Attempts seen per conversation key, for scripted `@fail`/`@stream-error`/`@drop`. */
  attempts: Map<string, number>;
  minCacheableTokens: (model: string) => number;
  /** The context window a request for `model` with these beta headers is granted (src/offline/limits.ts). */
  contextWindow: (model: string, betas: readonly string[]) => number;
}

/** What one request asks besides its body: its beta headers, and an injected `prompt_too_long`. */
export interface MessagesOptions {
  betas?: readonly string[];
  /** Answer `prompt is too long` whatever the request's size (fault `prompt_too_long`). */
  promptTooLong?: boolean;
  /** From a programmatic `stream_error` fault. */
  streamErrorAfter?: number;
  /** Cache every message boundary instead of the marked blocks (the Chat Completions wire: automatic caching). */
  prefixCaching?: boolean;
  /** A step's `@think` is answered whatever the request's `thinking` (the Chat Completions wire: a reasoning model reasons unasked). */
  reasonUnasked?: boolean;
  /** Whose rules count images and documents (default Anthropic's; the Chat Completions wire: OpenAI's tiles). */
  mediaRules?: MediaRules;
}

/**
 * The step's reasoning as a thinking block, when it has one and the request may see it (thinking
 * on, or `reasonUnasked`); signed with a digest of its text, as the API signs its thinking.
 */
function reasoningOf(modifiers: Modifier[], req: ValidRequest, opts: MessagesOptions): OutputBlock[] {
  const think = modifiers.find((m) => m.kind === 'think');
  const on = opts.reasonUnasked === true || (req.thinking !== undefined && req.thinking.type !== 'disabled');
  if (!think || !on) return [];
  return [{ type: 'thinking', thinking: think.text, signature: `sig_offline_${sha256HexNative(think.text).slice(0, 32)}` }];
}

/** Usage of one pass, as the API spells it. */
function usageOf(a: CacheAccounting, output: number): Omit<WireIterationUsage, 'type'> {
  return {
    input_tokens: a.input,
    output_tokens: output,
    cache_creation_input_tokens: a.creation5m + a.creation1h,
    cache_read_input_tokens: a.read,
    cache_creation: { ephemeral_5m_input_tokens: a.creation5m, ephemeral_1h_input_tokens: a.creation1h },
  };
}

function iteration(type: WireIterationUsage['type'], a: CacheAccounting, output: number): WireIterationUsage {
  return { type, ...usageOf(a, output) };
}

/**
 * The request as the model sees it: from its last compaction block, with the clearing edits
 * applied; refused when it does not fit the window (before anything is summarised or cached).
 */
function edited(req: ValidRequest, body: unknown, deps: MessagesDeps, opts: MessagesOptions) {
  const betas = opts.betas ?? [];
  checkCompactionBlocks(req.messages, betas);
  const edits = contextEditsOf(body as Record<string, unknown>, betas);
  const sized = (messages: MessageParam[]) => flattenRequest({ ...req, messages }, opts.mediaRules).totalTokens;
  const cleared = applyClearing(fromLastCompaction(req.messages), edits, sized);
  const seen: ValidRequest = cleared.messages === req.messages ? req : { ...req, messages: cleared.messages };
  const flat = opts.prefixCaching ? atMessageEnds(seen, flattenRequest(seen, opts.mediaRules)) : flattenRequest(seen, opts.mediaRules);
  const window = deps.contextWindow(req.model, betas);
  if (opts.promptTooLong || flat.totalTokens > window) {
    const error = promptTooLong(Math.max(flat.totalTokens, window + 1), window);
    if (opts.promptTooLong) error.options.outcome = 'fault';
    throw error;
  }
  return { seen, flat, window, edits, applied: cleared.applied, contextManagement: 'context_management' in (body as object) };
}

type FaultModifier = Extract<Modifier, { kind: 'fail' | 'stream-error' | 'drop' }>;

/**
 * The scripted fault for this attempt, if any. Attempts are recognised by the request's
 * conversation key, so a retry of the same request moves on to the next fault and, after
 * all of them, succeeds.
 */
function scriptedFault(modifiers: Modifier[], attempts: Map<string, number>, key: string): { fault: FaultModifier; attempt: number } | undefined {
  const faults = modifiers.filter((m): m is FaultModifier => m.kind === 'fail' || m.kind === 'stream-error' || m.kind === 'drop');
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
 * Plans the answer to `POST /v1/messages`. Throws {@link ApiError} for rejections.
 */
export function planMessages(body: unknown, version: ApiVersion, deps: MessagesDeps, owner: number, opts: MessagesOptions = {}): PlannedReply {
  const req = validateRequest(body, { version, route: 'messages' });
  const { seen, flat, window, edits, applied, contextManagement } = edited(req, body, deps, opts);
  const conversation = conversationKey(req);
  const min = deps.minCacheableTokens(req.model);
  const compact = compactEdit(edits);
  const compacting = compact !== undefined && flat.totalTokens > (compact.trigger?.value ?? DEFAULT_COMPACTION_TRIGGER);

  // Past the compaction trigger the conversation is summarised first (its own pass, its own
  // usage), and the reply is made from the compacted context: the summary alone.
  let prefix: OutputBlock[] = [];
  let compaction: { iteration: WireIterationUsage; ticket: CacheTicket } | undefined;
  let forReply: ValidRequest = seen;
  if (compacting) {
    const summary = offlineSummary(seen.messages);
    const pass = deps.cache.plan(flat, min, owner);
    compaction = { iteration: iteration('compaction', pass.accounting, estimateTextTokens(summary)), ticket: pass.ticket };
    prefix = [{ type: 'compaction', content: summary, encrypted_content: null }];
    forReply = { ...seen, messages: [{ role: 'assistant', content: [{ type: 'compaction', content: summary }] }] };
  }
  const paused = compacting && compact.pause_after_compaction === true;
  const scripted: ScriptedResponse = paused ? { content: [], stopReason: 'end_turn', modifiers: [] } : scriptedResponse(forReply, conversation);
  const delayMs = scripted.modifiers.reduce((ms, m) => (m.kind === 'sleep' ? ms + m.ms : ms), 0);
  const stream = req.stream === true;

  let streamErrorAfter = opts.streamErrorAfter;
  const hit = scriptedFault(scripted.modifiers, deps.attempts, conversation);
  if (hit?.fault.kind === 'fail') {
    const { status, retryAfterSeconds } = hit.fault;
    const headers: Record<string, string> = retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) };
    const error = new ApiError(status, `Scripted failure: @fail ${status} (attempt ${hit.attempt + 1}).`, { headers, outcome: 'fault' });
    if (compaction) deps.cache.release(compaction.ticket);
    return { reply: { kind: 'error', error }, delayMs };
  }
  if (hit?.fault.kind === 'drop') {
    if (compaction) deps.cache.release(compaction.ticket);
    return { reply: { kind: 'drop' }, delayMs };
  }
  if (hit?.fault.kind === 'stream-error') {
    if (!stream) {
      const error = new ApiError(529, `Scripted failure: @stream-error on a non-streaming request (attempt ${hit.attempt + 1}).`, { outcome: 'fault' });
      if (compaction) deps.cache.release(compaction.ticket);
      return { reply: { kind: 'error', error }, delayMs };
    }
    streamErrorAfter = 1;
  }

  const replyFlat = forReply === seen ? flat : flattenRequest(forReply, opts.mediaRules);
  // Newer models stop at the window rather than refuse: what the input leaves is the most they write.
  const out = applyLimits([...reasoningOf(scripted.modifiers, req, opts), ...scripted.content], scripted.stopReason, req.max_tokens as number, req.stop_sequences, window - replyFlat.totalTokens);
  const { accounting, ticket } = paused ? { accounting: { input: 0, read: 0, creation5m: 0, creation1h: 0 }, ticket: { owner, keys: [] } } : deps.cache.plan(replyFlat, min, owner);
  const message: WireMessage = {
    id: messageId(conversation),
    type: 'message',
    role: 'assistant',
    model: req.model,
    content: [...prefix, ...out.content],
    stop_reason: paused ? 'compaction' : out.stopReason,
    stop_sequence: out.stopSequence,
    usage: {
      ...usageOf(accounting, paused ? 0 : out.outputTokens),
      ...(compaction ? { iterations: [compaction.iteration, iteration('message', accounting, paused ? 0 : out.outputTokens)] } : {}),
    },
    ...(contextManagement ? { context_management: { applied_edits: applied } } : {}),
  };
  const pace = scripted.modifiers.find((m) => m.kind === 'pace');
  const tickets: CacheTicket = compaction ? { owner, keys: [...compaction.ticket.keys, ...ticket.keys] } : ticket;
  return { reply: { kind: 'message', message, stream, ticket: tickets, streamErrorAfter, ...(pace ? { paceMs: pace.ms } : {}) }, delayMs };
}

/**
 * Plans the answer to `POST /v1/messages/count_tokens`: `{input_tokens}` of the request as the
 * model would see it (clearing edits applied; `context_management.original_input_tokens`
 * before them). Counting refuses no size: a prompt over the window is counted all the same.
 */
export function planCountTokens(body: unknown, version: ApiVersion, betas: readonly string[] = []): PlannedReply {
  const req = validateRequest(body, { version, route: 'count_tokens' });
  checkCompactionBlocks(req.messages, betas);
  const edits = contextEditsOf(body as Record<string, unknown>, betas);
  const sized = (messages: MessageParam[]) => flattenRequest({ ...req, messages }).totalTokens;
  const messages = fromLastCompaction(req.messages);
  const cleared = applyClearing(messages, edits, sized);
  const counted = { input_tokens: sized(cleared.messages) };
  const answer = 'context_management' in (body as object) ? { ...counted, context_management: { original_input_tokens: sized(messages) } } : counted;
  return { reply: { kind: 'json', body: answer }, delayMs: 0 };
}
