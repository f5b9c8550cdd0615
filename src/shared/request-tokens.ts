/**
 * Input tokens of a Messages request by the shared estimate (tokens.ts), block by block as
 * the offline model's prompt cache counts them (src/offline/flatten.ts uses the same
 * function): tools, then system, then each message's blocks, the per-message overhead on a
 * message's first block, `cache_control` markers not counted. A model call reserves this
 * (plus its `max_tokens`) against the tree's budget before it is made.
 */
import type { ContentBlock, MessageParam, SystemParam, ToolDefinition } from './anthropic';
import { estimateJsonTokens, MESSAGE_OVERHEAD_TOKENS } from './tokens';

/** A block without its cache markers, nested ones (tool_result content) included. */
export function stripCacheControl(block: Record<string, unknown>): Record<string, unknown> {
  const { cache_control: _ignored, ...rest } = block;
  if (Array.isArray(rest.content)) {
    rest.content = rest.content.map((c: unknown) => (c !== null && typeof c === 'object' ? stripCacheControl(c as Record<string, unknown>) : c));
  }
  return rest;
}

/** Tokens of one block as the cache counts it (its first-in-message overhead included). */
export function blockTokens(block: Record<string, unknown>, overhead: number): number {
  return estimateJsonTokens(stripCacheControl(block)) + overhead;
}

/** A string (system or message content) is one text block, as the API reads it. */
export function asBlocks(content: string | ContentBlock[]): ContentBlock[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

export function estimateRequestTokens(req: { tools?: ToolDefinition[]; system?: SystemParam; messages: MessageParam[] }): number {
  let total = 0;
  for (const tool of req.tools ?? []) total += blockTokens(tool, 0);
  if (req.system !== undefined) for (const b of asBlocks(req.system)) total += blockTokens(b, 0);
  for (const message of req.messages) {
    asBlocks(message.content).forEach((b, i) => {
      total += blockTokens(b, i === 0 ? MESSAGE_OVERHEAD_TOKENS : 0);
    });
  }
  return total;
}
