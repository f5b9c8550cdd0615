/**
 * The parts of a fork's input that concern agent trees: what sub-agents it may start and
 * under which limits, its tool access policy, and the state a continuing run carries
 * (continue-as-new, or a finished agent resumed by a message).
 */
import { z } from 'zod';
import { messageParamSchema, systemParamSchema, thinkingConfigSchema, toolDefinitionSchema, type Usage } from '../messages-api/anthropic';
import type { AgentToolInput } from './agent-tools';
import { parseToolAccessPolicy, toolAccessPolicySchema } from '../tools/agent-access';
import { agentDefinitionSchema, toolNameSchema } from '../agents/agents';
import { durationSchema } from '../base/duration';
import { DEFAULT_PROVIDER, providerNameSchema } from '../providers/model-allowlist';
import { modelAllowlistInputSchema, spawnDefaultsProblems, spawnModelSchema } from './spawn-defaults';
import { prefixRefSchema } from '../prefix/prefix';
import { providerCatalogueSchema } from '../providers/agent-provider';
import type { CarriedCache } from '../prefix/cache-break';
import { schemaOnce } from '../base/schema-once';
import type { TypedCommand } from '../agents/typed-command';

export const subAgentsSchema = schemaOnce('tree/tree-input#subAgentsSchema', () => z.strictObject({
  enabled: z.boolean().default(true).describe('Offer the sub-agent tools.'),
  /** Agent without subagent_type forks (sharing this agent's cache); every spawn then runs in the background. */
  forkGate: z.boolean().default(true).describe("An Agent call without `subagent_type` forks (sharing this agent's cache); every spawn then runs in the background."),
  nested: z.boolean().default(false).describe('Spawned (non-fork) children may start sub-agents of their own.'),
  maxDepth: z.number().int().min(0).max(20).default(3).describe('How deep the tree may grow (the root is 0).'),
  maxChildren: z.number().int().min(1).max(1000).default(5).describe('Children of one agent running at once.'),
  /** Children one agent may start in all (resumes not counted; counted in trees with a ledger). */
  maxSpawns: z.number().int().min(0).max(10_000).default(50).describe('Children one agent may start in all (resumes not counted).'),
  /** Agents of one tree running at once, its root included (exact in trees with a ledger: the root counts). */
  maxTreeRunning: z.number().int().min(1).max(10_000).default(8).describe('Agents of one tree running at once, its root included.'),
  maxTreeSpawns: z.number().int().min(0).max(100_000).default(200).describe("Sub-agents one tree may start in all, resumes not counted (the root's setting holds for the tree)."),
  backgroundAfter: durationSchema.default('2m').describe('A sync child still running after this moves to the background (its result arrives as a notification).'),
  /** Named agents (from `forkflow agents` / loadAgentDefinitions). */
  agents: z.array(agentDefinitionSchema).default([]).describe('Named agents it may start (definitions, e.g. from `forkflow agents` / `loadAgentDefinitions`).'),
  /**
   * Agent types this tree's agents may not start (seed 001's deny rules for agent types): a
   * definition's or skill's name, `general-purpose`, or a `prefix*`. They are left out of the
   * Agent and Skill tools' lists and a call for one is refused by name. Absent: the tools' bytes stay as they were.
   */
  deniedAgentTypes: z.array(toolNameSchema).max(100).optional().describe("Agent types this tree's agents may not start: a definition's or skill's name, `general-purpose`, or a `prefix*`."),
  /**
   * Models children may run on, per provider (model-allowlist.ts): checked for every way a
   * child's model is chosen; the list of `provider` is shown in the Agent tool's description.
   */
  modelAllowlist: modelAllowlistInputSchema.optional().describe("Models children may run on, per provider, or `builtin` (forkflow's list: the Anthropic ids of its alias table); checked for every way a child's model is chosen."),
  provider: providerNameSchema.default(DEFAULT_PROVIDER).describe("The provider this tree's model calls go to: the allowlist entry that applies."),
  /**
   * The providers this tree's agents may run on, with their models and aliases
   * (src/shared/providers/agent-provider.ts; `catalogueOf` builds it from FORKFLOW_PROVIDERS). When set,
   * the Agent tool takes `provider`, and a spawned agent may run on another provider; when
   * absent, every agent runs on the worker's default client, as before.
   */
  providers: providerCatalogueSchema.optional().describe("The providers this tree's agents may run on, with their models and aliases (built from `FORKFLOW_PROVIDERS`); with it, the Agent tool takes `provider`."),
  /**
   * Seed 002's spawn defaults (src/shared/tree/spawn-defaults.ts), absent: seed 001's. `spawnProvider`:
   * where a spawn runs when neither its call nor its definition names a provider (absent: its caller's).
   */
  spawnProvider: providerNameSchema.optional().describe("Seed 002's `default_provider`: where a spawn runs when neither its call nor its definition names a provider (default: its caller's)."),
  /** The model of a spawn whose call and definition name none: an id or alias of its provider, or `first-allowed` (absent: its caller's model on its caller's provider). */
  spawnModel: spawnModelSchema.optional().describe("Seed 002's `default_model`: the model of a spawn whose call and definition name none, an id or alias of its provider, or `first-allowed` (default: its caller's model on its caller's provider)."),
  /** A general-purpose spawn without a call's `system_prompt` gets its caller's system prompt (absent: forkflow's default one). */
  inheritSystemPrompt: z.boolean().optional().describe("Seed 002's `inherit_system_prompt`: a general-purpose spawn without a call's `system_prompt` runs on its caller's system prompt (default: forkflow's own)."),
  /** Operations one agent may have in flight at once, across types: running sub-agents and background shell tasks (absent: each type's own limit only). */
  maxConcurrentOps: z.number().int().min(1).max(10_000).optional().describe("Seed 002's `max_concurrent_ops`: operations one agent may have in flight at once across types (running sub-agents and background shell tasks); default: each type's own limit only."),
  /** How a child's token budget derives from this agent's: equal | remaining | proportional | fixed:N. */
  budgetPolicy: z.unknown().optional().describe("How a child's token budget derives from this agent's: `equal`, `remaining`, `proportional` or `fixed:N`."),
  /** Per-agent cap on any child budget. */
  perAgentMaxTokens: z.number().int().positive().default(200_000).describe("A cap on any child's token budget."),
  /** The turn limit of a fork (an Agent call without subagent_type, or a skill); absent: FORK_MAX_TURNS, seed 003's 200. */
  forkMaxTurns: z.number().int().min(1).max(10_000).optional().describe('The turn limit of a fork (an Agent call without `subagent_type`, or a skill); default 200.'),
  remoteTaskQueue: z.string().min(1).optional().describe('Task queue of the remote workers (Agent isolation `remote`).'),
  uiBaseUrl: z.string().min(1).optional().describe('Base URL of the Temporal Web UI, for links in `remote_launched` results.'),
  /**
   * Teams (src/shared/tree/team.ts): Agent takes `team_name` (with `name`: a teammate) and `mode`,
   * SendMessage takes `*` and JSON object messages. Off by default: the tools' bytes stay as they were.
   */
  teams: z.boolean().default(false).describe('Teams: Agent takes `team_name` (with `name`: a teammate) and `mode`; SendMessage takes `*` and JSON object messages.'),
  /**
   * The Agent call may set its child's `budget`, `tool_access` and `budget_policy`, never beyond
   * the caller's own (src/shared/tree/child-controls.ts). Absent: the Agent tool's bytes stay as they were.
   */
  spawnControls: z.boolean().optional().describe("The Agent call may set its child's `budget`, `tool_access` and `budget_policy`, never beyond the caller's own."),
  /** The ListAgents tool (src/shared/tree/agent-list.ts) is offered. Absent: the tools stay as they were. */
  listAgents: z.boolean().optional().describe('Offer the ListAgents tool.'),
  /**
   * A `bubble` sub-agent's permission requests reach its parent agent too, whose model answers
   * them with the AnswerApproval tool (src/shared/tree/parent-approvals.ts); operators still may.
   * Absent: requests go to operators only, and the tools stay as they were.
   */
  parentApprovals: z.boolean().optional().describe("A `bubble` sub-agent's permission requests reach its parent agent too, which answers them with the AnswerApproval tool; operators still may."),
  /** How long an idle teammate (or a host_mode sub-agent) waits for a message before it ends (its lead's shutdown request ends it sooner). */
  teammateIdle: durationSchema.default('30m').describe('How long an idle teammate (or a `host_mode` sub-agent) waits for a message before it ends.'),
  /**
   * The Agent tool takes `host_mode` (seed 002): a sub-agent that stays alive after its task,
   * waiting for messages, until it has been idle for `teammateIdle` or is stopped. Absent: the
   * Agent tool's bytes stay as they were (and `host_mode` is an unknown key).
   */
  hostMode: z.boolean().optional().describe("The Agent tool takes `host_mode` (seed 002): a sub-agent that stays for messages after its task, until it has been idle for `teammateIdle` or is stopped."),
  keepCompleted: z.number().int().min(1).max(10_000).default(256).describe('Completed children kept on record.'),
}).superRefine((v, ctx) => {
  for (const p of spawnDefaultsProblems(v)) ctx.addIssue({ code: 'custom', message: p.message, path: [p.path] });
}));
export type SubAgentsConfig = z.output<typeof subAgentsSchema>;

/** A tool access policy as an object or as a JSON string (an unparsable string is an input error). */
export const toolAccessInputSchema = schemaOnce('tree/tree-input#toolAccessInputSchema', () => z.union([
  toolAccessPolicySchema,
  z.string().transform((raw, ctx) => {
    const parsed = parseToolAccessPolicy(raw);
    if (parsed.ok) return parsed.policy;
    ctx.addIssue({ code: 'custom', message: parsed.error });
    return z.NEVER;
  }),
]));

export type Priority = 'now' | 'next' | 'later';

/** An inbox entry: delivered at the next turn boundary, `now` before `next` before `later`. */
export interface QueuedMessage {
  seq: number;
  priority: Priority;
  /** `command`: a typed command not run yet (src/shared/agents/typed-command.ts); `text` is the message as typed. */
  kind: 'message' | 'notification' | 'command';
  /** The text as the model will read it. */
  text: string;
  from?: string;
  summary?: string;
  /** For a task notification: the child it is about (TaskOutput drops it once read). */
  taskId?: string;
  /** For a command: the skill and its arguments. */
  command?: TypedCommand;
  receivedAt: string;
}

export type ChildState = 'running' | 'completed' | 'failed' | 'killed' | 'timeout';

/** A sub-agent as its parent keeps it on record (JSON-safe: it crosses continue-as-new). */
export interface ChildRecord {
  agentId: string;
  name?: string;
  kind: 'fork' | 'spawn';
  subagentType?: string;
  description: string;
  /** The Agent call that started it (rebuilds its configuration when it is resumed). */
  agentInput: AgentToolInput;
  toolUseId: string;
  mode: 'sync' | 'background' | 'remote';
  taskQueue?: string;
  state: ChildState;
  /** The parent has seen the outcome (tool result, TaskOutput, TaskStop or a notification). */
  notified: boolean;
  startedAt: string;
  result?: ChildOutcome;
  /** The token budget it was granted (a resume keeps it). */
  budget?: number;
}

export interface ChildOutcome {
  status: Exclude<ChildState, 'running'>;
  text: string;
  error?: string;
  usage: Usage;
  /** The child's own usage plus its subtree's. */
  treeUsage: Usage;
  treeCostUsd: number;
  toolUses: number;
  durationMs: number;
  worktree?: { path: string; branch: string };
  /** Where the child's conversation ends (to resume it). */
  conversation?: z.infer<typeof prefixRefSchema>;
  /** What a resumed run takes over (absent in outcomes recorded before resume kept them). */
  turns?: number;
  budgetUsage?: Usage;
  childCounter?: number;
  model?: string;
  /** Its cache-break watch: a resumed run counts on and judges its first call against the last request. */
  cache?: CarriedCache;
  /** Where its own messages start (after what it inherited as a fork): a resumed run carries it. */
  ownFrom?: number;
}

export interface PendingApproval {
  requestId: string;
  toolUseId: string;
  tool: string;
  /** A short rendering of what the call would do. */
  summary: string;
  requestedAt: string;
  decision?: { outcome: 'approved' | 'denied'; by?: string; reason?: string };
  /** The agent has acted on the decision (an update deciding it returns then). */
  consumed?: boolean;
}

/**
 * The whole conversation of a run and its request context, carried inline: a run that moves
 * to a new build (Worker Versioning) must not need the old build's runs to read its past.
 */
export const heldConversationSchema = schemaOnce('tree/tree-input#heldConversationSchema', () => z.strictObject({
  context: z.strictObject({
    system: systemParamSchema,
    tools: z.array(toolDefinitionSchema),
    model: z.string().min(1),
    thinking: thinkingConfigSchema.optional(),
    toolChoice: z.looseObject({ type: z.enum(['auto', 'any', 'tool', 'none']) }).optional(),
    maxTokens: z.number().int().positive(),
  }),
  messages: z.array(messageParamSchema),
}));
export type HeldConversation = z.infer<typeof heldConversationSchema>;

export const continuationSchema = schemaOnce('tree/tree-input#continuationSchema', () => z.strictObject({
  /** The conversation so far: the previous run's messages, by reference. */
  ref: prefixRefSchema,
  /**
   * The same conversation inline, when the previous run moved to a new build: this run holds
   * it (and its context) itself, and `ref` (whose digest it must match) is never read.
   */
  held: heldConversationSchema.optional(),
  /** What the previous run had counted and queued: checked loosely here, parsed in full by the run (carried-state.ts). */
  state: z.looseObject({ turns: z.number(), toolUses: z.number(), startedAt: z.string() }).optional(),
  /** A message that resumes a finished agent (becomes its next user turn). */
  message: z.strictObject({ message: z.string().min(1), summary: z.string().optional(), from: z.string().optional() }).optional(),
  /** Messages appended verbatim (rare: a continued run's pending user turn). */
  messages: z.array(messageParamSchema).optional(),
}));
