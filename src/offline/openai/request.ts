/**
 * The offline model's OpenAI Chat Completions side, request half: validates a
 * `POST /v1/chat/completions` body (zod) and restates it as the Messages request the
 * scripted model, the prompt cache and the limits already understand. System and developer
 * messages become the system prompt, function tools become tools, assistant `tool_calls`
 * become `tool_use` blocks and `tool` messages become `tool_result` blocks, so the same
 * `@reply`/`@tool` scripts answer on both wires.
 */
import { z } from 'zod';
import { invalidRequest } from '../errors';

const textPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const imagePart = z.looseObject({ type: z.literal('image_url'), image_url: z.looseObject({ url: z.string().min(1) }) });
const userContent = z.union([z.string(), z.array(z.discriminatedUnion('type', [textPart, imagePart]))]);
const textContent = z.union([z.string(), z.array(textPart)]);

const toolCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

const message = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: textContent }),
  z.looseObject({ role: z.literal('developer'), content: textContent }),
  z.looseObject({ role: z.literal('user'), content: userContent }),
  z.looseObject({ role: z.literal('assistant'), content: textContent.nullish(), tool_calls: z.array(toolCall).optional() }),
  z.looseObject({ role: z.literal('tool'), tool_call_id: z.string().min(1), content: textContent }),
]);

const functionTool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1).max(64),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

const toolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) }),
]);

/** The Chat Completions request fields the offline model reads; others are accepted and ignored. */
export const chatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  tools: z.array(functionTool).optional(),
  tool_choice: toolChoice.optional(),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  n: z.number().int().nullish(),
  reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullish(),
});
export type ChatRequest = z.infer<typeof chatRequestSchema>;

/** What a request that names no limit may write (Chat Completions has no required max). */
export const DEFAULT_MAX_TOKENS = 4096;

type Block = Record<string, unknown>;

const texts = (content: z.infer<typeof textContent> | null | undefined): string =>
  content == null ? '' : typeof content === 'string' ? content : content.map((p) => p.text).join('');

/**
 * An `image_url` part as a Messages image block: a `data:` URL becomes base64, anything else a
 * URL source. Its `detail` rides along (the tile rule costs `low` at 85 tokens).
 */
function imageBlock(part: { url: string; detail?: unknown }): Block {
  const detail = typeof part.detail === 'string' ? { detail: part.detail } : {};
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(part.url);
  if (data) return { type: 'image', source: { type: 'base64', media_type: data[1], data: data[2] }, ...detail };
  return { type: 'image', source: { type: 'url', url: part.url }, ...detail };
}

function userBlocks(content: z.infer<typeof userContent>): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((p) => (p.type === 'text' ? { type: 'text', text: p.text } : imageBlock(p.image_url)));
}

function toolUse(call: z.infer<typeof toolCall>, at: number): Block {
  let input: unknown;
  try {
    input = JSON.parse(call.function.arguments);
  } catch {
    throw invalidRequest(`messages[${at}].tool_calls: arguments of "${call.id}" are not valid JSON.`);
  }
  return { type: 'tool_use', id: call.id, name: call.function.name, input };
}

/** Appends blocks to the last message when it has the same role (the Messages API merges such turns anyway). */
function push(out: { role: 'user' | 'assistant'; content: Block[] }[], role: 'user' | 'assistant', blocks: Block[]): void {
  const last = out[out.length - 1];
  if (last?.role === role) last.content.push(...blocks);
  else out.push({ role, content: blocks });
}

/** Chat Completions' `reasoning_effort` as the Messages `output_config.effort` (`none`/`minimal` as `low`). */
function messagesEffort(e: NonNullable<ChatRequest['reasoning_effort']>): string {
  return e === 'none' || e === 'minimal' ? 'low' : e;
}

/**
 * Restates a Chat Completions body as a Messages body. Throws 400 `invalid_request_error`
 * for what the Chat Completions API would refuse, and for `n` > 1 (one choice only).
 */
export function toMessagesBody(body: unknown): { messages: Record<string, unknown>; request: ChatRequest } {
  const parsed = chatRequestSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalidRequest(`${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid request'}`);
  }
  const req = parsed.data;
  if (req.n != null && req.n !== 1) throw invalidRequest('n: the offline model answers with one choice only.');
  const system: string[] = [];
  const messages: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  req.messages.forEach((m, at) => {
    if (m.role === 'system' || m.role === 'developer') system.push(texts(m.content));
    else if (m.role === 'user') push(messages, 'user', userBlocks(m.content));
    else if (m.role === 'tool') push(messages, 'user', [{ type: 'tool_result', tool_use_id: m.tool_call_id, content: texts(m.content) }]);
    else {
      const text = texts(m.content);
      const blocks: Block[] = text === '' ? [] : [{ type: 'text', text }];
      m.tool_calls?.forEach((c) => blocks.push(toolUse(c, at)));
      if (blocks.length === 0) throw invalidRequest(`messages[${at}]: an assistant message needs content or tool_calls.`);
      push(messages, 'assistant', blocks);
    }
  });
  const tc = req.tool_choice;
  const toolChoiceOut =
    tc === undefined ? undefined : tc === 'required' ? { type: 'any' } : typeof tc === 'string' ? { type: tc } : { type: 'tool', name: tc.function.name };
  const stop = req.stop == null ? undefined : typeof req.stop === 'string' ? [req.stop] : req.stop;
  const out: Record<string, unknown> = {
    model: req.model,
    max_tokens: req.max_completion_tokens ?? req.max_tokens ?? DEFAULT_MAX_TOKENS,
    messages,
    ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
    ...(req.tools?.length
      ? { tools: req.tools.map((t) => ({ name: t.function.name, ...(t.function.description === undefined ? {} : { description: t.function.description }), input_schema: { type: 'object', ...t.function.parameters } })) }
      : {}),
    ...(toolChoiceOut && req.tools?.length ? { tool_choice: toolChoiceOut } : {}),
    ...(stop?.length ? { stop_sequences: stop } : {}),
    ...(req.stream ? { stream: true } : {}),
    // Kept where the scripted model and the request log see it (the Messages spelling of the nearest level).
    ...(req.reasoning_effort ? { output_config: { effort: messagesEffort(req.reasoning_effort) } } : {}),
  };
  return { messages: out, request: req };
}
