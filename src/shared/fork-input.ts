/**
 * The single argument of `forkWorkflow`, as a zod schema. Exported as JSON Schema
 * (`forkflow schema`) so Python/Go services and the `temporal` CLI can build it.
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
} from './anthropic';
import { DEFAULTS, FORK_QUERY_SOURCE } from './constants';
import { budgetSchema, DEFAULT_MAX_TOKENS } from './budget';
import { cacheWhileWaitingSchema } from './cache-warmth';
import { durationSchema } from './duration';
import { prefixRefSchema, requestHashesSchema, type RequestHashes } from './prefix';
import { AGENT_COLORS, DELIVERY_MODES, EFFORT_LEVELS, PERMISSION_MODES } from './agents';
import { inlineDefinitionProblems } from './agent-honoured';
import { agentMemorySchema } from './agent-memory';
import { continuationSchema, subAgentsSchema, toolAccessInputSchema } from './tree-input';
import type { ProviderCatalogue } from './agent-provider';
import { providerNameSchema } from './model-allowlist';
import { failoverInputSchema } from './failover';
import { forkOriginSchema, forkPointSchema, retryMarkSchema } from './time-travel';
import { treeTokenSchema } from './tree-ledger';
import { INPUT_LIMITS, jsonLimitIssue, MAX_MESSAGES, MAX_PROMPT_CHARS, MAX_TOOLS, tooLong } from './limits';
import { schemaOnce } from './schema-once';
import { undecodableReason } from './undecodable';
import { contextManagementSchema } from './context/policy';
import { EXTENDED_WINDOW } from './context/windows';
import { routesSchema } from './tools/routes';
import { networkAllowanceSchema } from './network';
import { mcpServersSchema, requiredMcpServersSchema } from './tools/mcp';
import { hooksSchema } from './tools/hooks';
import { teamInputSchema } from './team';

/**
 * A snapshot of the parent's last model request: everything that must be byte-identical
 * for the provider's prompt cache to carry across the fork boundary.
 */
export const cacheSafeParamsSchema = schemaOnce('fork-input#cacheSafeParamsSchema', () => z.looseObject({
  system: systemParamSchema,
  tools: z.array(toolDefinitionSchema).max(MAX_TOOLS, `at most ${MAX_TOOLS} tools (MAX_TOOLS)`),
  model: z.string().min(1),
  thinking: thinkingConfigSchema.optional(),
  toolChoice: z.looseObject({ type: z.enum(['auto', 'any', 'tool', 'none']) }).optional(),
  messages: z.array(messageParamSchema).max(MAX_MESSAGES, `at most ${MAX_MESSAGES} messages (MAX_MESSAGES)`),
  /** The parent's `max_tokens`; not part of the cache key. */
  maxTokens: z.number().int().positive().optional(),
  /** Sampling settings older callers may carry: never sent under API 2026-10-21, never hashed. */
  temperature: z.number().optional(),
  topP: z.number().optional(),
  topK: z.number().optional(),
  /** Component hashes of the parent's actual request (to explain a cache break). */
  requestHashes: requestHashesSchema.optional(),
  /** The parent request's `mcp_servers` (the provider's MCP connector), sent with the fork's requests unchanged. */
  mcpServers: z.array(z.looseObject({})).optional(),
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

/** Why an agent's `provider` (and `model`) cannot run under its tree's `subAgents.providers`, or undefined. */
function providerProblem(v: { provider?: string; model?: string; subAgents?: { providers?: ProviderCatalogue } }): string | undefined {
  const catalogue = v.subAgents?.providers;
  if (v.provider === undefined || !catalogue) return undefined;
  const entry = catalogue[v.provider];
  if (!entry) return `provider "${v.provider}" is not one of subAgents.providers (${Object.keys(catalogue).join(', ')})`;
  if (v.model === undefined || entry.models.includes(v.model)) return undefined;
  const alias = entry.aliases[v.model];
  return alias ? `model "${v.model}" is an alias on ${v.provider}: give the model id "${alias}"` : `model "${v.model}" is not allowed on provider "${v.provider}" (allowed: ${entry.models.join(', ')})`;
}

/** Why a named agent's `provider:` cannot run in its tree, or undefined (nothing is started with one that cannot). */
function definitionProviderProblem(a: { name: string; provider?: string }, sub: { provider: string; providers?: ProviderCatalogue }): string | undefined {
  if (a.provider === undefined) return undefined;
  if (sub.providers) return a.provider in sub.providers ? undefined : `agent "${a.name}" names provider "${a.provider}", which is not one of subAgents.providers (${Object.keys(sub.providers).join(', ')})`;
  return a.provider === sub.provider ? undefined : `agent "${a.name}" names provider "${a.provider}", but this tree runs on "${sub.provider}" and offers no other (no subAgents.providers)`;
}

/**
 * Which tools a fork may use, decided per call: `allowAll` (writes inside the workspace),
 * `readOnly` (read tools, and Bash when the shell classifier says the command only reads),
 * or `autoMem` (read tools, read-only Bash, and file writes only inside `memoryDir`).
 */
export const toolFilterSchema = schemaOnce('fork-input#toolFilterSchema', () => z.union([
  z.enum(['allowAll', 'readOnly']),
  z.strictObject({
    kind: z.literal('autoMem'),
    memoryDir: z.string().regex(/^\//, 'memoryDir must be an absolute path'),
  }),
]));
export type ToolFilter = z.infer<typeof toolFilterSchema>;

export const forkInputSchema = schemaOnce('fork-input#forkInputSchema', () => z.strictObject({
  /** The child directive: what this fork is to do. */
  prompt: z.string().min(1, 'prompt (the directive) must not be empty').max(MAX_PROMPT_CHARS, tooLong(MAX_PROMPT_CHARS, 'MAX_PROMPT_CHARS')),
  /** The parent's cache-safe snapshot. Absent on the parent's first turn: the fork then uses its own system prompt and tools. */
  parent: cacheSafeParamsSchema.optional(),
  /** The parent's context by reference instead (zero-copy: see src/shared/prefix.ts). */
  parentRef: prefixRefSchema.optional(),
  /** Fallbacks used only when there is no parent snapshot (a fork never overrides a snapshot's model/tools/thinking). */
  system: systemParamSchema.optional(),
  tools: z.array(toolDefinitionSchema).max(MAX_TOOLS, `at most ${MAX_TOOLS} tools (MAX_TOOLS)`).optional(),
  model: z.string().min(1).optional(),
  thinking: thinkingConfigSchema.optional(),
  maxOutputTokens: z.number().int().min(1).max(128_000).optional(),
  /**
   * How much effort the model puts into each reply, sent as `output_config.effort` (absent: not
   * sent, the model's default). A named sub-agent takes its definition's `effort`; a fork its caller's.
   */
  effort: z.enum(EFFORT_LEVELS).optional(),
  /** The colour it is shown in (web view, `forkflow top`, `watch`, status); a named sub-agent takes its definition's. */
  color: z.enum(AGENT_COLORS).optional(),
  /**
   * Its persistent memory (a named sub-agent's definition `memory: project | local`; see
   * src/shared/agent-memory.ts): the index is read when it starts and appended to its own
   * system prompt. Only for an agent with a system prompt of its own (no parent snapshot).
   */
  agentMemory: agentMemorySchema.optional(),

  forkLabel: z.string().min(1).max(200).default(DEFAULTS.forkLabel),
  querySource: z.string().min(1).max(200).default(FORK_QUERY_SOURCE),
  maxTurns: z.number().int().min(0).max(10_000).default(DEFAULTS.maxTurns),
  /** Token and tool-call limits (tokens weighted as priced: see src/shared/budget.ts). Reaching one ends the fork `budget_exhausted`. */
  budget: budgetSchema.omit({ maxTurns: true }).default({ maxTokens: DEFAULT_MAX_TOKENS }),
  /** Wall-clock limit for the whole fork; on expiry it is cancelled and reports `timeout`. */
  timeout: durationSchema.optional(),
  /** After finishing, wait this long for a message that resumes it (state `idle`). Default 0. */
  idleTimeout: durationSchema.optional(),
  /** Do not serve this fork's transcript (memory forks); it also is not counted as a session. */
  skipTranscript: z.boolean().default(false),
  /** Live stream of text, thinking and tool calls to `handle.stream()` subscribers (default on; `false`: only `done`). */
  stream: z.boolean().optional(),
  /**
   * `batch`: this fork's model calls go through the Message Batches API (half price, results
   * within 24 hours; an errored or expired request falls back to an interactive call). For
   * work nobody waits on. Sub-agents inherit it. Absent: `interactive`.
   */
  delivery: z.enum(DELIVERY_MODES).optional(),
  /**
   * Delivery `batch`: what a call its batch did not answer (an errored or expired request, a
   * batch the provider lost twice) does. `interactive` (default): one interactive call at the
   * full price; `fail`: the fork fails (`BatchNotAnswered`) rather than pay it. Sub-agents inherit it.
   */
  batchFallback: z.enum(['interactive', 'fail']).optional(),
  overrides: z
    .strictObject({
      agentId: z.string().min(1).max(200).optional(),
      /** Re-sent to the model at every turn boundary, after the cached prefix. */
      criticalSystemReminder: z.string().min(1).optional(),
    })
    .optional(),
  toolFilter: toolFilterSchema.default('allowAll'),
  // ── Permission mode and containment (src/shared/permissions.ts decides per call) ──
  /**
   * Seed 001's permission modes. `default` and `acceptEdits`: the filter's tools, writes only
   * inside the workspace, every shell command in the OS sandbox, nothing asked. `plan`:
   * read-only whatever the filter. `bubble`: file writes (and any shell command that could
   * not run sandboxed) wait for a decision (update decideApproval, signal approvalDecision).
   * `bypassPermissions`: nothing asked and Bash outside the sandbox — only with
   * `allowBypassPermissions: true`. Sub-agents: a fork is `bubble`, a named agent takes its
   * definition's mode (default `acceptEdits`), never looser than its parent's.
   */
  permissionMode: z.enum(PERMISSION_MODES).default('default'),
  /** The starting caller's explicit consent to `bypassPermissions` (its own, or a named sub-agent's). Sub-agents inherit it. */
  allowBypassPermissions: z.boolean().optional(),
  /**
   * The OS sandbox every Bash call runs in: `readPaths` are absolute paths the fork may read
   * besides its workspace and the system (never the worker's own state). No network
   * (`network: false`, the former opt-in, is still accepted), unless `network.allowedHosts`
   * names hosts: then HTTP(S) to those only, through the worker's filtering proxy
   * (src/shared/network.ts). Sub-agents inherit both as they are, never more.
   */
  sandbox: z
    .strictObject({
      network: z.union([z.literal(false), networkAllowanceSchema]).optional(),
      readPaths: z.array(z.string().regex(/^\//, 'readPaths must be absolute paths').max(4096)).max(64).optional(),
      /**
       * Set by a parent for a sub-agent started with the Agent tool's `cwd` (and inherited
       * below it): the workspace this agent's root must lie in, checked canonically by every
       * tool call (`.`: the worker's own workspace root).
       */
      confinedTo: z.string().min(1).max(4096).optional(),
    })
    .optional(),
  /** Refuse Bash rather than run it outside the sandbox, even on a worker started to allow that. */
  requireSandbox: z.boolean().optional(),
  // ── end of permission mode and containment ──
  /** `worktree`: the fork works in its own git worktree of the workspace, kept only if it changed something. */
  isolation: z.enum(['worktree']).optional(),
  workspace: z
    .strictObject({
      /** Absolute directory on the tool worker; default: that worker's configured root. */
      root: z.string().min(1).optional(),
      /** Task queue of the worker that owns the workspace (tool activities go there). */
      taskQueue: z.string().min(1).optional(),
    })
    .optional(),
  /**
   * The task queue its model calls go to (sub-agents inherit it): a queue served by model
   * workers (`forkflow worker --model-queue`) whose rate limit the Temporal server enforces
   * across every worker and host, so all agents on it share one provider limit. Unset: the
   * workflow's own queue, with no shared limit (429s are still waited out).
   */
  modelQueue: z.string().min(1).max(200).optional(),
  // ── Bring your own tools (src/shared/tools/): routes, MCP servers, hooks ──
  /**
   * Tools a service serves on task queues of its own (in any language): tool names, exact or
   * `prefix*`, to a queue, with what they are (readOnly, idempotent, timeouts, retry). Each call
   * is one `forkflow.callTool` activity there (src/shared/tools/service-contract.ts). Sub-agents
   * inherit them.
   */
  routes: routesSchema.optional(),
  /** MCP servers of this agent (stdio or streamable HTTP), their tools offered as `mcp__<server>__<tool>`. Sub-agents inherit them. */
  mcpServers: mcpServersSchema.optional(),
  /** Servers (names, or prefixes ending in `*`) the agent cannot start without: waited for, then the start is refused. */
  requiredMcpServers: requiredMcpServersSchema.optional(),
  /** A service's hooks (PreToolUse, PostToolUse, SubagentStart, SubagentStop, Stop), each an activity on its queue. Sub-agents inherit them. */
  hooks: hooksSchema.optional(),
  // ── end of bring your own tools ──
  parentAgentId: z.string().min(1).optional(),
  rootAgentId: z.string().min(1).optional(),
  /**
   * Set on sub-agents of a tree whose root keeps the tree ledger (src/shared/tree-ledger.ts):
   * every model call reserves and charges at the root. A root keeps one when it may start
   * sub-agents; sub-agents started by an older root have none.
   */
  treeLedger: z.boolean().optional(),
  /** Set on sub-agents: their tree's capability (src/shared/tree-ledger.ts), carried on reports and ledger requests. */
  treeToken: treeTokenSchema.optional(),
  /**
   * Set on sub-agents of a tree that lends budget shares (src/shared/tree-shares.ts): the share
   * its root lent with this run's admission. Its model calls charge it locally, and it asks
   * the root for more, by signal, when a call does not fit.
   */
  treeShare: z.strictObject({ tokens: z.number().int().min(0) }).optional(),
  /** A short name in its tree (SendMessage addresses agents by name or id). */
  name: z.string().min(1).max(64).optional(),
  /** A teammate: its team, its lead, plan mode (src/shared/team.ts). */
  team: teamInputSchema.optional(),
  /** How deep in its tree (the root is 0); bounded by subAgents.maxDepth. */
  depth: z.number().int().min(0).max(100).default(0),
  /** Sub-agents this agent may start (Agent, SendMessage, TaskOutput, TaskStop tools). */
  subAgents: subAgentsSchema.optional(),
  /**
   * The provider this agent's model calls go to (a name of the workers' FORKFLOW_PROVIDERS).
   * Absent: the workers' default Anthropic client. Checked against `subAgents.providers` when given.
   */
  provider: providerNameSchema.optional(),
  /**
   * Fallbacks of its provider and model when it has no `subAgents.providers` to read them
   * from (src/shared/failover.ts); a parent sets it for its sub-agents. Ignored with a catalogue.
   */
  failover: failoverInputSchema.optional(),
  /** Which tools it may use on top of the filter: inherit, an allow list or a deny list (object or JSON string). */
  toolAccess: toolAccessInputSchema.optional(),
  approval: z.strictObject({ timeout: durationSchema.default('1h'), onTimeout: z.enum(['deny', 'fail']).default('deny') }).default({ timeout: '1h', onTimeout: 'deny' }),
  /**
   * Keeping the prompt cache warm while it waits (approval, message, children): `off` (5-minute
   * entries), `ttl-1h` (every breakpoint marked with the 1-hour TTL) or `keep-alive` (a minimal
   * request re-reads the prefix shortly before it expires, while the wait lasts). Absent: `off`;
   * sub-agents inherit their parent's. See src/shared/cache-warmth.ts.
   */
  cacheWhileWaiting: cacheWhileWaitingSchema.optional(),
  /**
   * When a run continues as new, besides the server's suggestion (which comes first at the
   * server's defaults: 4 MiB or 4,096 events): once its history passes `historyBytes` or
   * `historyEvents`, or after `turnsPerRun` turns. Checked at turn boundaries; defaults in
   * src/workflows/fork/continuation.ts, well under the server's warnings (10 MiB, 10,240 events).
   */
  continueAsNew: z
    .strictObject({
      historyBytes: z.number().int().min(1).optional(),
      historyEvents: z.number().int().min(1).optional(),
      turnsPerRun: z.number().int().min(1).optional(),
    })
    .optional(),
  // ---- Context window (src/shared/context/) ----
  /**
   * How the agent stays inside its model's context window: `forkflow` (compaction by a model
   * call of its own, the default), `provider` (the provider's compaction edit), `clear-tool-results`
   * (the provider's context editing), `off`, or `{ strategy, by, threshold, keepRecent,
   * keepToolUses, instructions }`. Sub-agents inherit it unless their definition sets one.
   */
  contextManagement: contextManagementSchema.optional(),
  /**
   * The window requests are planned against, in tokens, instead of the model's (200K): less to
   * compact sooner; more than 200,000 asks for the model's 1M window (beta header
   * `context-1m-2025-08-07`), which the model must have.
   */
  contextWindow: z.number().int().min(1_000).max(EXTENDED_WINDOW).optional(),
  // ---- end of context window ----
  /** Internal: a run continuing an agent (continue-as-new, or a finished agent resumed by a message). */
  continuation: continuationSchema.optional(),

  // ---- Time travel (src/shared/time-travel.ts; README "Time travel") ----
  /**
   * Fork from a point of an agent's past, resolved by the workflow: `{ agentId, turn?, runId? }`
   * (turn k: the conversation as it stood when turn k ended; absent: as it stands). For SDKs
   * without forkflow's client; it fills `parentRef` and `origin`. Not with `parent` or `parentRef`.
   */
  from: forkPointSchema.optional(),
  /** Where this fork came from (lineage, shown in status and search attributes): the agent, the run holding the point, the turn. */
  origin: forkOriginSchema.optional(),
  /**
   * A counterfactual fork: `system`, `tools`, `model` and `thinking` override the parent's
   * (each breaks the prompt cache by design; the status names what changed). Without it such
   * an override is refused.
   */
  counterfactual: z.boolean().optional(),
  /**
   * A replay: no directive is added; the fork goes on from the point as the agent itself would
   * have (its first request is the agent's own next request, byte for byte, with any
   * counterfactual change). Needs a point the agent went on from (one ending with a user turn).
   * `prompt` then only names the replay (status, Web UI); it is not sent.
   */
  replay: z.boolean().optional(),
  /** Internal: this run retries the agent from a turn (`forkflow retry`); set with `continuation`. */
  retry: retryMarkSchema.optional(),
  /** How the starter waits for it (traces and the UI show it): `sync`, `forget`, `background` or `child`. */
  mode: z.enum(['sync', 'forget', 'background', 'child']).default('forget'),
}).superRefine((v, ctx) => {
    const problem = providerProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['provider'] });
    (v.subAgents?.agents ?? []).forEach((a, i) => {
      const refused = definitionProviderProblem(a, v.subAgents!);
      if (refused) ctx.addIssue({ code: 'custom', message: refused, path: ['subAgents', 'agents', i, 'provider'] });
      // Checked where a tree starts: a run continuing, or a sub-agent inheriting its tree's agents, keeps what it started with.
      if (v.continuation || v.parentAgentId) return;
      for (const p of inlineDefinitionProblems(a)) ctx.addIssue({ code: 'custom', message: p.message, path: ['subAgents', 'agents', i, p.field] });
    });
  })
  .refine((v) => !v.agentMemory || !(v.parent || v.parentRef || v.from), { message: "agentMemory adds to an agent's own system prompt; a fork keeps its parent's (the prompt cache): start it without parent, parentRef or from", path: ['agentMemory'] })
  .refine((v) => !(v.parent && v.parentRef), { message: 'give either parent (a snapshot) or parentRef (a reference), not both', path: ['parentRef'] })
  .refine((v) => v.permissionMode !== 'bypassPermissions' || v.allowBypassPermissions === true, { message: 'bypassPermissions runs shell commands outside the OS sandbox; confirm it with allowBypassPermissions: true', path: ['permissionMode'] })
  .refine((v) => !(v.from && (v.parent || v.parentRef)), { message: 'give from (a point to resolve) or parent/parentRef, not both', path: ['from'] })
  .refine((v) => !v.replay || v.continuation || v.parentRef || v.from, { message: 'replay needs a point to go on from: from, or parentRef', path: ['replay'] }));

/** The input as callers write it (defaults optional); the parent snapshot typed as the interface. */
export type ForkInputJson = Omit<z.input<typeof forkInputSchema>, 'parent'> & { parent?: CacheSafeParams };
export type ForkInput = Omit<z.output<typeof forkInputSchema>, 'parent'> & { parent?: CacheSafeParams };

/** zod issues as one readable line each: `path: message`. */
export function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(input)'}: ${i.message}`);
}

export type Validated<T> = { ok: true; value: T } | { ok: false; issues: string[] };

/**
 * Validates a fork input. The parent snapshot is returned as the caller's own object, not a
 * zod copy, so its bytes reach the provider unchanged (see src/shared/anthropic.ts).
 */
export function validateForkInput(raw: unknown): Validated<ForkInput> {
  // Before zod and before anything hashes it: an input its worker could not decode, or past
  // the limits (src/shared/limits.ts), is refused whole.
  const prompt = (raw as { prompt?: unknown } | null)?.prompt;
  if (typeof prompt === 'string' && prompt.length > MAX_PROMPT_CHARS) return { ok: false, issues: [`prompt: ${tooLong(MAX_PROMPT_CHARS, 'MAX_PROMPT_CHARS')}`] };
  const refused = undecodableReason(raw) ?? jsonLimitIssue(raw, INPUT_LIMITS, 'the forkWorkflow input');
  if (refused) return { ok: false, issues: [`(input): ${refused}`] };
  const parsed = forkInputSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, issues: describeIssues(parsed.error) };
  const parent = (raw as { parent?: CacheSafeParams }).parent;
  return { ok: true, value: { ...parsed.data, parent } };
}

/** Validates a parent snapshot (`snapshotWorkflow`'s input): the same limits first, then its schema. */
export function validateSnapshot(raw: unknown): Validated<CacheSafeParams> {
  const refused = undecodableReason(raw) ?? jsonLimitIssue(raw, INPUT_LIMITS, 'the snapshot');
  if (refused) return { ok: false, issues: [`(input): ${refused}`] };
  const parsed = cacheSafeParamsSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, issues: describeIssues(parsed.error) };
  return { ok: true, value: raw as CacheSafeParams };
}

/** JSON Schema of the workflow input, for other-language clients. */
export function forkInputJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(forkInputSchema, { io: 'input', target: 'draft-7' });
}
