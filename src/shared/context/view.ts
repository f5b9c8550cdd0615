/**
 * The part of a conversation a model request sends, once its context has been managed: it
 * starts at the latest compaction boundary (`from`: forkflow's summary message, or the reply
 * that holds the provider's compaction block), and tool results before `clearedThrough` are
 * sent as a placeholder (forkflow's own tool-result clearing). The conversation itself stays
 * whole and append-only (transcripts, forks by reference, digests); only requests are cut.
 * Pure: the model activity and the workflow compute the same thing.
 */
import { blocksOf, type ContentBlock, type MessageParam } from '../messages-api/anthropic';
import { blockTokens, type MediaRules } from '../messages-api/request-tokens';
import { MESSAGE_OVERHEAD_TOKENS } from '../messages-api/tokens';
import { CLEARED_TOOL_RESULT } from './edits';

/** Where a request's messages start and what it clears (global message indexes). */
export interface ContextView {
  /** The first message the model sees (0: the whole conversation). */
  from?: number;
  /** Tool results in messages before this index are sent cleared. */
  clearedThrough?: number;
}

/** A message's tokens by the shared estimate (its blocks, and the per-message overhead); `rules`: whose count images and documents. */
export function messageTokens(message: MessageParam, rules?: MediaRules): number {
  return blocksOf(message).reduce((n, b, i) => n + blockTokens(b as Record<string, unknown>, i === 0 ? MESSAGE_OVERHEAD_TOKENS : 0, rules), 0);
}

function clearedBlock(block: ContentBlock): ContentBlock {
  if (block.type !== 'tool_result' || block.content === CLEARED_TOOL_RESULT) return block;
  const { content: _dropped, ...rest } = block;
  return { ...rest, content: CLEARED_TOOL_RESULT };
}

/** `messages` with the tool results of messages [0, before) replaced by the placeholder (tool calls stay). */
export function clearToolResults(messages: MessageParam[], before: number): MessageParam[] {
  return messages.map((m, i) => {
    if (i >= before || m.role !== 'user' || typeof m.content === 'string' || !m.content.some((b) => b.type === 'tool_result')) return m;
    return { ...m, content: m.content.map(clearedBlock) };
  });
}

/**
 * The messages a request sends out of the whole conversation `all` (indexes global).
 *
 * @example viewMessages(all, { from: 40 }) // all.slice(40)
 */
export function viewMessages(all: MessageParam[], view: ContextView | undefined): MessageParam[] {
  const from = view?.from ?? 0;
  const out = from > 0 ? all.slice(from) : all;
  const cleared = (view?.clearedThrough ?? 0) - from;
  return cleared > 0 ? clearToolResults(out, cleared) : out;
}

/**
 * forkflow's clearing point: the index after the user message that answers the
 * `(keep + 1)`-th most recent tool call, so the results of the last `keep` calls stay (and
 * those sharing a message with them). `messages` are those a run holds, `messages[0]` at
 * global index `base`; undefined when fewer than `keep + 1` calls are on record there.
 */
export function clearingPoint(messages: MessageParam[], base: number, keep: number): number | undefined {
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user' || typeof m.content === 'string') continue;
    seen += m.content.filter((b) => b.type === 'tool_result').length;
    if (seen > keep) return base + i + 1;
  }
  return undefined;
}

/**
 * Where the turns kept verbatim after a forkflow summary start: the earliest assistant message
 * from which the rest of the conversation fits `budget` tokens. The summary covers
 * `[from, start)`, so the start is after `from` (something is summarised) and within what this
 * run holds (`messages[0]` is at global `base`); the end (`base + messages.length`) keeps none.
 */
export function recentTurnsStart(messages: MessageParam[], base: number, from: number, budget: number, rules?: MediaRules): number {
  const end = base + messages.length;
  let start = end;
  let tokens = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const at = base + i;
    if (at <= from) break;
    tokens += messageTokens(messages[i]!, rules);
    if (tokens > budget) break;
    if (messages[i]!.role === 'assistant') start = at;
  }
  return start;
}
