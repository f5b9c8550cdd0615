/**
 * What a fork inherits from a parent given inline: the snapshot of its last model request
 * (`ForkInput.parent`, and a snapshot workflow's input). Its own file so that the fork input,
 * the snapshot workflow and the client can share it without importing each other.
 */
import { z } from 'zod';
import {
  messageParamSchema,
  systemParamSchema,
  thinkingConfigSchema,
  toolDefinitionSchema,
  type MessageParam,
  type SystemParam,
  type ThinkingConfig,
  type ToolDefinition,
} from '../messages-api/anthropic';
import { requestHashesSchema, type RequestHashes } from '../prefix/prefix';
import { MAX_MESSAGES, MAX_TOOLS } from './limits';
import { schemaOnce } from '../base/schema-once';

/**
 * A snapshot of the parent's last model request: everything that must be byte-identical
 * for the provider's prompt cache to carry across the fork boundary.
 */
export const cacheSafeParamsSchema = schemaOnce('wire/cache-safe-params#cacheSafeParamsSchema', () => z.looseObject({
  system: systemParamSchema.describe("The parent request's system prompt, as sent."),
  tools: z.array(toolDefinitionSchema).max(MAX_TOOLS, `at most ${MAX_TOOLS} tools (MAX_TOOLS)`).describe("The parent request's tool definitions, as sent."),
  model: z.string().min(1).describe("The parent request's model."),
  thinking: thinkingConfigSchema.optional().describe("The parent request's extended thinking settings."),
  toolChoice: z.looseObject({ type: z.enum(['auto', 'any', 'tool', 'none']) }).optional().describe("The parent request's `tool_choice`."),
  messages: z.array(messageParamSchema).max(MAX_MESSAGES, `at most ${MAX_MESSAGES} messages (MAX_MESSAGES)`).describe("The parent request's messages: the fork's prefix."),
  maxTokens: z.number().int().positive().optional().describe("The parent's `max_tokens`; not part of the cache key."),
  /** Sampling settings older callers may carry: never sent under API 2026-10-21, never hashed. */
  temperature: z.number().optional().describe('Accepted from older callers; never sent, never hashed.'),
  topP: z.number().optional().describe('Accepted from older callers; never sent, never hashed.'),
  topK: z.number().optional().describe('Accepted from older callers; never sent, never hashed.'),
  requestHashes: requestHashesSchema.optional().describe("Component hashes of the parent's actual request (to explain a cache break)."),
  mcpServers: z.array(z.looseObject({})).optional().describe("The parent request's `mcp_servers` (the provider's MCP connector), sent with the fork's requests unchanged."),
}));
export interface CacheSafeParams {
  system: SystemParam;
  tools: ToolDefinition[];
  model: string;
  thinking?: ThinkingConfig;
  toolChoice?: { type: 'auto' | 'any' | 'tool' | 'none'; [k: string]: unknown };
  messages: MessageParam[];
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  requestHashes?: RequestHashes;
  mcpServers?: Record<string, unknown>[];
}
