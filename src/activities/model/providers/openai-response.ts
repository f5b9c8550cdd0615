/**
 * Chat Completions response → Messages response, for providers of kind `openai-compatible`:
 * a whole `chat.completion` as a Message, and a stream of `chat.completion.chunk`s as the
 * Messages stream events (so live subscribers see the same events whatever the provider)
 * plus the final Message. Usage: `prompt_tokens` counts cached tokens too, so
 * `input_tokens` = prompt − cached, `cache_read_input_tokens` = `cached_tokens`, and
 * `cache_creation_input_tokens` = 0 (these providers charge no cache writes). A server's
 * reasoning (`reasoning_content` or `reasoning`, reasoning.ts) opens the Message as an
 * unsigned `thinking` block, streamed as `thinking_delta`s. A refusal (the message's `refusal`,
 * with no content) is the reply's text, and its stop reason `refusal`, so the agent and its
 * caller read why the model declined instead of an empty turn.
 */
import { reasoningTextOf } from './reasoning';
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';

type Message = Anthropic.Messages.Message;
type StreamEvent = Anthropic.Messages.RawMessageStreamEvent;
type StopReason = Message['stop_reason'];

/** Messages usage from Chat Completions usage (absent: zeros, the call is then charged nothing). */
export function messagesUsage(u: OpenAI.CompletionUsage | null | undefined): Anthropic.Messages.Usage {
  const cached = u?.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (u?.prompt_tokens ?? 0) - cached),
    output_tokens: u?.completion_tokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
    cache_creation: null,
    server_tool_use: null,
    service_tier: null,
  } as Anthropic.Messages.Usage;
}

function stopReason(finish: string | null | undefined, calledTools: boolean, refused = false): StopReason {
  if (refused) return 'refusal';
  if (calledTools || finish === 'tool_calls' || finish === 'function_call') return 'tool_use';
  if (finish === 'length') return 'max_tokens';
  if (finish === 'content_filter') return 'refusal';
  return 'end_turn';
}

/**
 * A tool call's arguments as the tool's input. Arguments that are not a JSON object are kept
 * as a string under `arguments`, so the tool's own schema refuses them back to the model.
 */
export function toolInput(raw: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(raw === '' ? '{}' : raw);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Not JSON: handed to the tool as is, below.
  }
  return { arguments: raw };
}

function message(id: string, model: string, content: Message['content'], stop: StopReason, usage: Anthropic.Messages.Usage): Message {
  return { id, type: 'message', role: 'assistant', model, content, stop_reason: stop, stop_sequence: null, usage, container: null } as unknown as Message;
}

/** A whole completion as a Message (its first choice). */
export function fromChatCompletion(c: OpenAI.Chat.ChatCompletion): Message {
  const choice = c.choices[0];
  const content: Message['content'] = [];
  const reasoning = reasoningTextOf(choice?.message);
  if (reasoning !== undefined) content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  if (choice?.message.content) content.push({ type: 'text', text: choice.message.content, citations: null });
  const refusal = choice?.message.refusal;
  if (refusal) content.push({ type: 'text', text: refusal, citations: null });
  const calls = (choice?.message.tool_calls ?? []).filter((t) => t.type === 'function');
  for (const call of calls) content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function.arguments) } as Anthropic.Messages.ToolUseBlock);
  return message(c.id, c.model, content, stopReason(choice?.finish_reason, calls.length > 0, Boolean(refusal)), messagesUsage(c.usage));
}

interface OpenBlock {
  kind: 'text' | 'tool' | 'thinking';
  /** Chat tool-call index, for tool blocks. */
  call?: number;
  text: string;
  id?: string;
  name?: string;
}

/** Turns stream chunks into Messages stream events and, at the end, the Message they make. */
export class ChunkTranslator {
  private readonly blocks: OpenBlock[] = [];
  private started = false;
  private id = '';
  private model = '';
  private finish: string | null = null;
  private refused = false;
  private usage: OpenAI.CompletionUsage | null | undefined;

  /** `names`: stand-in tool names → the agent's (openai-tool-names.ts), so live events name the agent's tools too. */
  constructor(private readonly names: ReadonlyMap<string, string> = new Map()) {}

  /** The events one chunk makes (none for a usage-only chunk). */
  push(chunk: OpenAI.Chat.ChatCompletionChunk): StreamEvent[] {
    const events: StreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      this.id = chunk.id;
      this.model = chunk.model;
      events.push({ type: 'message_start', message: message(chunk.id, chunk.model, [], null, messagesUsage(undefined)) });
    }
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) return events;
    const delta = choice.delta;
    const reasoning = reasoningTextOf(delta);
    if (reasoning !== undefined) {
      if (this.open()?.kind !== 'thinking') this.openBlock(events, { kind: 'thinking', text: '' });
      (this.open() as OpenBlock).text += reasoning;
      events.push({ type: 'content_block_delta', index: this.blocks.length - 1, delta: { type: 'thinking_delta', thinking: reasoning } });
    }
    for (const text of [delta.content, delta.refusal]) {
      if (!text) continue;
      if (this.open()?.kind !== 'text') this.openBlock(events, { kind: 'text', text: '' });
      (this.open() as OpenBlock).text += text;
      events.push({ type: 'content_block_delta', index: this.blocks.length - 1, delta: { type: 'text_delta', text } });
    }
    if (delta.refusal) this.refused = true;
    for (const call of delta.tool_calls ?? []) {
      const current = this.open();
      if (current?.kind !== 'tool' || current.call !== call.index) {
        this.openBlock(events, { kind: 'tool', call: call.index, text: '', id: call.id ?? `call_${call.index}`, name: this.agentName(call.function?.name ?? '') });
      }
      const args = call.function?.arguments;
      if (args) {
        (this.open() as OpenBlock).text += args;
        events.push({ type: 'content_block_delta', index: this.blocks.length - 1, delta: { type: 'input_json_delta', partial_json: args } });
      }
    }
    if (choice.finish_reason) this.finish = choice.finish_reason;
    return events;
  }

  /** The closing events, and the Message the stream made. */
  end(): { events: StreamEvent[]; message: Message } {
    const events: StreamEvent[] = [];
    if (this.blocks.length > 0) events.push({ type: 'content_block_stop', index: this.blocks.length - 1 });
    const content = this.blocks.map((b): Message['content'][number] => {
      if (b.kind === 'text') return { type: 'text', text: b.text, citations: null };
      if (b.kind === 'thinking') return { type: 'thinking', thinking: b.text, signature: '' };
      return { type: 'tool_use', id: b.id, name: b.name, input: toolInput(b.text) } as Anthropic.Messages.ToolUseBlock;
    });
    const usage = messagesUsage(this.usage);
    const stop = stopReason(this.finish, this.blocks.some((b) => b.kind === 'tool'), this.refused);
    events.push({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage } as unknown as StreamEvent);
    events.push({ type: 'message_stop' });
    return { events, message: message(this.id, this.model, content, stop, usage) };
  }

  private agentName(name: string): string {
    return this.names.get(name) ?? name;
  }

  private open(): OpenBlock | undefined {
    return this.blocks[this.blocks.length - 1];
  }

  private openBlock(events: StreamEvent[], block: OpenBlock): void {
    if (this.blocks.length > 0) events.push({ type: 'content_block_stop', index: this.blocks.length - 1 });
    this.blocks.push(block);
    const index = this.blocks.length - 1;
    const start = block.kind === 'text' ? { type: 'text', text: '', citations: null } : block.kind === 'thinking' ? { type: 'thinking', thinking: '', signature: '' } : { type: 'tool_use', id: block.id, name: block.name, input: {} };
    events.push({ type: 'content_block_start', index, content_block: start } as StreamEvent);
  }
}
