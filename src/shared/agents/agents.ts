/**
 * Named agent definitions as plain data, and the pure rules around them: which model a
 * named agent runs on and the text that lists the agents in the Agent tool's description
 * (what an agent may use and start: src/shared/tools/agent-access.ts).
 *
 * Workflow-safe (no Node builtins, no I/O) and JSON-safe, so definitions can travel in
 * workflow inputs and across continue-as-new. The files are read by `src/activities/agents`.
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';
import { contextManagementSchema, type ContextManagementInput } from '../context/policy';
import { hooksSchema, type Hooks } from '../tools/hooks';
import { mcpServerNameSchema, mcpServerSchema, mcpServersSchema, requiredMcpServersSchema } from '../tools/mcp';
import { routesSchema, type Route } from '../tools/routes';

/**
 * An agent's `mcpServers`: a map of its own servers, or a list whose entries are the name of
 * one of its caller's servers or a one-server map (`- docs: { type: http, url: ... }`).
 */
export const agentMcpServersSchema = schemaOnce('agents/agents#agentMcpServersSchema', () =>
  z.union([mcpServersSchema, z.array(z.union([mcpServerNameSchema, z.record(mcpServerNameSchema, mcpServerSchema)])).max(32)]),
);
export type AgentMcpServers = z.output<typeof agentMcpServersSchema>;

/** Accepted values of the enumerated frontmatter fields. */
export const EFFORT_LEVELS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
export const PERMISSION_MODES = ['default', 'acceptEdits', 'bubble', 'plan', 'bypassPermissions'] as const;
export const MEMORY_SCOPES = ['user', 'project', 'local'] as const;
export const ISOLATION_MODES = ['worktree', 'remote'] as const;
/** How an agent's model calls are delivered: `batch` goes through the Message Batches API (half price, results within 24 h). */
export const DELIVERY_MODES = ['interactive', 'batch'] as const;
/** The colours a UI can show an agent in. */
export const AGENT_COLORS = ['red', 'orange', 'yellow', 'green', 'cyan', 'blue', 'purple', 'pink'] as const;
/** The `model` value that means "the caller's model". */
export const INHERIT_MODEL = 'inherit';

export type EffortLevel = (typeof EFFORT_LEVELS)[number];
export type PermissionMode = (typeof PERMISSION_MODES)[number];
export type MemoryScope = (typeof MEMORY_SCOPES)[number];
export type IsolationMode = (typeof ISOLATION_MODES)[number];
export type AgentColor = (typeof AGENT_COLORS)[number];

/** Agent names are what the model passes as `subagent_type`, so they stay plain. */
export const agentNameSchema = schemaOnce('agents/agents#agentNameSchema', () => z.string().max(64).regex(/^[a-z0-9][a-z0-9-]*$/));
/**
 * A loaded definition's name: plain, or a plugin's agent under its namespace (`review-kit:reviewer`,
 * seed 001). Only the plugin loader makes the second kind (src/activities/agents/plugins.ts): a file's
 * own `name:` is always plain, so no agents directory can claim a plugin's namespace.
 */
export const agentTypeNameSchema = schemaOnce('agents/agents#agentTypeNameSchema', () => z.string().max(129).regex(/^[a-z0-9][a-z0-9-]{0,63}(?::[a-z0-9][a-z0-9-]{0,63})?$/, 'an agent name is lower-case letters, digits and "-", optionally after a plugin\'s name and ":"'));
/**
 * A tool name, `*` (every tool) or a prefix ending in `*` (`mcp__github__*`). Argument
 * patterns such as `Bash(git *)` are not tool names: the loader handles them itself.
 */
export const toolNameSchema = schemaOnce('agents/agents#toolNameSchema', () => z.string().regex(/^(?:\*|[A-Za-z0-9_.:-]{1,128}\*?)$/));
/** A skill name; plugin skills may carry a `plugin:` namespace. */
export const skillNameSchema = schemaOnce('agents/agents#skillNameSchema', () => z.string().max(200).regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/));
/** A provider key as configured (`anthropic`, `bedrock`, `vertex`, a gateway's name); re-exported by model-allowlist.ts. */
export const providerNameSchema = schemaOnce('agents/agents#providerNameSchema', () =>
  z.string().max(64).regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a provider name is letters, digits, _ . - (starting with a letter or digit)'));

/** A model id or alias as the provider spells it (checked against allowlists elsewhere). */
export const modelIdSchema = schemaOnce('agents/agents#modelIdSchema', () => z.string().max(200).regex(/^\S+$/));

/** The longest `description` accepted: it is shown to the model in every Agent tool description. */
export const MAX_DESCRIPTION_CHARS = 8_000;
/** The longest `initialPrompt` accepted: it opens every first turn of the agent. */
export const MAX_INITIAL_PROMPT_CHARS = 16_000;

/** One schema per field, shared by the file loader and by {@link agentDefinitionSchema}. */
export const agentFieldSchemas = schemaOnce('agents/agents#agentFieldSchemas', () => ({
  name: agentNameSchema,
  description: z.string().trim().min(1).max(MAX_DESCRIPTION_CHARS),
  context: z.literal('fork'),
  tools: z.array(toolNameSchema),
  disallowedTools: z.array(toolNameSchema),
  allowedTools: z.array(toolNameSchema),
  model: modelIdSchema,
  provider: providerNameSchema,
  effort: z.enum(EFFORT_LEVELS),
  permissionMode: z.enum(PERMISSION_MODES),
  maxTurns: z.number().int().min(1).max(10_000),
  memory: z.enum(MEMORY_SCOPES),
  background: z.boolean(),
  isolation: z.enum(ISOLATION_MODES),
  delivery: z.enum(DELIVERY_MODES),
  color: z.enum(AGENT_COLORS),
  initialPrompt: z.string().trim().min(1).max(MAX_INITIAL_PROMPT_CHARS),
  skills: z.array(skillNameSchema),
  contextManagement: contextManagementSchema,
  mcpServers: agentMcpServersSchema,
  requiredMcpServers: requiredMcpServersSchema,
  hooks: hooksSchema,
  routes: routesSchema,
} as const));

/**
 * A named agent (or a `context: fork` command) after loading. Absent fields mean "use the
 * default"; see each field.
 */
export interface AgentDefinition {
  /** What the model passes as `subagent_type` (a plugin's agents: `<plugin>:<name>`). */
  name: string;
  /** When to use this agent; shown to the model. */
  description: string;
  /** The markdown body: the agent's system prompt (trimmed; may be empty). */
  systemPrompt: string;
  /** The file it was loaded from, for reports. */
  sourceFile: string;
  /** `fork`: a command/skill that runs as a fork of its caller (parent's model, filtered by `allowedTools`). */
  context?: 'fork';
  /** Allowed tools; absent = the parent's tools. `*` = all, `prefix*` = all with that prefix. */
  tools?: string[];
  /** Tools removed after `tools` / `allowedTools` are applied. */
  disallowedTools?: string[];
  /** From `allowed-tools` (commands/skills): a further allow list. */
  allowedTools?: string[];
  /** A model id or `inherit`; absent = inherit. A call's `model` wins over it. */
  model?: string;
  /**
   * The provider it runs on (a name of its tree's `subAgents.providers`); absent: its caller's.
   * A call's `provider` wins over it; refused at the start and at launch when the tree has no such provider.
   */
  provider?: string;
  /** Its requests carry `output_config: { effort }` (the agent's ForkInput.effort); absent: none is sent. */
  effort?: EffortLevel;
  permissionMode?: PermissionMode;
  maxTurns?: number;
  memory?: MemoryScope;
  /** Always run in the background, even if the call does not ask to. */
  background?: boolean;
  isolation?: IsolationMode;
  /** `batch`: its model calls go through the Message Batches API (for work nobody waits on); absent: its caller's. */
  delivery?: (typeof DELIVERY_MODES)[number];
  /** Its display colour: in its status and start memo (src/shared/agents/agent-color.ts), shown by the web view, `top` and `watch`. */
  color?: AgentColor;
  /** Put before the first user turn. */
  initialPrompt?: string;
  /** Skills to preload, by name. */
  skills?: string[];
  /** How it stays inside its context window (src/shared/context/policy.ts); absent: its caller's policy. */
  contextManagement?: ContextManagementInput;
  /** Its own MCP servers, on top of its caller's (those its tool lists allow). */
  mcpServers?: AgentMcpServers;
  /** Servers it cannot start without (waited for, then the start is refused). */
  requiredMcpServers?: string[];
  /** A service's hooks for it (run before its caller's). */
  hooks?: Hooks;
  /** Tools a service serves on its own queue (src/shared/tools/routes.ts), before its caller's. */
  routes?: Route[];
}

const f = agentFieldSchemas;
/** Validates a definition arriving from outside (a workflow input, a client). */
export const agentDefinitionSchema = schemaOnce('agents/agents#agentDefinitionSchema', () => z.strictObject({
  name: agentTypeNameSchema,
  description: f.description,
  systemPrompt: z.string(),
  sourceFile: z.string(),
  context: f.context.optional(),
  tools: f.tools.optional(),
  disallowedTools: f.disallowedTools.optional(),
  allowedTools: f.allowedTools.optional(),
  model: f.model.optional(),
  provider: f.provider.optional(),
  effort: f.effort.optional(),
  permissionMode: f.permissionMode.optional(),
  maxTurns: f.maxTurns.optional(),
  memory: f.memory.optional(),
  background: f.background.optional(),
  isolation: f.isolation.optional(),
  delivery: f.delivery.optional(),
  color: f.color.optional(),
  initialPrompt: f.initialPrompt.optional(),
  skills: f.skills.optional(),
  contextManagement: f.contextManagement.optional(),
  mcpServers: f.mcpServers.optional(),
  requiredMcpServers: f.requiredMcpServers.optional(),
  hooks: f.hooks.optional(),
  routes: f.routes.optional(),
}) satisfies z.ZodType<AgentDefinition>);

/** What went wrong in one agent file, what became of it, and how to fix it. */
export interface AgentProblem {
  file: string;
  /** The frontmatter field concerned, if any. */
  field?: string;
  /**
   * `skipped`: no agent from this file; `ignored`: the field (or one entry) was left out; `restricted`: tools were withheld to be safe;
   * `unsupported`: a valid field forkflow cannot carry out, left out (src/activities/agents/honoured.ts).
   */
  outcome: 'skipped' | 'ignored' | 'restricted' | 'unsupported';
  /** What was wrong. */
  problem: string;
  /** What to do about it. */
  fix: string;
}

/** What `loadAgentDefinitions` (src/activities/agents) returns; JSON-safe, so an activity can return it. */
export interface AgentLoadResult {
  /** Loaded agents, sorted by the file they came from. */
  agents: AgentDefinition[];
  problems: AgentProblem[];
}

/**
 * The model a named agent runs on: the call's `model`, else the definition's, else the
 * parent's. `inherit` at either level means the parent's model (an explicit `inherit` in
 * the call wins over the definition's model). Not for forks: a fork always uses the
 * parent's model.
 *
 * @example resolveAgentModel({ definition: { model: 'inherit' }, parentModel: 'm1' }) // 'm1'
 */
export function resolveAgentModel(args: {
  callModel?: string;
  definition?: Pick<AgentDefinition, 'model'>;
  parentModel: string;
}): string {
  for (const candidate of [args.callModel, args.definition?.model]) {
    const model = candidate?.trim();
    if (model) return model === INHERIT_MODEL ? args.parentModel : model;
  }
  return args.parentModel;
}

type ToolFields = Pick<AgentDefinition, 'tools' | 'disallowedTools' | 'allowedTools'>;

/** A short human summary of an agent's tool fields: `all`, `none`, `Read, Grep`, `all except Bash`, `Read, Bash (denied: Bash)`. */
export function summarizeAgentTools(definition: ToolFields): string {
  const list = (names: string[]): string => (names.length ? names.join(', ') : 'none');
  let text = definition.tools ? list(definition.tools) : 'all';
  if (definition.allowedTools) {
    text = definition.tools ? `${text} (within allowed-tools: ${list(definition.allowedTools)})` : list(definition.allowedTools);
  }
  const denied = definition.disallowedTools;
  if (denied?.length) text = text === 'all' ? `all except ${denied.join(', ')}` : `${text} (denied: ${denied.join(', ')})`;
  return text;
}

/** Code-unit order: unlike `localeCompare`, the same on every machine and locale. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

/**
 * The part of the Agent tool's description that lists the named agents (`subagent_type`
 * values) and, when given, the models allowed per provider. Sorted by name, whitespace
 * collapsed, duplicates dropped (first wins), so the same definitions always give the same
 * bytes and the prompt cache holds. `context: fork` commands are left out: they are
 * started as commands, not chosen by the model.
 */
export function describeAgentsForTool(
  agents: readonly AgentDefinition[],
  options: { modelAllowlist?: Record<string, string[]> } = {},
): string {
  const seen = new Set<string>();
  const listed = agents.filter((a) => a.context !== 'fork' && !seen.has(a.name) && seen.add(a.name));
  listed.sort((a, b) => compareCodeUnits(a.name, b.name));
  const lines = listed.length
    ? [
        'Named agents (pass the name as subagent_type):',
        ...listed.map((a) => `- ${a.name}: ${oneLine(a.description)} (tools: ${summarizeAgentTools(a)})`),
      ]
    : ['No named agents are configured; leave subagent_type out.'];

  const providers = Object.keys(options.modelAllowlist ?? {})
    .map((provider) => [provider, [...new Set(options.modelAllowlist?.[provider] ?? [])].sort(compareCodeUnits)] as const)
    .filter(([, models]) => models.length > 0)
    .sort(([a], [b]) => compareCodeUnits(a, b));
  if (providers.length) {
    lines.push('', 'Models you may pass as model, by provider:');
    for (const [provider, models] of providers) lines.push(`- ${provider}: ${models.join(', ')}`);
  }
  return lines.join('\n');
}
