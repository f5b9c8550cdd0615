/**
 * Input tokens of a Messages request by the shared estimate (tokens.ts for text and JSON,
 * media-tokens.ts for images and documents), block by block as the offline model's prompt
 * cache counts them (src/offline/flatten.ts uses the same function): tools, then system, then
 * each message's blocks, the per-message overhead on a message's first block, `cache_control`
 * markers not counted. A model call reserves this (plus its `max_tokens`) against the tree's
 * budget before it is made.
 *
 * `rules` says whose published rules count images and documents (default Anthropic's);
 * `bytes` is the estimate from before, which counted them as their JSON text.
 */
import type { ContentBlock, MessageParam, SystemParam, ToolDefinition } from './anthropic';
import { mediaTokens, type MediaRules } from './media-tokens';
import { estimateJsonTokens, MESSAGE_OVERHEAD_TOKENS } from './tokens';

export type { MediaRules } from './media-tokens';

/** A block without its cache markers, nested ones (tool_result content) included. */
export function stripCacheControl(block: Record<string, unknown>): Record<string, unknown> {
  const { cache_control: _ignored, ...rest } = block;
  if (Array.isArray(rest.content)) {
    rest.content = rest.content.map((c: unknown) => (c !== null && typeof c === 'object' ? stripCacheControl(c as Record<string, unknown>) : c));
  }
  return rest;
}

/** Tokens of one block as the cache counts it (its first-in-message overhead included). */
export function blockTokens(block: Record<string, unknown>, overhead: number, rules: MediaRules = 'anthropic'): number {
  const stripped = stripCacheControl(block);
  return (mediaTokens(stripped, rules) ?? estimateJsonTokens(stripped)) + overhead;
}

/** A string (system or message content) is one text block, as the API reads it. */
export function asBlocks(content: string | ContentBlock[]): ContentBlock[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

export function estimateRequestTokens(req: { tools?: ToolDefinition[]; system?: SystemParam; messages: MessageParam[] }, rules: MediaRules = 'anthropic'): number {
  let total = 0;
  for (const tool of req.tools ?? []) total += blockTokens(tool, 0, rules);
  if (req.system !== undefined) for (const b of asBlocks(req.system)) total += blockTokens(b, 0, rules);
  for (const message of req.messages) {
    asBlocks(message.content).forEach((b, i) => {
      total += blockTokens(b, i === 0 ? MESSAGE_OVERHEAD_TOKENS : 0, rules);
    });
  }
  return total;
}
