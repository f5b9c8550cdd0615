/**
 * The cache key of a fork: what must match for a provider prompt-cache hit across the fork
 * boundary. A pure hash of canonical JSON, so it is the same in every process and replay.
 */
import { stripCacheControl, type MessageParam, type SystemParam, type ThinkingConfig, type ToolDefinition } from '../messages-api/anthropic';
import { hashJson } from '../base/hash';

export interface CacheKeyParts {
  system: SystemParam;
  tools: ToolDefinition[];
  model: string;
  thinking?: ThinkingConfig;
  /** The provider's MCP connector: its tools join the prompt (hashed only when present, so other keys are unchanged). */
  mcpServers?: Record<string, unknown>[];
}

/** Tools as the key sees them: name, description and schema (not per-tool cache markers). */
function keyTools(tools: ToolDefinition[]): unknown[] {
  return tools.map((t) => ({ name: t.name, description: t.description ?? null, input_schema: t.input_schema }));
}

/** A string system prompt and one uncached text block are the same prompt to the provider. */
function keySystem(system: SystemParam): unknown {
  if (typeof system === 'string') return [{ type: 'text', text: system }];
  // `?? undefined`, not `?? null`: canonicalJson drops undefined members, so an unmarked
  // block hashes exactly like the string form above (null would make them differ).
  return system.map((b) => ({ type: 'text', text: b.text, cache_control: b.cache_control ?? undefined }));
}

/**
 * Per-component hashes (system with its block cache policies, tools, model, thinking), so a
 * cache break can say which part changed.
 */
export function cacheKeyComponents(p: CacheKeyParts): { system: string; tools: string; model: string; thinking: string } {
  return {
    system: hashJson(keySystem(p.system)),
    tools: hashJson(keyTools(p.tools)),
    model: hashJson(p.model),
    thinking: hashJson(p.thinking ?? null),
  };
}

/**
 * `cacheKeyHash`: over system (+ block cache policies), tools (name, description, schema),
 * model and thinking config; deliberately not over messages, temperature or max tokens.
 */
export function cacheKeyHash(p: CacheKeyParts): string {
  return hashJson({ v: 1, ...cacheKeyComponents(p), ...(p.mcpServers ? { mcpServers: hashJson(p.mcpServers) } : {}) });
}

/** Hash of a message prefix, cache markers ignored (they do not change what is cached). */
export function messagePrefixHash(messages: MessageParam[]): string {
  return hashJson(messages.map(stripMessageCacheControl));
}

function stripMessageCacheControl(m: MessageParam): unknown {
  if (typeof m.content === 'string') return { role: m.role, content: [{ type: 'text', text: m.content }] };
  return { role: m.role, content: m.content.map(stripCacheControl) };
}
