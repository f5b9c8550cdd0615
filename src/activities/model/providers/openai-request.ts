/**
 * Messages request → Chat Completions request, for providers of kind `openai-compatible`.
 * Agents keep the Messages shapes; this is the one place they are restated: system blocks
 * become one system message, tools become functions, `tool_use` blocks become `tool_calls`,
 * `tool_result` blocks become `tool` messages (their images follow in a user message: a
 * tool message carries text only), images become `image_url` parts.
 *
 * What Chat Completions cannot express is dropped or refused, never guessed:
 * `cache_control` markers are dropped (these providers cache prefixes automatically),
 * thinking blocks are dropped (the request has no field for earlier reasoning), `is_error`
 * becomes a text prefix, documents other than plain text, server tools, `context_management`
 * and `mcp_servers` are refused with {@link UnsupportedByProvider}. A tool name OpenAI would
 * refuse (over 64 characters) goes out as a stand-in (openai-tool-names.ts). An agent's
 * `output_config.effort`, else its `thinking` budget, becomes `reasoning_effort`
 * (reasoning.ts), which reasoning models read (a provider whose models cannot reason may
 * refuse it: give such an agent no effort and no thinking). The conversion is a pure
 * function of the body, so siblings that share a Messages prefix send byte-identical Chat prefixes.
 */
import type OpenAI from 'openai';
import type { ContentBlock, MessageParam, MessagesRequest, SystemParam, ToolDefinition } from '../../../shared/messages-api/anthropic';
import { chatToolName } from './openai-tool-names';
import { reasoningEffortOf } from './reasoning';

/** A request part a Chat Completions provider cannot take (the call fails non-retryably with it). */
export class UnsupportedByProvider extends Error {
  override readonly name = 'UnsupportedByProvider';
}

/** What a tool result that was an error reads like to a model with no `is_error` flag. */
export const TOOL_ERROR_PREFIX = '[tool error] ';

type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;
type UserPart = OpenAI.Chat.ChatCompletionContentPart;

const blocks = (content: string | ContentBlock[]): ContentBlock[] => (typeof content === 'string' ? [{ type: 'text', text: content }] : content);

function systemText(system: SystemParam): string {
  return typeof system === 'string' ? system : system.map((b) => b.text).join('\n\n');
}

function imagePart(block: ContentBlock): UserPart {
  const source = (block as { source: { type: string; media_type?: string; data?: string; url?: string } }).source;
  if (source.type === 'base64') return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  if (source.type === 'url' && source.url) return { type: 'image_url', image_url: { url: source.url } };
  throw new UnsupportedByProvider(`An image with source type "${source.type}" cannot be sent to a Chat Completions provider.`);
}

/** A text, image or plain-text document block as a user content part. */
function userPart(block: ContentBlock): UserPart | undefined {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      return imagePart(block);
    case 'document': {
      const source = block.source as { type: string; data?: string };
      if (source.type === 'text' && typeof source.data === 'string') return { type: 'text', text: source.data };
      throw new UnsupportedByProvider(`A document with source type "${source.type}" cannot be sent to a Chat Completions provider.`);
    }
    case 'compaction':
      return block.content ? { type: 'text', text: block.content } : undefined;
    case 'thinking':
    case 'redacted_thinking':
      return undefined;
    default:
      throw new UnsupportedByProvider(`A "${block.type}" block cannot be sent to a Chat Completions provider.`);
  }
}

/** A user turn: each tool result as a `tool` message (in order), then its images and the turn's own text and images. */
function userMessages(message: MessageParam): ChatMessage[] {
  const out: ChatMessage[] = [];
  const parts: UserPart[] = [];
  for (const block of blocks(message.content)) {
    if (block.type !== 'tool_result') {
      const part = userPart(block);
      if (part) parts.push(part);
      continue;
    }
    const inner = block.content === undefined ? [] : blocks(block.content);
    const text = inner.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
    out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: `${block.is_error ? TOOL_ERROR_PREFIX : ''}${text}` });
    for (const b of inner) if (b.type !== 'text') parts.push(imagePart(b));
  }
  if (parts.length > 0) out.push({ role: 'user', content: parts.every((p) => p.type === 'text') && parts.length === 1 ? (parts[0] as { text: string }).text : parts });
  return out;
}

function assistantMessage(message: MessageParam): ChatMessage | undefined {
  const text: string[] = [];
  const calls: OpenAI.Chat.ChatCompletionMessageFunctionToolCall[] = [];
  for (const block of blocks(message.content)) {
    if (block.type === 'text') text.push(block.text);
    else if (block.type === 'tool_use') calls.push({ id: block.id, type: 'function', function: { name: chatToolName(block.name), arguments: JSON.stringify(block.input ?? {}) } });
    else if (block.type === 'compaction' && block.content) text.push(block.content);
    else if (block.type !== 'thinking' && block.type !== 'redacted_thinking') {
      throw new UnsupportedByProvider(`An assistant "${block.type}" block cannot be sent to a Chat Completions provider.`);
    }
  }
  if (text.length === 0 && calls.length === 0) return undefined;
  return { role: 'assistant', content: text.length > 0 ? text.join('') : null, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
}

function functionTool(tool: ToolDefinition): OpenAI.Chat.ChatCompletionTool {
  const kind = (tool as { type?: string }).type;
  if (kind !== undefined && kind !== 'custom') throw new UnsupportedByProvider(`The server tool "${tool.name}" (${kind}) has no Chat Completions equivalent.`);
  const { type: _type, ...parameters } = tool.input_schema;
  return {
    type: 'function',
    function: { name: chatToolName(tool.name), ...(tool.description === undefined ? {} : { description: tool.description }), parameters: { type: 'object', ...parameters } },
  };
}

function toolChoice(choice: Record<string, unknown>): OpenAI.Chat.ChatCompletionToolChoiceOption {
  switch (choice.type) {
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: chatToolName(String(choice.name)) } };
    default:
      return 'auto';
  }
}

/**
 * The Chat Completions body for a Messages body. `stream` asks for SSE with the usage chunk
 * (`stream_options.include_usage`), so streamed calls are charged like the others.
 */
export function toChatRequest(body: MessagesRequest, stream: boolean): OpenAI.Chat.ChatCompletionCreateParams {
  if (body.context_management) throw new UnsupportedByProvider('Provider context management (context_management) has no Chat Completions equivalent: run this agent without provider context edits.');
  if (body.mcp_servers?.length) throw new UnsupportedByProvider('The MCP connector (mcp_servers) has no Chat Completions equivalent.');
  const messages: ChatMessage[] = body.system === undefined ? [] : [{ role: 'system', content: systemText(body.system) }];
  for (const message of body.messages) {
    if (message.role === 'user') messages.push(...userMessages(message));
    else {
      const m = assistantMessage(message);
      if (m) messages.push(m);
    }
  }
  const extra = body as MessagesRequest & { temperature?: number; top_p?: number };
  const effort = reasoningEffortOf(body);
  return {
    model: body.model,
    messages,
    max_completion_tokens: body.max_tokens,
    ...(body.tools?.length ? { tools: body.tools.map(functionTool) } : {}),
    ...(body.tool_choice && body.tools?.length ? { tool_choice: toolChoice(body.tool_choice) } : {}),
    ...(body.stop_sequences?.length ? { stop: body.stop_sequences.slice(0, 4) } : {}),
    ...(extra.temperature === undefined ? {} : { temperature: extra.temperature }),
    ...(extra.top_p === undefined ? {} : { top_p: extra.top_p }),
    ...(effort ? { reasoning_effort: effort } : {}),
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}
