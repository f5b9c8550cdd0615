/**
 * The model activity's side of context management (src/shared/context/): the request gets the
 * provider edits its call asks for and every beta header it needs; its size is measured before
 * it is sent (the shared estimate, and the provider's `count_tokens` near a limit, where the
 * endpoint has it); a request over the window or over forkflow's compaction threshold is not
 * sent (non-retryable failures the workflow answers by compacting); and a reply's usage is read
 * with the provider's compaction pass and context editing counted apart.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { MessagesRequest, Usage } from '../../shared/messages-api/anthropic';
import { CONTEXT_FAILURE, type ContextCallSpec, type ProviderCompaction } from '../../shared/context/call';
import { betaFor, COMPACT_BETA } from '../../shared/context/edits';
import { hasCompactionBlock } from '../../shared/context/summary';
import { promptTooLongMessage } from '../../shared/context/windows';
import { estimateRequestTokens, type MediaRules } from '../../shared/messages-api/request-tokens';
import type { ModelCallResult } from '../../shared/wire/activity-io';

/** A request as sent: its body and the beta headers it needs (none: the plain Messages API). */
export interface SentRequest {
  body: MessagesRequest;
  betas: string[];
}

/** The provider's MCP connector (a snapshot's `mcp_servers`) is a beta: the newest the pinned SDK names. */
const MCP_CONNECTOR_BETA = 'mcp-client-2026-09-15';

/** The body with the call's provider edits, and the beta headers it needs (the 1M window, the edits, a compaction block it sends back, the MCP connector). */
export function withContext(body: MessagesRequest, spec: ContextCallSpec | undefined): SentRequest {
  const betas = new Set(spec?.betas ?? []);
  let out = body;
  if (spec?.edits && spec.edits.length > 0) {
    out = { ...body, context_management: { edits: spec.edits } };
    for (const edit of spec.edits) betas.add(betaFor(edit));
  }
  if (body.messages.some(hasCompactionBlock)) betas.add(COMPACT_BETA);
  if (body.mcp_servers) betas.add(MCP_CONNECTOR_BETA);
  return { body: out, betas: [...betas] };
}

/** Within this share of a limit, the estimate is checked with the provider's own count. */
const NEAR_LIMIT = 0.9;

/** The limit a request is measured against: forkflow's threshold, else the window. */
function limitOf(spec: ContextCallSpec): number {
  return Math.min(spec.compactAbove ?? spec.window, spec.window);
}

/**
 * The request's input tokens: the shared estimate, or near a limit the provider's
 * `count_tokens` (when `count` is on and the endpoint answers it; an endpoint without it
 * leaves the estimate standing).
 */
export async function measureRequest(anthropic: Anthropic, sent: SentRequest, spec: ContextCallSpec, count: boolean, signal?: AbortSignal, rules?: MediaRules): Promise<number> {
  const estimate = estimateRequestTokens(sent.body, rules);
  if (!count || estimate < limitOf(spec) * NEAR_LIMIT) return estimate;
  const { model, messages, system, tools, tool_choice, thinking, context_management } = sent.body;
  const params = { model, messages, ...(system !== undefined ? { system } : {}), ...(tools ? { tools } : {}), ...(tool_choice ? { tool_choice } : {}), ...(thinking ? { thinking } : {}), ...(context_management ? { context_management } : {}) };
  try {
    const counted = sent.betas.length > 0
      ? await anthropic.beta.messages.countTokens({ ...(params as unknown as Anthropic.Beta.Messages.MessageCountTokensParams), betas: sent.betas }, { signal })
      : await anthropic.messages.countTokens(params as unknown as Anthropic.Messages.MessageCountTokensParams, { signal });
    return counted.input_tokens;
  } catch (err) {
    if (signal?.aborted) throw err;
    Context.current().log.warn('count_tokens failed; deciding on the estimate', { estimate, error: String(err) });
    return estimate;
  }
}

/** A request that does not fit its window, found before it was sent (the same type as the provider's refusal). */
export function promptTooLong(turn: number, tokens: number, window: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: CONTEXT_FAILURE.promptTooLong,
    message: `${promptTooLongMessage(tokens, window)} (model call of turn ${turn} not sent: found before sending)`,
    nonRetryable: true,
    details: [{ tokens, window, preflight: true }],
  });
}

/**
 * Throws when the request must not be sent: over the window (unless provider edits may still
 * shrink it and nothing counted it exactly), or over forkflow's compaction threshold.
 */
export function checkFits(turn: number, tokens: number, spec: ContextCallSpec, counted: boolean): void {
  const edited = (spec.edits?.length ?? 0) > 0;
  if (tokens > spec.window && (counted || !edited)) throw promptTooLong(turn, tokens, spec.window);
  if (spec.compactAbove !== undefined && tokens > spec.compactAbove) {
    throw ApplicationFailure.create({
      type: CONTEXT_FAILURE.overThreshold,
      message: `model call of turn ${turn} not sent: its request holds about ${tokens} tokens, over the compaction threshold of ${spec.compactAbove}`,
      nonRetryable: true,
      details: [{ tokens, threshold: spec.compactAbove }],
    });
  }
}

type ReplyUsage = Anthropic.Beta.Messages.BetaUsage | Anthropic.Messages.Usage;

function usageOf(u: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number | null; cache_creation_input_tokens?: number | null; cache_creation?: { ephemeral_1h_input_tokens?: number } | null }): Usage {
  const hour = u.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  return {
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    cacheReadInputTokens: u.cache_read_input_tokens ?? 0,
    cacheCreationInputTokens: u.cache_creation_input_tokens ?? 0,
    // Priced 2× input, not 1.25×: kept apart, and only when there is any.
    ...(hour ? { cacheCreation1hInputTokens: hour } : {}),
  };
}

function sum(a: Usage, b: Usage): Usage {
  const hour = (a.cacheCreation1hInputTokens ?? 0) + (b.cacheCreation1hInputTokens ?? 0);
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
    ...(hour ? { cacheCreation1hInputTokens: hour } : {}),
  };
}

/**
 * What a reply cost and did to the context: `usage` is everything billed — the reply's pass
 * and, when the provider compacted, its summarising pass (which the API leaves out of the
 * top-level fields) — with the compaction and the clearing apart.
 */
export function replyUsage(message: { usage: ReplyUsage; context_management?: Anthropic.Beta.Messages.BetaContextManagementResponse | null }, requestTokens?: number): Pick<ModelCallResult, 'usage' | 'compaction' | 'cleared'> {
  let usage = usageOf(message.usage);
  const passes = ('iterations' in message.usage ? message.usage.iterations : undefined) ?? [];
  const compactions = passes.filter((i) => i.type === 'compaction').map((i) => usageOf(i as Parameters<typeof usageOf>[0]));
  let compaction: ProviderCompaction | undefined;
  if (compactions.length > 0) {
    const spent = compactions.reduce(sum);
    usage = sum(usage, spent);
    const read = spent.inputTokens + spent.cacheReadInputTokens + spent.cacheCreationInputTokens;
    compaction = { usage: spent, tokensBefore: Math.max(requestTokens ?? 0, read) };
  }
  const edits = message.context_management?.applied_edits ?? [];
  const cleared = edits.length === 0 ? undefined : {
    toolUses: edits.reduce((n, e) => n + (e.type === 'clear_tool_uses_20250919' ? e.cleared_tool_uses : 0), 0),
    thinkingTurns: edits.reduce((n, e) => n + (e.type === 'clear_thinking_20251015' ? e.cleared_thinking_turns : 0), 0),
    tokens: edits.reduce((n, e) => n + e.cleared_input_tokens, 0),
  };
  return { usage, ...(compaction ? { compaction } : {}), ...(cleared ? { cleared } : {}) };
}
