/**
 * Request validation for `/v1/messages` and `/v1/messages/count_tokens`: rejects what the
 * real API rejects, with 400 `invalid_request_error` and a message naming the field, so
 * a bug in request building shows up offline rather than on the first paid call.
 *
 * Validate, don't transform: the body object is returned as it is, only typed.
 */
import { requestMediaIssues } from '../../shared/messages-api/media-limits';
import { z } from 'zod';
import {
  type CacheControl,
  type ContentBlock,
  type MessageParam,
  type MessagesRequest,
  cacheControlSchema,
  contentBlockSchema,
  textBlockSchema,
  thinkingConfigSchema,
  toolDefinitionSchema,
} from '../../shared/messages-api/anthropic';
import { invalidRequest } from '../errors';
import { countCacheMarkers, ttlOrderViolation } from '../flatten';

/** anthropic-version values the emulator speaks (0.x SDKs and 1.x SDKs). */
export const SUPPORTED_VERSIONS = ['2023-06-01', '2026-10-21'] as const;
export type ApiVersion = (typeof SUPPORTED_VERSIONS)[number];

export const MAX_CACHE_MARKERS = 4;

/** A validated request body (the same object that was received). */
export type ValidRequest = Omit<MessagesRequest, 'max_tokens'> & {
  max_tokens?: number;
  cache_control?: CacheControl | null;
};

export interface ValidationContext {
  version: ApiVersion;
  /** `max_tokens` and the sampling checks apply to `/v1/messages` only. */
  route: 'messages' | 'count_tokens';
}

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Throws the first zod issue as `path: message`. */
function check(schema: z.ZodType, value: unknown, path: string): void {
  const r = schema.safeParse(value);
  if (r.success) return;
  const issue = r.error.issues[0];
  const where = [path, ...(issue?.path ?? []).map(String)].filter((p) => p !== '').join('.');
  throw invalidRequest(`${where}: ${issue?.message ?? 'Invalid input'}`);
}

/**
 * Validates a parsed request body, throwing an {@link ApiError} (400) on the first problem.
 */
export function validateRequest(body: unknown, ctx: ValidationContext): ValidRequest {
  if (!isObject(body)) throw invalidRequest('Request body must be a JSON object.');
  if (!('model' in body)) throw invalidRequest('model: Field required');
  if (typeof body.model !== 'string' || body.model.trim() === '') {
    throw invalidRequest('model: Input should be a non-empty string');
  }
  if (ctx.route === 'messages') checkMaxTokens(body);
  checkSampling(body, ctx);
  checkMessages(body);
  checkTopLevel(body);
  checkThinking(body, ctx);
  const req = body as unknown as ValidRequest;
  checkCacheMarkers(req);
  checkToolPairing(req.messages);
  checkMedia(req);
  return req;
}

/**
 * Images and documents the API refuses (src/shared/messages-api/media-limits.ts): the first, with its
 * path, as the API's 400. Pages are held to the larger windows' 600 (the window is not known here).
 */
function checkMedia(req: ValidRequest): void {
  const first = requestMediaIssues(req.messages, Number.POSITIVE_INFINITY)[0];
  if (first) throw invalidRequest(`${first.path}: ${first.issue}`);
}

function checkMaxTokens(body: Obj): void {
  if (!('max_tokens' in body)) throw invalidRequest('max_tokens: Field required');
  const v = body.max_tokens;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) {
    throw invalidRequest(`max_tokens: Input should be an integer greater than or equal to 1 (got ${JSON.stringify(v)})`);
  }
}

function checkSampling(body: Obj, ctx: ValidationContext): void {
  for (const name of ['temperature', 'top_p', 'top_k'] as const) {
    if (!(name in body)) continue;
    if (ctx.version === '2026-10-21') {
      throw invalidRequest(`${name}: not supported with anthropic-version 2026-10-21; omit it from the request.`);
    }
    if (typeof body[name] !== 'number') throw invalidRequest(`${name}: Input should be a number`);
  }
}

function checkMessages(body: Obj): void {
  if (!('messages' in body)) throw invalidRequest('messages: Field required');
  const messages = body.messages;
  if (!Array.isArray(messages)) throw invalidRequest('messages: Input should be a valid list');
  if (messages.length === 0) throw invalidRequest('messages: at least one message is required');
  messages.forEach((m: unknown, i) => {
    if (!isObject(m)) throw invalidRequest(`messages.${i}: Input should be an object`);
    if (m.role !== 'user' && m.role !== 'assistant') {
      throw invalidRequest(
        `messages.${i}.role: Input should be 'user' or 'assistant' (got ${JSON.stringify(m.role)}); ` +
          'system prompts go in the top-level `system` parameter.',
      );
    }
    const content = m.content;
    const last = i === messages.length - 1;
    if (typeof content === 'string') {
      if (content === '' && !(last && m.role === 'assistant')) {
        throw invalidRequest(`messages.${i}: content must be non-empty (only the final assistant message may be empty)`);
      }
      return;
    }
    if (!Array.isArray(content)) throw invalidRequest(`messages.${i}.content: Input should be a string or a list of blocks`);
    if (content.length === 0 && !(last && m.role === 'assistant')) {
      throw invalidRequest(`messages.${i}: content must be non-empty (only the final assistant message may be empty)`);
    }
    let seenOther = false;
    content.forEach((block: unknown, j) => {
      const path = `messages.${i}.content.${j}`;
      check(contentBlockSchema, block, path);
      const type = (block as ContentBlock).type;
      if (type === 'tool_result' && m.role !== 'user') throw invalidRequest(`${path}: tool_result blocks may only appear in user messages`);
      if (type === 'tool_use' && m.role !== 'assistant') throw invalidRequest(`${path}: tool_use blocks may only appear in assistant messages`);
      if (type !== 'tool_result') seenOther = true;
      else if (seenOther) {
        throw invalidRequest(`${path}: tool_result blocks must come first in a user message, before any other content`);
      }
    });
  });
}

function checkTopLevel(body: Obj): void {
  if ('system' in body && typeof body.system !== 'string') {
    if (!Array.isArray(body.system)) throw invalidRequest('system: Input should be a string or a list of text blocks');
    body.system.forEach((b: unknown, i) => check(textBlockSchema, b, `system.${i}`));
  }
  if ('tools' in body) {
    if (!Array.isArray(body.tools)) throw invalidRequest('tools: Input should be a valid list');
    const names = new Set<string>();
    body.tools.forEach((t: unknown, i) => {
      check(toolDefinitionSchema, t, `tools.${i}`);
      const name = (t as { name: string }).name;
      if (names.has(name)) throw invalidRequest(`tools: Tool names must be unique (${JSON.stringify(name)} appears twice)`);
      names.add(name);
    });
  }
  if ('tool_choice' in body) {
    const tc = body.tool_choice;
    if (!isObject(tc) || !['auto', 'any', 'tool', 'none'].includes(tc.type as string)) {
      throw invalidRequest("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'");
    }
    if (tc.type === 'tool' && typeof tc.name !== 'string') throw invalidRequest('tool_choice.name: Field required');
  }
  if ('cache_control' in body && body.cache_control !== null) check(cacheControlSchema, body.cache_control, 'cache_control');
  if ('stream' in body && typeof body.stream !== 'boolean') throw invalidRequest('stream: Input should be a valid boolean');
  if ('stop_sequences' in body) {
    const s = body.stop_sequences;
    if (!Array.isArray(s) || !s.every((x) => typeof x === 'string' && x !== '')) {
      throw invalidRequest('stop_sequences: Input should be a list of non-empty strings');
    }
  }
  if ('metadata' in body && !isObject(body.metadata)) throw invalidRequest('metadata: Input should be an object');
  if ('output_config' in body) check(outputConfigSchema, body.output_config, 'output_config');
}

/** `output_config`: the reply's effort (the only part forkflow sends); other keys are refused, as unknown ones are. */
const outputConfigSchema = z.strictObject({ effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).nullish() });

function checkThinking(body: Obj, ctx: ValidationContext): void {
  if (!('thinking' in body)) return;
  check(thinkingConfigSchema, body.thinking, 'thinking');
  const t = body.thinking as { type: string; budget_tokens?: number };
  if (ctx.route === 'messages' && t.type === 'enabled' && (t.budget_tokens as number) >= (body.max_tokens as number)) {
    throw invalidRequest(
      `max_tokens must be greater than thinking.budget_tokens (got max_tokens=${body.max_tokens as number}, ` +
        `budget_tokens=${t.budget_tokens as number}).`,
    );
  }
}

function checkCacheMarkers(req: ValidRequest): void {
  const n = countCacheMarkers(req);
  if (n > MAX_CACHE_MARKERS) {
    throw invalidRequest(`A maximum of ${MAX_CACHE_MARKERS} blocks with cache_control may be provided. Found ${n}.`);
  }
  const order = ttlOrderViolation(req);
  if (order) {
    throw invalidRequest(
      `cache_control: breakpoint ${order.index + 1} has ttl '${order.ttl}' after a breakpoint with ttl '${order.after}'; ` +
        'entries with a longer TTL must come before shorter ones (tools, then system, then messages).',
    );
  }
}

/** Consecutive same-role messages form one turn, as the API merges them. */
interface Turn {
  role: 'user' | 'assistant';
  blocks: { block: ContentBlock; path: string }[];
  lastIndex: number;
}

function turnsOf(messages: MessageParam[]): Turn[] {
  const turns: Turn[] = [];
  messages.forEach((m, i) => {
    const blocks = (typeof m.content === 'string' ? [] : m.content).map((block, j) => ({ block, path: `messages.${i}.content.${j}` }));
    const prev = turns[turns.length - 1];
    if (prev && prev.role === m.role) {
      prev.blocks.push(...blocks);
      prev.lastIndex = i;
    } else {
      turns.push({ role: m.role, blocks, lastIndex: i });
    }
  });
  return turns;
}

function checkToolPairing(messages: MessageParam[]): void {
  const turns = turnsOf(messages);
  const idsOf = (turn: Turn | undefined, type: 'tool_use' | 'tool_result'): Set<string> =>
    new Set(
      (turn?.blocks ?? []).flatMap(({ block }) =>
        block.type === type ? [block.type === 'tool_use' ? block.id : (block as { tool_use_id: string }).tool_use_id] : [],
      ),
    );
  turns.forEach((turn, t) => {
    if (turn.role === 'user') {
      const uses = turns[t - 1]?.role === 'assistant' ? idsOf(turns[t - 1], 'tool_use') : new Set<string>();
      for (const { block, path } of turn.blocks) {
        if (block.type !== 'tool_result' || uses.has(block.tool_use_id)) continue;
        throw invalidRequest(
          `${path}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. ` +
            'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
        );
      }
    } else {
      const next = turns[t + 1];
      const results = next?.role === 'user' ? idsOf(next, 'tool_result') : new Set<string>();
      const missing = [...idsOf(turn, 'tool_use')].filter((id) => !results.has(id));
      if (missing.length > 0) {
        throw invalidRequest(
          `messages.${turn.lastIndex}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ` +
            `${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
        );
      }
    }
  });
}
