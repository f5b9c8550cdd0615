/**
 * JSON-safe Anthropic Messages API wire types, with zod schemas for validating them at
 * boundaries. Workflow-safe: no SDK import (the SDK is Node-only and its types drift).
 *
 * Rule: validate, don't transform. Callers check `schema.safeParse(x).success` and keep
 * using `x` itself, because a parsed copy may reorder or drop fields, and a cached prompt
 * prefix must reach the provider exactly as the parent sent it.
 */
import { z } from 'zod';
import { MAX_BLOCKS, MAX_SYSTEM_BLOCKS } from '../wire/limits';
import { schemaOnce } from '../base/schema-once';
import type { ContextEdit } from '../context/edits';

export const cacheControlSchema = schemaOnce('messages-api/anthropic#cacheControlSchema', () => z.looseObject({
  type: z.literal('ephemeral'),
  ttl: z.enum(['5m', '1h']).optional(),
}));
export type CacheControl = z.infer<typeof cacheControlSchema>;

/** A string, or a list of at most MAX_BLOCKS blocks (checked after the union, so the message names the limit). */
const blocksWithin = (content: string | unknown[]): boolean => typeof content === 'string' || content.length <= MAX_BLOCKS;

const cacheable = schemaOnce('messages-api/anthropic#cacheable', () => ({ cache_control: cacheControlSchema.nullish() }));

export const textBlockSchema = schemaOnce('messages-api/anthropic#textBlockSchema', () => z.looseObject({ type: z.literal('text'), text: z.string(), ...cacheable }));
export const imageBlockSchema = schemaOnce('messages-api/anthropic#imageBlockSchema', () => z.looseObject({ type: z.literal('image'), source: z.looseObject({ type: z.string() }), ...cacheable }));
export const documentBlockSchema = schemaOnce('messages-api/anthropic#documentBlockSchema', () => z.looseObject({ type: z.literal('document'), source: z.looseObject({ type: z.string() }), ...cacheable }));
export const toolUseBlockSchema = schemaOnce('messages-api/anthropic#toolUseBlockSchema', () => z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.unknown(),
  ...cacheable,
}));
export const toolResultBlockSchema = schemaOnce('messages-api/anthropic#toolResultBlockSchema', () => z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.union([textBlockSchema, imageBlockSchema, documentBlockSchema]))]).refine(blocksWithin, `a tool result holds at most ${MAX_BLOCKS} blocks (MAX_BLOCKS)`).optional(),
  is_error: z.boolean().optional(),
  ...cacheable,
}));
export const thinkingBlockSchema = schemaOnce('messages-api/anthropic#thinkingBlockSchema', () => z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() }));
export const redactedThinkingBlockSchema = schemaOnce('messages-api/anthropic#redactedThinkingBlockSchema', () => z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() }));
/**
 * The provider's compaction block (beta `compact-2026-01-12`): the summary of everything
 * before it, sent back unchanged at the start of later requests. `content` null: a failed
 * compaction the API treats as a no-op.
 */
export const compactionBlockSchema = schemaOnce('messages-api/anthropic#compactionBlockSchema', () => z.looseObject({
  type: z.literal('compaction'),
  content: z.string().nullish(),
  encrypted_content: z.string().nullish(),
  signature: z.string().nullish(),
  ...cacheable,
}));

export const contentBlockSchema = schemaOnce('messages-api/anthropic#contentBlockSchema', () => z.discriminatedUnion('type', [
  textBlockSchema,
  imageBlockSchema,
  documentBlockSchema,
  toolUseBlockSchema,
  toolResultBlockSchema,
  thinkingBlockSchema,
  redactedThinkingBlockSchema,
  compactionBlockSchema,
]));

export const messageParamSchema = schemaOnce('messages-api/anthropic#messageParamSchema', () => z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(contentBlockSchema)]).refine(blocksWithin, `a message holds at most ${MAX_BLOCKS} blocks (MAX_BLOCKS)`),
}));

export const toolDefinitionSchema = schemaOnce('messages-api/anthropic#toolDefinitionSchema', () => z.looseObject({
  name: z.string().min(1).max(128),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal('object') }),
  ...cacheable,
}));

export const systemParamSchema = schemaOnce('messages-api/anthropic#systemParamSchema', () => z.union([z.string(), z.array(textBlockSchema)]).refine((s) => typeof s === 'string' || s.length <= MAX_SYSTEM_BLOCKS, `a system prompt holds at most ${MAX_SYSTEM_BLOCKS} blocks (MAX_SYSTEM_BLOCKS)`));

export const thinkingConfigSchema = schemaOnce('messages-api/anthropic#thinkingConfigSchema', () => z.union([
  z.looseObject({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1024) }),
  z.looseObject({ type: z.literal('disabled') }),
  z.looseObject({ type: z.literal('adaptive') }),
]));

export type TextBlock = z.infer<typeof textBlockSchema>;
export type ImageBlock = z.infer<typeof imageBlockSchema>;
export type DocumentBlock = z.infer<typeof documentBlockSchema>;
export type ToolUseBlock = z.infer<typeof toolUseBlockSchema>;
export type ToolResultBlock = z.infer<typeof toolResultBlockSchema>;
export type ThinkingBlock = z.infer<typeof thinkingBlockSchema>;
export type RedactedThinkingBlock = z.infer<typeof redactedThinkingBlockSchema>;
export type CompactionBlock = z.infer<typeof compactionBlockSchema>;
export type ContentBlock = z.infer<typeof contentBlockSchema>;
export type MessageParam = z.infer<typeof messageParamSchema>;
export type ToolDefinition = z.infer<typeof toolDefinitionSchema>;
export type SystemParam = z.infer<typeof systemParamSchema>;
export type ThinkingConfig = z.infer<typeof thinkingConfigSchema>;

export type StopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded'
  /** Only with the compaction edit's `pause_after_compaction`: the reply is the compaction block alone. */
  | 'compaction';

/** The request body forkflow sends to `POST /v1/messages` (the fields it uses). */
export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: MessageParam[];
  system?: SystemParam;
  tools?: ToolDefinition[];
  tool_choice?: Record<string, unknown>;
  thinking?: ThinkingConfig;
  metadata?: Record<string, unknown>;
  stop_sequences?: string[];
  stream?: boolean;
  /** Provider context management (beta; src/shared/context/edits.ts). */
  context_management?: { edits?: ContextEdit[] };
  /** The provider's MCP connector (a parent snapshot's, carried as it was). */
  mcp_servers?: Record<string, unknown>[];
  /** How much effort the model puts into its reply (an agent's `effort`); absent: the model's default. */
  output_config?: { effort?: 'low' | 'medium' | 'high' | 'xhigh' | 'max' };
}

/** Token usage in forkflow's camel-case form (the public `status` contract). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  /**
   * The part of `cacheCreationInputTokens` written with the 1-hour TTL (priced 2× input, not
   * 1.25×). Present only when not zero, so usage written before it existed reads the same.
   */
  cacheCreation1hInputTokens?: number;
  /**
   * The part of this usage served by the Message Batches API (delivery `batch`), billed at
   * half price (src/shared/providers/pricing.ts). Present only when there is any.
   */
  batch?: BatchUsage;
}

/** Usage without a batch part: the tokens of calls delivered through the Message Batches API. */
export type BatchUsage = Omit<Usage, 'batch'>;

export const ZERO_USAGE: Usage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
});

/** `{ cacheCreation1hInputTokens: n }` when n > 0, else nothing (the field stays absent). */
function hourWrites(n: number): Pick<Usage, 'cacheCreation1hInputTokens'> {
  return n > 0 ? { cacheCreation1hInputTokens: n } : {};
}

/** `{ batch }` when either side has a batch part, else nothing. */
function batchPart(a: Usage, b: Usage, combine: (x: Usage, y: Usage) => Usage): Pick<Usage, 'batch'> {
  if (!a.batch && !b.batch) return {};
  const { batch: _drop, ...sum } = combine(a.batch ?? ZERO_USAGE, b.batch ?? ZERO_USAGE);
  return { batch: sum };
}

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    ...batchPart(a, b, addUsage),
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
    ...hourWrites((a.cacheCreation1hInputTokens ?? 0) + (b.cacheCreation1hInputTokens ?? 0)),
  };
}

/** `a` less `b`, field by field, never below zero. */
export function subtractUsage(a: Usage, b: Usage): Usage {
  return {
    ...batchPart(a, b, subtractUsage),
    inputTokens: Math.max(0, a.inputTokens - b.inputTokens),
    outputTokens: Math.max(0, a.outputTokens - b.outputTokens),
    cacheReadInputTokens: Math.max(0, a.cacheReadInputTokens - b.cacheReadInputTokens),
    cacheCreationInputTokens: Math.max(0, a.cacheCreationInputTokens - b.cacheCreationInputTokens),
    ...hourWrites(Math.max(0, (a.cacheCreation1hInputTokens ?? 0) - (b.cacheCreation1hInputTokens ?? 0))),
  };
}

/** All input tokens of a request: uncached + cache read + cache write. */
export function totalInputTokens(u: Usage): number {
  return u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens;
}

/** Every token of `u`, input of every kind and output (what listings and output files call tokens used). */
export function totalTokens(u: Usage): number {
  return totalInputTokens(u) + u.outputTokens;
}

/** `read / (read + creation + input)`, or 0 when nothing was sent. */
export function cacheHitRatio(u: Usage): number {
  const total = totalInputTokens(u);
  return total === 0 ? 0 : u.cacheReadInputTokens / total;
}

/** Content of a message as a block list (a string is one text block, as the API reads it). */
export function blocksOf(message: MessageParam): ContentBlock[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

export function toolUsesOf(message: MessageParam): ToolUseBlock[] {
  if (message.role !== 'assistant' || typeof message.content === 'string') return [];
  return message.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
}

/** `o` without its `cache_control` member; `o` itself when it has none (no needless copies). */
function omitCacheControl<T extends object>(o: T): T {
  if (!('cache_control' in o)) return o;
  const { cache_control: _dropped, ...rest } = o as T & { cache_control?: unknown };
  return rest as T;
}

/**
 * A block without cache markers, including markers on blocks nested in a `tool_result`'s
 * content (those count toward the API's limit of 4 too). Returns the same object when there
 * is nothing to strip.
 */
export function stripCacheControl(block: ContentBlock): ContentBlock {
  const out = omitCacheControl(block);
  if (out.type !== 'tool_result' || !Array.isArray(out.content) || !out.content.some((c) => 'cache_control' in c)) return out;
  return { ...out, content: out.content.map(omitCacheControl) };
}

/** The text of a message's text blocks, joined by newlines. */
export function textOf(message: MessageParam): string {
  return blocksOf(message)
    .filter((b): b is TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('\n');
}
