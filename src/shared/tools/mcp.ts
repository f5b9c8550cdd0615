/**
 * MCP servers as forkflow reads them: the `mcpServers` configuration (per fork, per agent
 * definition, per client), the names the model sees (`mcp__<server>__<tool>`), how a
 * server's tool annotations become the traits the permission model decides from, and the
 * record of a server's tool list taken once when an agent starts.
 *
 * Pure and workflow-safe: the workflow builds its tool table and the tools it offers from
 * the recorded list, the same bytes on every turn and replay.
 */
import { z } from 'zod';
import type { ToolDefinition } from '../messages-api/anthropic';
import { durationSchema } from '../base/duration';
import { hashJson } from '../base/hash';
import { schemaOnce } from '../base/schema-once';
import { patternCovers } from './routes';

/** Server names: they become part of tool names, so plain, and never with `__` (the separator). */
export const mcpServerNameSchema = schemaOnce('tools/mcp#mcpServerNameSchema', () =>
  z.string().regex(/^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/, 'letters, digits, - and single _').max(48),
);

/** Per-server settings both transports share. */
const common = schemaOnce('tools/mcp#common', () => ({
  /** Each call's limit. Default 60s. */
  timeout: durationSchema.optional(),
  /** Connecting and listing tools at start (a required server is waited for this long, retrying). Default 30s. */
  startTimeout: durationSchema.optional(),
  /** Only these of its tools (names or prefixes ending in `*`, as the server names them). Default: all. */
  include: z.array(z.string().min(1).max(200)).max(1000).optional(),
  /** The most tools it may list (after `include`): a server listing more is refused, not cut. Default 128. */
  maxTools: z.number().int().min(1).max(1000).optional(),
  /**
   * Overrides of what a tool's annotations say, by the server's tool name: the service's own
   * judgement of a server it trusts more (or less) than its hints.
   */
  traits: z.record(z.string(), z.strictObject({ readOnly: z.boolean().optional(), idempotent: z.boolean().optional() })).optional(),
}));

/** A server started as a process of a worker, speaking MCP over its stdin/stdout. */
export const mcpStdioServerSchema = schemaOnce('tools/mcp#mcpStdioServerSchema', () => z.strictObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1).max(4096),
  args: z.array(z.string().max(4096)).max(200).optional(),
  /** Added to a minimal inherited environment (PATH, HOME…); `${VAR}` and `${VAR:-default}` expand on the worker. */
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(32_768)).optional(),
  /** Working directory; default: the agent's workspace root (its worktree, for a worktree fork). */
  cwd: z.string().min(1).max(4096).optional(),
  ...common,
}));

/** A server reached over streamable HTTP (shared by every agent that names it). */
export const mcpHttpServerSchema = schemaOnce('tools/mcp#mcpHttpServerSchema', () => z.strictObject({
  type: z.literal('http'),
  url: z.url({ protocol: /^https?$/ }),
  /** `${VAR}` expands on the worker, so a token need not be written into the fork's input. */
  headers: z.record(z.string().min(1).max(200), z.string().max(32_768)).optional(),
  ...common,
}));

export const mcpServerSchema = schemaOnce('tools/mcp#mcpServerSchema', () => z.union([mcpStdioServerSchema, mcpHttpServerSchema]));
export type McpServerConfig = z.output<typeof mcpServerSchema>;
export type McpStdioServer = z.output<typeof mcpStdioServerSchema>;
export type McpHttpServer = z.output<typeof mcpHttpServerSchema>;

/** `mcpServers`: name → server. */
export const mcpServersSchema = schemaOnce('tools/mcp#mcpServersSchema', () =>
  z.record(mcpServerNameSchema, mcpServerSchema).refine((r) => Object.keys(r).length <= 32, 'at most 32 MCP servers per agent'),
);
export type McpServers = z.output<typeof mcpServersSchema>;

/** `requiredMcpServers`: names (or prefixes ending in `*`) of servers the agent cannot start without. */
export const requiredMcpServersSchema = schemaOnce('tools/mcp#requiredMcpServersSchema', () =>
  z.array(z.string().regex(/^(?:\*|[A-Za-z0-9_-]{1,48}\*?)$/, 'a server name or a prefix ending in *')).max(32),
);

export const MCP_DEFAULTS = { timeout: '60s', startTimeout: '30s', maxTools: 128 } as const;

export function isHttpServer(config: McpServerConfig): config is McpHttpServer {
  return config.type === 'http';
}

/** MCP's own tool annotations (all hints; absent means the spec's default). */
export interface McpAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** One tool of a server's list as recorded at start: what the model is offered, and what it is. */
export interface McpToolRecord {
  /** The name the model sees: `mcp__<server>__<tool>` (characters the provider refuses become `_`). */
  name: string;
  /** The server's own name for it. */
  tool: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: McpAnnotations;
}

/** The record of one server taken when an agent starts (an activity's result: the same on replay). */
export type McpServerRecord =
  | {
      server: string;
      ok: true;
      tools: McpToolRecord[];
      /** Hash of the list as served (a re-created session with another hash changed its tools). */
      listHash: string;
      /** A stdio session: the task queue of the worker that holds it, and its id there. */
      session?: { queue: string; id: string };
      serverInfo?: { name?: string; version?: string };
      /** Tools the server listed that are not offered, and why (over the limit, bad schema, name clash). */
      skipped?: string[];
    }
  | { server: string; ok: false; error: string };

const NAME_OK = /^[A-Za-z0-9_-]+$/;

/** The name the model sees for `tool` of `server` (at most 128 characters, the provider's limit). */
export function mcpToolName(server: string, tool: string): string {
  const clean = tool.replace(/[^A-Za-z0-9_-]/g, '_');
  const name = `mcp__${server}__${clean}`;
  if (name.length <= 128 && NAME_OK.test(name)) return name;
  // Too long: a stable cut with a short hash of the real name, so two long names stay apart.
  return `${name.slice(0, 128 - 9)}_${hashJson(tool).slice(0, 8)}`;
}

/** The server a `mcp__<server>__…` name belongs to, if it is one. */
export function mcpServerOf(name: string): string | undefined {
  const m = /^mcp__([A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*)__/.exec(name);
  return m?.[1];
}

/** Whether `include` (absent: all) selects the server's tool `tool`. */
export function mcpIncludes(include: readonly string[] | undefined, tool: string): boolean {
  return !include || include.some((p) => patternCovers(p, tool));
}

/** The definition offered to the model (stable bytes: built from the record alone). */
export function mcpToolDefinition(record: McpToolRecord): ToolDefinition {
  return {
    name: record.name,
    ...(record.description !== undefined ? { description: record.description } : {}),
    input_schema: { ...record.inputSchema, type: 'object' },
  };
}

/** What a tool is, from its annotations and the server's `traits` overrides. */
export function mcpToolNature(record: McpToolRecord, overrides?: { readOnly?: boolean; idempotent?: boolean }): { readOnly: boolean; idempotent: boolean; destructive: boolean } {
  const a = record.annotations ?? {};
  const readOnly = overrides?.readOnly ?? a.readOnlyHint === true;
  // idempotentHint means something only for a tool that writes (the spec); a read is idempotent.
  const idempotent = overrides?.idempotent ?? (readOnly || a.idempotentHint === true);
  // The spec's default for destructiveHint is true: only an explicit false is additive.
  const destructive = !readOnly && a.destructiveHint !== false;
  return { readOnly, idempotent, destructive };
}

/** Which configured servers a `requiredMcpServers` list names, and which of its entries name none. */
export function requiredServers(required: readonly string[] | undefined, configured: readonly string[]): { servers: string[]; unknown: string[] } {
  const servers = new Set<string>();
  const unknown: string[] = [];
  for (const pattern of required ?? []) {
    const hits = configured.filter((s) => patternCovers(pattern, s));
    if (hits.length === 0) unknown.push(pattern);
    for (const s of hits) servers.add(s);
  }
  return { servers: configured.filter((s) => servers.has(s)), unknown };
}

const mcpToolRecordSchema = schemaOnce('tools/mcp#mcpToolRecordSchema', () => z.object({
  name: z.string(),
  tool: z.string(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  annotations: z.object({ readOnlyHint: z.boolean().optional(), destructiveHint: z.boolean().optional(), idempotentHint: z.boolean().optional(), openWorldHint: z.boolean().optional() }).optional(),
}));

export const mcpServerRecordSchema = schemaOnce('tools/mcp#mcpServerRecordSchema', () => z.union([
  z.object({
    server: z.string(),
    ok: z.literal(true),
    tools: z.array(mcpToolRecordSchema),
    listHash: z.string(),
    session: z.object({ queue: z.string(), id: z.string() }).optional(),
    serverInfo: z.object({ name: z.string().optional(), version: z.string().optional() }).optional(),
    skipped: z.array(z.string()).optional(),
  }),
  z.object({ server: z.string(), ok: z.literal(false), error: z.string() }),
]));

/** What a continuing run of an agent takes over of its MCP servers: the records (sessions stay open) and what was reported. */
export const carriedMcpSchema = schemaOnce('tools/mcp#carriedMcpSchema', () => z.object({
  records: z.array(mcpServerRecordSchema),
  restarts: z.record(z.string(), z.number().int().min(0)),
  listChanged: z.array(z.string()),
}));
export type CarriedMcp = z.output<typeof carriedMcpSchema>;

/** One server in an agent's status. */
export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  state: 'ready' | 'unavailable';
  /** Tools offered from it. */
  tools: number;
  error?: string;
  /** A stdio server: the queue of the worker holding its session. */
  sessionQueue?: string;
  /** Times its session was started again after its worker or process was lost. */
  restarts: number;
  /** It said its tool list changed since the agent started (the list offered stays the recorded one). */
  listChanged?: boolean;
  /** Tools it listed that are not offered, and why. */
  skipped?: string[];
}
