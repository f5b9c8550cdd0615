/**
 * Cache-safe snapshots: the parent's last Messages API request body turned into the
 * `CacheSafeParams` a fork inherits, and the component hashes that explain a cache break
 * (SEMANTICS "Cache-safe parameters", "Cache break detection").
 *
 * Validate, don't transform (see ../messages-api/anthropic.ts): the snapshot holds the body's own
 * `system`, `tools` and `messages` objects, so every byte the parent sent reaches the fork's
 * request unchanged — including an assistant turn whose `tool_use` blocks have no result
 * yet (pairing is repaired later, at request-build time, identically for parent and fork).
 */
import { z } from 'zod';
import {
  messageParamSchema,
  systemParamSchema,
  thinkingConfigSchema,
  toolDefinitionSchema,
  type SystemParam,
  type ToolDefinition,
} from '../messages-api/anthropic';
import { DEFAULTS } from '../wire/constants';
import type { SnapshotHashes } from './cache-break';
import { cacheKeyComponents, cacheKeyHash, messagePrefixHash } from './cache-key';
import type { CacheSafeParams } from '../wire/cache-safe-params';
import type { RequestContext } from '../wire/messages';
import { plainIssues } from '../base/plain-issues';
import { MAX_CACHE_BREAKPOINTS } from '../messages-api/request';
import { schemaOnce } from '../base/schema-once';

/** The parent request as the API takes it (snake_case). Only the fields forkflow reads are checked. */
const parentRequestSchema = schemaOnce('prefix/snapshot#parentRequestSchema', () => z.looseObject({
  model: z.string().min(1),
  messages: z.array(messageParamSchema),
  system: systemParamSchema.optional(),
  tools: z.array(toolDefinitionSchema).optional(),
  thinking: thinkingConfigSchema.optional(),
  tool_choice: z.looseObject({ type: z.enum(['auto', 'any', 'tool', 'none']) }).optional(),
  max_tokens: z.number().int().positive().optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  top_k: z.number().int().optional(),
  mcp_servers: z.array(z.looseObject({})).optional(),
}));

/**
 * Top-level fields that either become part of the snapshot or do not change the prompt
 * (so dropping them cannot break the cache). Anything else — `container`, a future field —
 * may add to the prompt in ways a fork cannot reproduce.
 */
const KNOWN_FIELDS = new Set([
  'model', 'messages', 'system', 'tools', 'thinking', 'tool_choice', 'max_tokens', 'temperature', 'top_p', 'top_k', 'mcp_servers',
  'metadata', 'stream', 'stop_sequences', 'service_tier',
  // The reply's effort: not part of the prompt (a fork's own is ForkInput.effort).
  'output_config',
  // Automatic caching: forkflow places its own breakpoints (src/shared/messages-api/request.ts).
  'cache_control',
]);

export interface FromParentRequestOptions {
  /**
   * Reject top-level fields forkflow does not carry into a fork and that may change the
   * prompt (e.g. `container`). Default false: such fields are ignored.
   */
  strict?: boolean;
}

/** A parent request that cannot become a snapshot; `issues` has one plain line per problem. */
export class InvalidSnapshotError extends Error {
  override readonly name = 'InvalidSnapshotError';
  constructor(readonly issues: string[]) {
    super(`The parent request cannot be used as a fork snapshot:\n- ${issues.join('\n- ')}\nPass the body of the parent's last POST /v1/messages request, unchanged.`);
  }
}

/** True for an {@link InvalidSnapshotError}, also across bundles (checks the name, not the class). */
export function isInvalidSnapshotError(err: unknown): err is InvalidSnapshotError {
  return err instanceof Error && err.name === 'InvalidSnapshotError' && Array.isArray((err as { issues?: unknown }).issues);
}

function markerCount(items: readonly { cache_control?: unknown }[]): number {
  return items.filter((b) => b.cache_control).length;
}

/** Checks zod cannot express on one field: what the API itself would have refused. */
function semanticIssues(system: SystemParam, tools: ToolDefinition[]): string[] {
  const issues: string[] = [];
  const seen = new Set<string>();
  for (const [i, t] of tools.entries()) {
    if (seen.has(t.name)) issues.push(`tools[${i}].name: "${t.name}" is used by an earlier tool; tool names must be unique`);
    seen.add(t.name);
  }
  // Message markers are replaced at request-build time; these are kept, so they must leave room.
  const kept = (typeof system === 'string' ? 0 : markerCount(system)) + markerCount(tools);
  if (kept > MAX_CACHE_BREAKPOINTS) {
    issues.push(`system, tools: ${kept} blocks carry cache_control; the API accepts at most ${MAX_CACHE_BREAKPOINTS} in a request`);
  }
  return issues;
}

/**
 * Turns the parent's last Messages API request body into the snapshot a fork inherits.
 *
 * The result's `system`, `tools`, `messages`, `thinking` and `toolChoice` are the body's own
 * objects (no copy, no reordering); an absent `system` becomes `''` and absent `tools` `[]`,
 * which the API reads the same way. `temperature`/`top_p`/`top_k` are kept as provenance
 * only: {@link requestContextOf} and `cacheKeyHash` never read them.
 *
 * @throws InvalidSnapshotError when the body is not a usable request.
 * @example
 * const parent = fromParentRequest(lastRequestBody);
 * const handle = await client.start({ prompt: 'Audit the tests', parent }); // ForkflowClient
 */
export function fromParentRequest(body: unknown, opts: FromParentRequestOptions = {}): CacheSafeParams {
  const parsed = parentRequestSchema.safeParse(body);
  if (!parsed.success) throw new InvalidSnapshotError(plainIssues(parsed.error, 'the request'));
  // From here on read the caller's object, never zod's copy (see the header).
  const raw = body as z.infer<typeof parentRequestSchema>;
  const system: SystemParam = raw.system ?? '';
  const tools: ToolDefinition[] = raw.tools ?? [];
  const issues = semanticIssues(system, tools);
  if (opts.strict) {
    const unknown = Object.keys(raw).filter((k) => !KNOWN_FIELDS.has(k));
    if (unknown.length > 0) issues.push(`${unknown.join(', ')}: not carried into a fork, and may change the prompt (strict mode)`);
  }
  if (issues.length > 0) throw new InvalidSnapshotError(issues);

  const snapshot: CacheSafeParams = { system, tools, model: raw.model, messages: raw.messages };
  if (raw.thinking !== undefined) snapshot.thinking = raw.thinking;
  if (raw.tool_choice !== undefined) snapshot.toolChoice = raw.tool_choice;
  if (raw.max_tokens !== undefined) snapshot.maxTokens = raw.max_tokens;
  if (raw.temperature !== undefined) snapshot.temperature = raw.temperature;
  if (raw.top_p !== undefined) snapshot.topP = raw.top_p;
  if (raw.top_k !== undefined) snapshot.topK = raw.top_k;
  // The provider's MCP connector: its tools are part of the parent's prompt, so the fork sends it as it was.
  if (raw.mcp_servers !== undefined) snapshot.mcpServers = raw.mcp_servers;
  return snapshot;
}

/**
 * The request context a snapshot implies: what `buildMessagesRequest` sends besides the
 * messages. Sampling settings are left out on purpose — API 2026-10-21 rejects them.
 */
/**
 * A recorded snapshot's request context: what `snapshotWorkflow` answers and what a worker
 * computes from the same input read from history (src/activities/snapshot-inputs.ts).
 */
export function snapshotContext(snapshot: CacheSafeParams): RequestContext {
  return requestContextOf(snapshot, snapshot.maxTokens ?? DEFAULTS.maxOutputTokens);
}

export function requestContextOf(snapshot: CacheSafeParams, maxTokens: number): RequestContext {
  const { system, tools, model, thinking, toolChoice, mcpServers } = snapshot;
  const ctx: RequestContext = { model, system, tools, maxTokens, cacheKeyHash: cacheKeyHash({ system, tools, model, thinking, ...(mcpServers ? { mcpServers } : {}) }) };
  if (thinking) ctx.thinking = thinking;
  if (toolChoice) ctx.toolChoice = toolChoice;
  if (mcpServers) ctx.mcpServers = mcpServers;
  return ctx;
}

/**
 * Hashes of a snapshot's system (with block cache policies), tools, model, thinking and
 * message prefix. `prefixLength` (default: all messages) limits the prefix: to compare a fork
 * with its parent, hash both with the fork's `inheritedCount`, since a fork whose parent
 * ended on a user turn rewrites that turn.
 */
export function snapshotHashes(snapshot: Pick<CacheSafeParams, 'system' | 'tools' | 'model' | 'thinking' | 'messages'>, prefixLength?: number): SnapshotHashes {
  const messages = prefixLength === undefined ? snapshot.messages : snapshot.messages.slice(0, prefixLength);
  return { ...cacheKeyComponents(snapshot), prefix: messagePrefixHash(messages) };
}
