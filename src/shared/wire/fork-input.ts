/**
 * The single argument of `forkWorkflow`, as a zod schema. Exported as JSON Schema
 * (`forkflow schema`) so Python/Go services and the `temporal` CLI can build it.
 */
import { z } from 'zod';
import { messageParamSchema, systemParamSchema, thinkingConfigSchema, toolDefinitionSchema, type MessageParam } from '../messages-api/anthropic';
import { DEFAULTS, FORK_QUERY_SOURCE } from './constants';
import { budgetSchema, DEFAULT_MAX_TOKENS } from '../tree/budget';
import { cacheWhileWaitingSchema } from '../prefix/cache-warmth';
import { durationSchema } from '../base/duration';
import { prefixRefSchema } from '../prefix/prefix';
import { AGENT_COLORS, DELIVERY_MODES, EFFORT_LEVELS, PERMISSION_MODES } from '../agents/agents';
import { inlineDefinitionProblems } from '../agents/agent-honoured';
import { agentMemorySchema, tenantSchema } from '../agents/agent-memory';
import { continuationSchema, subAgentsSchema, toolAccessInputSchema } from '../tree/tree-input';
import { providerNameSchema } from '../providers/model-allowlist';
import { failoverInputSchema } from '../providers/failover';
import { forkOriginSchema, forkPointSchema, retryMarkSchema } from '../prefix/time-travel';
import { treeTokenSchema } from '../tree/tree-ledger';
import { MAX_MESSAGES, MAX_PROMPT_CHARS, MAX_TOOLS, tooLong } from './limits';
import { schemaOnce } from '../base/schema-once';
import { cacheSafeParamsSchema, type CacheSafeParams } from './cache-safe-params';
import { definitionProviderProblem, providerProblem } from '../providers/provider-problems';
import { permissionRuleSchema } from '../tools/permission-rules';
import { contextManagementSchema } from '../context/policy';
import { EXTENDED_WINDOW } from '../context/windows';
import { routesSchema } from '../tools/routes';
import { networkAllowanceSchema } from '../tools/network';
import { mcpServersSchema, requiredMcpServersSchema } from '../tools/mcp';
import { hooksSchema } from '../tools/hooks';
import { teamInputSchema } from '../tree/team';
import { SHELL_OPT_IN_PROGRAMS } from './activity-io';

/**
 * Which tools a fork may use, decided per call: `allowAll` (writes inside the workspace),
 * `readOnly` (read tools, and Bash when the shell classifier says the command only reads),
 * or `autoMem` (read tools, read-only Bash, and file writes only inside `memoryDir`).
 */
export const toolFilterSchema = schemaOnce('wire/fork-input#toolFilterSchema', () => z.union([
  z.enum(['allowAll', 'readOnly']),
  z.strictObject({
    kind: z.literal('autoMem'),
    memoryDir: z.string().regex(/^\//, 'memoryDir must be an absolute path'),
  }),
]));
export type ToolFilter = z.infer<typeof toolFilterSchema>;

export const forkInputSchema = schemaOnce('wire/fork-input#forkInputSchema', () => z.strictObject({
  /** The child directive: what this fork is to do. */
  prompt: z.string().min(1, 'prompt (the directive) must not be empty').max(MAX_PROMPT_CHARS, tooLong(MAX_PROMPT_CHARS, 'MAX_PROMPT_CHARS')).describe('The directive: what this fork is to do.'),
  /**
   * Seed 000's `prompt_messages`: the first turn as a list of messages (an earlier exchange,
   * documents, images), for an agent that starts fresh (no parent, not a fork). It opens with
   * them, and `prompt` ends the last user turn (or follows as one). A fork's first turn is its
   * parent's conversation and its directive: refused there by name.
   */
  promptMessages: z
    .array(messageParamSchema)
    .min(1)
    .max(MAX_MESSAGES, `at most ${MAX_MESSAGES} messages (MAX_MESSAGES)`)
    .optional()
    .describe("Seed 000's `prompt_messages`: a fresh agent's first turn as messages (an earlier exchange, documents, images); `prompt` ends the last user turn. Refused for a fork."),
  /** The parent's cache-safe snapshot. Absent on the parent's first turn: the fork then uses its own system prompt and tools. */
  parent: cacheSafeParamsSchema.optional().describe("The parent's cache-safe snapshot (its last request's system, tools, model, thinking, messages), so the fork's prefix is byte for byte the parent's. Absent: the fork's own system prompt and tools (reported as `usedParentSnapshot: false`)."),
  /** The parent's context by reference instead (zero-copy: see src/shared/prefix/prefix.ts). */
  parentRef: prefixRefSchema.optional().describe("The parent's context by reference instead of `parent` (zero-copy: many forks share one recorded copy)."),
  /** Fallbacks used only when there is no parent snapshot (a fork never overrides a snapshot's model/tools/thinking). */
  system: systemParamSchema.optional().describe("Only without `parent`: the fork's own system prompt (a fork never overrides its parent's, unless `counterfactual`)."),
  tools: z.array(toolDefinitionSchema).max(MAX_TOOLS, `at most ${MAX_TOOLS} tools (MAX_TOOLS)`).optional().describe("Only without `parent`: the fork's own tool definitions."),
  model: z.string().min(1).optional().describe('Only without `parent`: the model (default `claude-sonnet-5-5`).'),
  thinking: thinkingConfigSchema.optional().describe('Only without `parent`: extended thinking settings.'),
  maxOutputTokens: z.number().int().min(1).max(128_000).optional().describe("`max_tokens` of each model call (default: the parent snapshot's, else 8192)."),
  /**
   * How much effort the model puts into each reply, sent as `output_config.effort` (absent: not
   * sent, the model's default). A named sub-agent takes its definition's `effort`; a fork its caller's.
   */
  effort: z.enum(EFFORT_LEVELS).optional().describe('How much effort the model puts into each reply (`output_config.effort`); absent: not sent.'),
  /** The colour it is shown in (web view, `forkflow top`, `watch`, status); a named sub-agent takes its definition's. */
  color: z.enum(AGENT_COLORS).optional().describe('The colour it is shown in (web view, `forkflow top`, `watch`, status).'),
  /**
   * Its persistent memory (a named sub-agent's definition `memory: project | local`; see
   * src/shared/agents/agent-memory.ts): the index is read when it starts and appended to its own
   * system prompt. Only for an agent with a system prompt of its own (no parent snapshot).
   */
  agentMemory: agentMemorySchema.optional().describe('Its persistent memory (`{ scope, agent, tenant? }`), read at start and added to its own system prompt; not with a parent snapshot.'),
  /** Whom this tree works for: its `memory: user` agents keep their memory in this tenant's home (src/shared/agents/agent-memory.ts). Sub-agents inherit it. */
  tenant: tenantSchema.optional().describe("Whom this tree works for: its `memory: user` agents keep their memory in this tenant's home under the worker's `FORKFLOW_USER_MEMORY_ROOT`. Sub-agents inherit it."),

  forkLabel: z.string().min(1).max(200).default(DEFAULTS.forkLabel).describe('A label shown in the UI and `forkflow list`.'),
  querySource: z.string().min(1).max(200).default(FORK_QUERY_SOURCE).describe('Where the fork came from, for traces and search attributes.'),
  maxTurns: z.number().int().min(0).max(10_000).default(DEFAULTS.maxTurns).describe('Model calls at most; reaching it completes normally with `maxTurnsReached`. `0` makes no model call.'),
  /** Token and tool-call limits (tokens weighted as priced: see src/shared/tree/budget.ts). Reaching one ends the fork `budget_exhausted`. */
  budget: budgetSchema.omit({ maxTurns: true }).default({ maxTokens: DEFAULT_MAX_TOKENS }).describe('Token and tool-call limits (tokens weighted as priced); reaching one ends the fork `budget_exhausted`.'),
  /** Wall-clock limit for the whole fork; on expiry it is cancelled and reports `timeout`. */
  timeout: durationSchema.optional().describe('Wall-clock limit for the whole fork (ms, or `90s`/`5m`/`1h`); on expiry it ends `timeout`.'),
  /** After finishing, wait this long for a message that resumes it (state `idle`). Default 0. */
  idleTimeout: durationSchema.optional().describe('After finishing, wait this long (state `idle`) for a message that resumes it. Default 0.'),
  /** Do not serve this fork's transcript (memory forks); it also is not counted as a session. */
  skipTranscript: z.boolean().default(false).describe('The `transcript` query refuses (memory forks); not counted as a session.'),
  /** Live stream of text, thinking and tool calls to `handle.stream()` subscribers (default on; `false`: only `done`). */
  stream: z.boolean().optional().describe('Live stream of text, thinking and tool calls to subscribers (default on; `false`: only `done`).'),
  /**
   * `batch`: this fork's model calls go through the Message Batches API (half price, results
   * within 24 hours; an errored or expired request falls back to an interactive call). For
   * work nobody waits on. Sub-agents inherit it. Absent: `interactive`.
   */
  delivery: z.enum(DELIVERY_MODES).optional().describe('`batch`: model calls go through the Message Batches API at half price (results within 24 hours). Sub-agents inherit it. Default `interactive`.'),
  /**
   * Delivery `batch`: what a call its batch did not answer (an errored or expired request, a
   * batch the provider lost twice) does. `interactive` (default): one interactive call at the
   * full price; `fail`: the fork fails (`BatchNotAnswered`) rather than pay it. Sub-agents inherit it.
   */
  batchFallback: z.enum(['interactive', 'fail']).optional().describe('Delivery `batch`: a call its batch did not answer makes one interactive call (`interactive`, the default) or fails the fork (`fail`, `BatchNotAnswered`). Sub-agents inherit it.'),
  overrides: z
    .strictObject({
      agentId: z.string().min(1).max(200).optional().describe("The fork's agent id (its workflow id); default: a new one."),
      criticalSystemReminder: z.string().min(1).optional().describe('Re-sent to the model at every turn boundary, after the cached prefix.'),
    })
    .optional().describe('Per-fork overrides that keep the cache: its agent id, a reminder re-sent at every turn boundary.'),
  toolFilter: toolFilterSchema.default('allowAll').describe("Which tools it may use: `allowAll` (writes only inside the workspace, Bash in the sandbox), `readOnly`, or `{ kind: 'autoMem', memoryDir }` (writes only inside `memoryDir`)."),
  // ── Permission mode and containment (src/shared/tools/permissions.ts decides per call) ──
  /**
   * Seed 001's permission modes. `acceptEdits` (when none is given): the filter's tools, writes
   * only inside the workspace, every shell command in the OS sandbox, nothing asked. `default`:
   * file writes and service or MCP tools not declared read-only wait for the operator's decision
   * (update decideApproval, signal approvalDecision) unless `permissionRules.allow` names them.
   * `plan`: read-only whatever the filter. `bubble`: asks as `default` does, the request going
   * up (to the parent agent too, with `subAgents.parentApprovals`). `bypassPermissions`: nothing
   * asked and Bash outside the sandbox — only with `allowBypassPermissions: true`. Sub-agents: a
   * fork is `bubble`, a named agent takes its definition's mode (default `acceptEdits`) within
   * its parent's (never looser).
   */
  permissionMode: z.enum(PERMISSION_MODES).default('acceptEdits').describe('`acceptEdits` (nothing asked), `default` (file writes and tools not declared read-only wait for the operator unless `permissionRules.allow` names them), `plan` (read-only), `bubble` (asks as `default` does, the parent agent too with `subAgents.parentApprovals`) or `bypassPermissions` (needs `allowBypassPermissions`).'),
  /**
   * The main rules an asking mode (`default`, `bubble`) follows: `allow` names tools (exact, or
   * `prefix*`) that run without asking. Claude Code's `Tool(specifier)` rules are refused by
   * name: forkflow decides per tool, and the sandbox contains what Bash does. Sub-agents inherit it.
   */
  permissionRules: z
    .strictObject({ allow: z.array(permissionRuleSchema).max(200).describe('Tool names, or prefixes ending in `*`.') })
    .optional()
    .describe("Tools that never ask under `default` or `bubble` (`allow`: names or `prefix*`); Claude Code's `Tool(specifier)` rules are refused. Sub-agents inherit it."),
  /** The starting caller's explicit consent to `bypassPermissions` (its own, or a named sub-agent's). Sub-agents inherit it. */
  allowBypassPermissions: z.boolean().optional().describe("The caller's consent to `bypassPermissions` (required with it; lets named sub-agents use it). Sub-agents inherit it."),
  /**
   * The OS sandbox every Bash call runs in: `readPaths` are absolute paths the fork may read
   * besides its workspace and the system (never the worker's own state). No network
   * (`network: false`, the former opt-in, is still accepted), unless `network.allowedHosts`
   * names hosts: then HTTP(S) to those only, through the worker's filtering proxy
   * (src/shared/tools/network.ts). Sub-agents inherit both as they are, never more.
   */
  sandbox: z
    .strictObject({
      network: z.union([z.literal(false), networkAllowanceSchema]).optional().describe("`false` (no network, the default) or `{ allowedHosts }`: HTTP(S) to those hosts only, through the worker's filtering proxy."),
      readPaths: z.array(z.string().regex(/^\//, 'readPaths must be absolute paths').max(4096)).max(64).optional().describe("Absolute paths it may read besides its workspace and the system: only under the worker's roots, never the worker's state."),
      /**
       * Set by a parent for a sub-agent started with the Agent tool's `cwd` (and inherited
       * below it): the workspace this agent's root must lie in, checked canonically by every
       * tool call (`.`: the worker's own workspace root).
       */
      confinedTo: z.string().min(1).max(4096).optional().describe("Internal: set for a sub-agent started with the Agent tool's `cwd`, the workspace its root must lie in."),
    })
    .optional().describe("The OS sandbox every Bash call runs in: extra read paths, and network (none, or HTTP(S) to named hosts through the worker's proxy). Sub-agents inherit it."),
  /** Refuse Bash rather than run it outside the sandbox, even on a worker started to allow that. */
  requireSandbox: z.boolean().optional().describe('Refuse Bash rather than run it outside the sandbox, even on a worker that allows that.'),
  /**
   * `false`: background tasks are disabled in this tree (seed 001's DISABLE_BACKGROUND_TASKS):
   * the Agent tool offers no `run_in_background`, every sub-agent (a fork too) runs in the
   * foreground until it ends, and a call that can only run in the background (run_in_background,
   * a teammate, a background Bash command) is refused by name. Sub-agents inherit it.
   */
  backgroundTasks: z.boolean().optional().describe('`false`: no background tasks in this tree (seed 001): no `run_in_background`, every sub-agent waited for, and a call that can only run in the background refused by name. Sub-agents inherit it.'),
  /**
   * Programs allowed back into a read-only or memory agent's shell (seed 000 withholds `awk`
   * and `tee`: they can shell out or write): the classifier then allows the shapes it validates
   * (awk without system, getline or redirects; tee only to /dev/null). It decides where Bash
   * runs outside the OS sandbox; inside it, it only advises. Sub-agents inherit it.
   */
  shellPrograms: z.array(z.enum(SHELL_OPT_IN_PROGRAMS)).max(SHELL_OPT_IN_PROGRAMS.length).optional().describe("Programs allowed back into a read-only or memory agent's shell (`awk`, `tee`; withheld by default as seed 000 does): the classifier then passes only the shapes it validates. Sub-agents inherit it."),
  // ── end of permission mode and containment ──
  /** `worktree`: the fork works in its own git worktree of the workspace, kept only if it changed something. */
  isolation: z.enum(['worktree']).optional().describe('`worktree`: its own git worktree of the workspace, kept (path and branch reported) only if it changed something.'),
  workspace: z
    .strictObject({
      root: z.string().min(1).optional().describe("Absolute directory on the tool worker; default: that worker's configured root."),
      taskQueue: z.string().min(1).optional().describe('Task queue of the worker that owns the workspace (tool activities go there).'),
    })
    .optional().describe("Where its tools run: the workspace root and the task queue of the worker that owns it (workspace affinity). Default: the worker's."),
  /**
   * The task queue its model calls go to (sub-agents inherit it): a queue served by model
   * workers (`forkflow worker --model-queue`) whose rate limit the Temporal server enforces
   * across every worker and host, so all agents on it share one provider limit. Unset: the
   * workflow's own queue, with no shared limit (429s are still waited out).
   */
  modelQueue: z.string().min(1).max(200).optional().describe('The task queue its model calls go to, served by model workers whose rate limit the server keeps for all of them. Sub-agents inherit it.'),
  // ── Bring your own tools (src/shared/tools/): routes, MCP servers, hooks ──
  /**
   * Tools a service serves on task queues of its own (in any language): tool names, exact or
   * `prefix*`, to a queue, with what they are (readOnly, idempotent, timeouts, retry). Each call
   * is one `forkflow.callTool` activity there (src/shared/tools/service-contract.ts). Sub-agents
   * inherit them.
   */
  routes: routesSchema.optional().describe('Tools a service serves on task queues of its own: tool names (exact or `prefix*`) to a queue. Sub-agents inherit them.'),
  /** MCP servers of this agent (stdio or streamable HTTP), their tools offered as `mcp__<server>__<tool>`. Sub-agents inherit them. */
  mcpServers: mcpServersSchema.optional().describe('MCP servers (stdio or streamable HTTP) whose tools it is offered as `mcp__<server>__<tool>`. Sub-agents inherit them.'),
  /** Servers (names, or prefixes ending in `*`) the agent cannot start without: waited for, then the start is refused. */
  requiredMcpServers: requiredMcpServersSchema.optional().describe('Servers (names, or prefixes ending in `*`) it cannot start without: waited for, then the start is refused (`McpServerUnavailable`).'),
  hooks: hooksSchema.optional().describe("A service's hooks (PreToolUse, PostToolUse, SubagentStart, SubagentStop, Stop), each an activity on its queue. Sub-agents inherit them."),
  // ── end of bring your own tools ──
  parentAgentId: z.string().min(1).optional().describe('Internal: set on sub-agents, the agent that started it.'),
  rootAgentId: z.string().min(1).optional().describe("Internal: set on sub-agents, its tree's root."),
  /**
   * Set on sub-agents of a tree whose root keeps the tree ledger (src/shared/tree/tree-ledger.ts):
   * every model call reserves and charges at the root. A root keeps one when it may start
   * sub-agents; sub-agents started by an older root have none.
   */
  treeLedger: z.boolean().optional().describe('Internal: set on sub-agents of a tree whose root keeps the tree ledger.'),
  /** Set on sub-agents: their tree's capability (src/shared/tree/tree-ledger.ts), carried on reports and ledger requests. */
  treeToken: treeTokenSchema.optional().describe("Internal: set on sub-agents, its tree's capability."),
  /**
   * Set on sub-agents of a tree that lends budget shares (src/shared/tree/tree-shares.ts): the share
   * its root lent with this run's admission. Its model calls charge it locally, and it asks
   * the root for more, by signal, when a call does not fit.
   */
  treeShare: z.strictObject({ tokens: z.number().int().min(0) }).optional().describe('Internal: set on sub-agents of a tree that lends budget shares, the share its admission lent.'),
  name: z.string().min(1).max(64).optional().describe('A short name in its tree (SendMessage addresses agents by name or id).'),
  /** A teammate: its team, its lead, plan mode (src/shared/tree/team.ts). */
  team: teamInputSchema.optional().describe('Internal: set on a teammate, its team, its lead and plan mode.'),
  /** How deep in its tree (the root is 0); bounded by subAgents.maxDepth. */
  depth: z.number().int().min(0).max(100).default(0).describe('Internal: how deep in its tree it is (the root is 0); bounded by `subAgents.maxDepth`.'),
  /** Sub-agents this agent may start (Agent, SendMessage, TaskOutput, TaskStop tools). */
  subAgents: subAgentsSchema.optional().describe('Offers the sub-agent tools (Agent, SendMessage, TaskOutput, TaskStop) and says what its tree may start.'),
  /**
   * The provider this agent's model calls go to (a name of the workers' FORKFLOW_PROVIDERS).
   * Absent: the workers' default Anthropic client. Checked against `subAgents.providers` when given.
   */
  provider: providerNameSchema.optional().describe("The provider its model calls go to (a name of the workers' `FORKFLOW_PROVIDERS`). Absent: the workers' default Anthropic client."),
  /**
   * Fallbacks of its provider and model when it has no `subAgents.providers` to read them
   * from (src/shared/providers/failover.ts); a parent sets it for its sub-agents. Ignored with a catalogue.
   */
  failover: failoverInputSchema.optional().describe('Fallback providers and models for an outage of its own, when it has no `subAgents.providers` to read them from.'),
  /** Which tools it may use on top of the filter: inherit, an allow list or a deny list (object or JSON string). */
  toolAccess: toolAccessInputSchema.optional().describe("Which tools it may use on top of the filter: `{ mode: 'inherit' | 'allow_list' | 'deny_list', tools? }`, or that as a JSON string."),
  approval: z
    .strictObject({
      timeout: durationSchema.default('1h').describe('How long an approval request waits for a decision.'),
      onTimeout: z.enum(['deny', 'fail']).default('deny').describe('Then: `deny` the tool call (the model is told), or `fail` the fork (`ApprovalTimedOut`).'),
      /** Set by a parent in a tree with `subAgents.parentApprovals`: under `bubble` this agent's requests reach its parent agent too. */
      toParent: z.boolean().optional().describe("Internal: set by a parent in a tree with `subAgents.parentApprovals`: under `bubble` its requests reach its parent agent too."),
    })
    .default({ timeout: '1h', onTimeout: 'deny' })
    .describe('Approvals of `default` and `bubble` modes: how long a request waits, and what happens then.'),
  /**
   * Keeping the prompt cache warm while it waits (approval, message, children): `off` (5-minute
   * entries), `ttl-1h` (every breakpoint marked with the 1-hour TTL) or `keep-alive` (a minimal
   * request re-reads the prefix shortly before it expires, while the wait lasts). Absent: `off`;
   * sub-agents inherit their parent's. See src/shared/prefix/cache-warmth.ts.
   */
  cacheWhileWaiting: cacheWhileWaitingSchema.optional().describe('Keep the prompt cache warm while it waits: `off` (default), `ttl-1h` or `keep-alive`. Sub-agents inherit it.'),
  /**
   * When a run continues as new, besides the server's suggestion (which comes first at the
   * server's defaults: 4 MiB or 4,096 events): once its history passes `historyBytes` or
   * `historyEvents`, or after `turnsPerRun` turns. Checked at turn boundaries; defaults in
   * src/workflows/fork/continuation.ts, well under the server's warnings (10 MiB, 10,240 events).
   */
  continueAsNew: z
    .strictObject({
      historyBytes: z.number().int().min(1).optional().describe("Continue as new once the run's history passes this many bytes."),
      historyEvents: z.number().int().min(1).optional().describe("Continue as new once the run's history passes this many events."),
      turnsPerRun: z.number().int().min(1).optional().describe('Continue as new after this many turns.'),
    })
    .optional().describe("When a run continues as new, besides the server's suggestion: history bytes or events, or turns per run."),
  // ---- Context window (src/shared/context/) ----
  /**
   * How the agent stays inside its model's context window: `forkflow` (compaction by a model
   * call of its own, the default), `provider` (the provider's compaction edit), `clear-tool-results`
   * (the provider's context editing), `off`, or `{ strategy, by, threshold, keepRecent,
   * keepToolUses, instructions }`. Sub-agents inherit it unless their definition sets one.
   */
  contextManagement: contextManagementSchema.optional().describe('How it stays inside its context window: `forkflow` (default), `provider`, `clear-tool-results`, `off`, or `{ strategy, by?, threshold?, keepRecent?, keepToolUses?, instructions? }`. Sub-agents inherit it unless their definition sets one.'),
  /**
   * The window requests are planned against, in tokens, instead of the model's (200K): less to
   * compact sooner; more than 200,000 asks for the model's 1M window (beta header
   * `context-1m-2025-08-07`), which the model must have.
   */
  contextWindow: z.number().int().min(1_000).max(EXTENDED_WINDOW).optional().describe("The window requests are planned against, in tokens (default the model's, 200K): less compacts sooner; more than 200,000 asks for the model's 1M window."),
  // ---- end of context window ----
  continuation: continuationSchema.optional().describe('Internal: a run continuing an agent (continue-as-new, or a finished agent resumed by a message).'),

  // ---- Time travel (src/shared/prefix/time-travel.ts; README "Time travel") ----
  /**
   * Fork from a point of an agent's past, resolved by the workflow: `{ agentId, turn?, runId? }`
   * (turn k: the conversation as it stood when turn k ended; absent: as it stands). For SDKs
   * without forkflow's client; it fills `parentRef` and `origin`. Not with `parent` or `parentRef`.
   */
  from: forkPointSchema.optional().describe("Fork from the end of a turn of an agent, resolved by the workflow (for SDKs without forkflow's client). Not with `parent` or `parentRef`."),
  /** Where this fork came from (lineage, shown in status and search attributes): the agent, the run holding the point, the turn. */
  origin: forkOriginSchema.optional().describe('Where the fork came from (lineage, shown in status and search attributes): the agent, the run holding the point, the turn.'),
  /**
   * A counterfactual fork: `system`, `tools`, `model` and `thinking` override the parent's
   * (each breaks the prompt cache by design; the status names what changed). Without it such
   * an override is refused.
   */
  counterfactual: z.boolean().optional().describe('May override `model`, `system`, `tools`, `thinking` of its parent (each breaks the cache; status names what changed).'),
  /**
   * A replay: no directive is added; the fork goes on from the point as the agent itself would
   * have (its first request is the agent's own next request, byte for byte, with any
   * counterfactual change). Needs a point the agent went on from (one ending with a user turn).
   * `prompt` then only names the replay (status, Web UI); it is not sent.
   */
  replay: z.boolean().optional().describe('Add no directive: go on from the point as the agent itself would have. `prompt` only names it.'),
  /** Internal: this run retries the agent from a turn (`forkflow retry`); set with `continuation`. */
  retry: retryMarkSchema.optional().describe('Internal: this run retries the agent from a turn (`forkflow retry`).'),
  mode: z.enum(['sync', 'forget', 'background', 'child']).default('forget').describe('How the starter waits for it (traces and the UI show it): `sync`, `forget`, `background` or `child`.'),
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
  .refine((v) => !v.replay || v.continuation || v.parentRef || v.from, { message: 'replay needs a point to go on from: from, or parentRef', path: ['replay'] })
  .refine((v) => !v.promptMessages || !(v.parent || v.parentRef || v.from || v.continuation || v.querySource === FORK_QUERY_SOURCE), { message: "promptMessages open an agent that starts fresh; a fork's first turn is its parent's conversation and its directive (prompt): leave promptMessages out, or start a fresh agent (startAgent)", path: ['promptMessages'] })
  .superRefine((v, ctx) => {
    const problem = v.promptMessages ? promptMessagesProblem(v.promptMessages) : undefined;
    if (problem) ctx.addIssue({ code: 'custom', message: `promptMessages start with a user message and alternate user and assistant: ${problem}`, path: ['promptMessages'] });
  }));

/** Why a list of first-turn messages cannot open a conversation (it starts with a user turn, then alternates), or undefined. */
export function promptMessagesProblem(messages: readonly MessageParam[]): string | undefined {
  if (messages[0]?.role !== 'user') return 'the first message is not a user message';
  const twice = messages.findIndex((m, i) => i > 0 && messages[i - 1]!.role === m.role);
  return twice > 0 ? `messages ${twice - 1} and ${twice} are both ${messages[twice]!.role} messages` : undefined;
}

/** The input as callers write it (defaults optional); the parent snapshot typed as the interface. */
export type ForkInputJson = Omit<z.input<typeof forkInputSchema>, 'parent'> & { parent?: CacheSafeParams };
export type ForkInput = Omit<z.output<typeof forkInputSchema>, 'parent'> & { parent?: CacheSafeParams };
