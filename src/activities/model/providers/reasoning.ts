/**
 * Reasoning across the two wires. Going out to Chat Completions, an agent's Messages settings
 * become `reasoning_effort`: its effort (`output_config.effort`, `max` as the highest level,
 * `xhigh`), else its thinking budget (`thinking.budget_tokens`, on the scale of Anthropic's
 * effort guidance: under 4K low, under 16K medium, else high). Coming back, the reasoning an
 * OpenAI-compatible server returns (`reasoning_content`, or `reasoning`, on the message and on
 * stream deltas: vLLM, SGLang, DeepSeek, OpenRouter) becomes a `thinking` block of the reply,
 * unsigned: only Anthropic signs thinking. So it is kept in the transcript and streamed live,
 * and {@link withoutUnsignedThinking} leaves it out of a request to Anthropic (which checks
 * every signature: an agent that failed over to it, or a counterfactual fork moved there), as
 * the Chat Completions side leaves every thinking block out (its published request has no
 * field for earlier reasoning, and DeepSeek refuses `reasoning_content` sent back).
 */
import type OpenAI from 'openai';
import type { ContentBlock, MessageParam, MessagesRequest } from '../../../shared/messages-api/anthropic';

/** Thinking budgets (tokens) below which the Chat side asks for `low`, then `medium`; above, `high`. */
const LOW_BELOW = 4_096;
const MEDIUM_BELOW = 16_384;

/** The `reasoning_effort` a Messages body asks for, or undefined when it asks for none. */
export function reasoningEffortOf(body: Pick<MessagesRequest, 'output_config' | 'thinking'>): OpenAI.ReasoningEffort | undefined {
  const effort = body.output_config?.effort;
  if (effort) return effort === 'max' ? 'xhigh' : effort;
  const thinking = body.thinking;
  if (thinking?.type !== 'enabled') return undefined;
  const budget = (thinking as { budget_tokens: number }).budget_tokens;
  return budget < LOW_BELOW ? 'low' : budget < MEDIUM_BELOW ? 'medium' : 'high';
}

/** A provider's reasoning text on a Chat Completions message or delta (`reasoning_content`, else `reasoning`). */
export function reasoningTextOf(part: unknown): string | undefined {
  const p = part as { reasoning_content?: unknown; reasoning?: unknown } | null | undefined;
  if (typeof p?.reasoning_content === 'string' && p.reasoning_content !== '') return p.reasoning_content;
  if (typeof p?.reasoning === 'string' && p.reasoning !== '') return p.reasoning;
  return undefined;
}

const unsigned = (b: ContentBlock) => b.type === 'thinking' && !(b as { signature?: unknown }).signature;

/**
 * `body` without thinking blocks that carry no signature (another provider's reasoning, kept as
 * thinking): the same object when it has none, so every Anthropic request is as it was.
 */
export function withoutUnsignedThinking(body: MessagesRequest): MessagesRequest {
  const has = body.messages.some((m) => m.role === 'assistant' && typeof m.content !== 'string' && m.content.some(unsigned));
  if (!has) return body;
  const messages = body.messages.flatMap((m): MessageParam[] => {
    if (m.role !== 'assistant' || typeof m.content === 'string' || !m.content.some(unsigned)) return [m];
    const content = m.content.filter((b) => !unsigned(b));
    // A turn that held nothing but reasoning says nothing to the model.
    return content.length > 0 ? [{ ...m, content }] : [];
  });
  return { ...body, messages };
}
