/**
 * The sub-agent tools an agent's model can call: Agent (spawn or fork), Skill (a
 * `context: fork` command run as a fork), SendMessage, TaskOutput, TaskStop and ListAgents. Unlike the built-in tools they are carried out by the workflow
 * itself (child workflows, signals, cancellation), so no activity runs them. One zod schema
 * per tool yields the JSON Schema the model sees and the parser the workflow runs.
 */
import { z } from 'zod';
import type { ToolDefinition } from '../messages-api/anthropic';
import { compareCodeUnits, describeAgentsForTool, skillNameSchema, type AgentDefinition } from '../agents/agents';
import type { ModelAllowlist } from '../providers/model-allowlist';
import { schemaOnce } from '../base/schema-once';
import { structuredMessageSchema, TEAM_NAME_PATTERN } from './team';
import { accessObject, budgetPolicyArg, childBudgetArg, TOOL_ACCESS_TEXT, toolAccessArg } from './child-controls';
import { ANSWER_APPROVAL, answerApprovalTool } from './parent-approvals';

/** Longest system prompt an Agent call may give its child (characters): a model-chosen input, bounded. */
export const SPAWN_SYSTEM_PROMPT_MAX = 100_000;

export const agentToolInput = schemaOnce('tree/agent-tools#agentToolInput', () => z.strictObject({
  description: z.string().min(1).max(200).describe('A few words for what the sub-agent will do (shown to people).'),
  prompt: z.string().min(1).describe('The task, complete and self-contained: the sub-agent sees nothing else you have not given it (a fork sees your conversation).'),
  subagent_type: z.string().min(1).optional().describe('A named agent to run. Omit it to fork yourself (you share your context with the fork).'),
  model: z.string().min(1).optional().describe('Model for a named agent. A fork always uses your model.'),
  provider: z.string().min(1).max(64).optional().describe('Provider for a named agent (default: yours); its model, an alias or omitted (its first model), must be one listed for it. A fork always runs on your provider.'),
  run_in_background: z.boolean().optional().describe('Return at once; the result arrives later as a task notification.'),
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,40}$/, 'a name is lower-case letters, digits and dashes').optional().describe('A short name to address it with SendMessage.'),
  isolation: z.enum(['worktree', 'remote']).optional().describe('worktree: its own git worktree; remote: run on the remote workers.'),
  cwd: z.string().min(1).optional().describe('Workspace directory for its tools (default: yours).'),
  team_name: z.string().regex(TEAM_NAME_PATTERN, 'a team name is lower-case letters, digits and dashes').optional().describe('With name: start a teammate in this team (you are its lead). It works in the background and talks with its team by SendMessage.'),
  mode: z.enum(['default', 'plan']).optional().describe('A teammate only: plan makes it ask you (by message) before its first change.'),
  budget: childBudgetArg.optional().describe('Limits for this sub-agent: max_tokens, max_turns, max_tool_calls (never more than you have: larger values are lowered).'),
  tool_access: toolAccessArg.optional(),
  budget_policy: budgetPolicyArg.optional(),
  system_prompt: z.string().max(SPAWN_SYSTEM_PROMPT_MAX).refine((v) => v.trim() !== '', 'a system prompt has words in it').optional().describe('A system prompt for a general-purpose sub-agent instead of the default one (a named agent has its own; a fork keeps yours).'),
}));
/** Seed 002's `host_mode`, offered only in trees with `subAgents.hostMode` (elsewhere an unknown key, as it always was). */
export const hostModeArg = schemaOnce('tree/agent-tools#hostModeArg', () => z.boolean().optional().describe('True: it stays alive after its task, in the background, waiting for your messages (SendMessage), until it has been idle for a while or you stop it (TaskStop).'));

/** An Agent call; `host_mode` only where the tree offers it. */
export type AgentToolInput = z.infer<typeof agentToolInput> & { host_mode?: boolean | undefined };

export const sendMessageToolInput = schemaOnce('tree/agent-tools#sendMessageToolInput', () => z.strictObject({
  to: z.string().min(1).describe('The agent: its name (from Agent) or its agent id.'),
  message: z.string().min(1).describe('The message. It arrives at the agent\'s next turn boundary.'),
  summary: z.string().min(1).max(120).describe('A few words for people following along (required).'),
}));
export type SendMessageToolInput = z.infer<typeof sendMessageToolInput>;

/** SendMessage as a team sees it: `*` for the team, and a JSON object message (structured, never broadcast). */
export const teamSendMessageToolInput = schemaOnce('tree/agent-tools#teamSendMessageToolInput', () => z.strictObject({
  to: z.string().min(1).describe('The agent: its name, its agent id, "lead" (your team\'s lead) or "*" (everyone in your team).'),
  message: z.union([z.string().min(1), structuredMessageSchema]).describe('Text, or a JSON object with a "type" (structured: never broadcast). It arrives at the agent\'s next turn boundary.'),
  summary: z.string().min(1).max(120).optional().describe('A few words for people following along (required with a text message).'),
}));

/** A SendMessage call's rule: a text message needs its summary. */
const textHasSummary = (v: { message: unknown; summary?: string | undefined }): boolean => typeof v.message !== 'string' || v.summary !== undefined;
const SUMMARY_NEEDED: { message: string; path: PropertyKey[] } = { message: 'a text message needs a summary (a few words for people following along)', path: ['summary'] };

/** What a SendMessage call may carry (either shape): a text message needs its summary. */
export const sendMessageCallInput = schemaOnce('tree/agent-tools#sendMessageCallInput', () => teamSendMessageToolInput.refine(textHasSummary, SUMMARY_NEEDED));
export type SendMessageCallInput = z.infer<typeof sendMessageCallInput>;

/** SendMessage's `interrupt`, offered with spawn controls (a tree without them reads it as an unknown key, as it always did). */
const interruptArg = schemaOnce('tree/agent-tools#interruptArg', () => z.boolean().optional().describe('True: stop a running sub-agent\'s current turn now (its model call and tool calls; its own background sub-agents go on) and have it act on this text at once. Only for your own sub-agents. Default: the message waits for its turn to end.'));

/** A SendMessage call in a tree with spawn controls: it may also interrupt its receiver's turn. */
export const sendMessageCallWithInterrupt = schemaOnce('tree/agent-tools#sendMessageCallWithInterrupt', () => teamSendMessageToolInput
  .extend({ interrupt: interruptArg })
  .refine(textHasSummary, SUMMARY_NEEDED));
export type SendMessageInterruptingInput = z.infer<typeof sendMessageCallWithInterrupt>;

export const taskOutputToolInput = schemaOnce('tree/agent-tools#taskOutputToolInput', () => z.strictObject({
  task_id: z.string().min(1).describe('The agent id returned by Agent, or the task_id of a background Bash command.'),
  block: z.boolean().optional().describe('Wait for it to finish (default true).'),
  timeout_ms: z.number().int().min(0).max(600_000).optional().describe('How long to wait when blocking (default 30000, at most 600000).'),
}));
export type TaskOutputToolInput = z.infer<typeof taskOutputToolInput>;

export const taskStopToolInput = schemaOnce('tree/agent-tools#taskStopToolInput', () => z.strictObject({
  task_id: z.string().min(1).describe('The agent id of a running sub-agent, or the task_id of a running background Bash command, to stop.'),
}));
export type TaskStopToolInput = z.infer<typeof taskStopToolInput>;

/**
 * What a TaskStop call may carry: `task_id`, or the legacy `shell_id` (seed 001: "也兼容旧的
 * shell_id"), which means the same thing. Not both, and only `task_id` is shown to the model
 * (its tool definition stays `taskStopToolInput`).
 */
export const taskStopCallInput = schemaOnce('tree/agent-tools#taskStopCallInput', () => z
  .strictObject({ task_id: z.string().min(1).optional(), shell_id: z.string().min(1).optional() })
  .refine((v) => (v.task_id === undefined) !== (v.shell_id === undefined), { message: 'give task_id (the agent id of a running sub-agent to stop); shell_id is its legacy name, not to be given with it' })
  .transform((v): TaskStopToolInput => ({ task_id: (v.task_id ?? v.shell_id)! })));

/** Skill names and arguments are the model's choice: bounded and plain before anything looks them up. */
export const skillToolInput = schemaOnce('tree/agent-tools#skillToolInput', () => z.strictObject({
  skill: skillNameSchema.describe('The skill to run, by name (one of those listed).'),
  args: z.string().max(20_000).optional().describe('Arguments for the skill, appended to its instructions.'),
}));
export type SkillToolInput = z.infer<typeof skillToolInput>;

// ListAgents: its answer is built in agent-list.ts.

/** The tool's name: Claude Code's tools are PascalCase verb-noun or noun-verb (`TaskOutput`, `TaskStop`); `TaskList` is its to-do list, not agents. */
export const LIST_AGENTS = 'ListAgents';

export const listAgentsToolInput = schemaOnce('tree/agent-tools#listAgentsToolInput', () => z.strictObject({
  state: z.enum(['running', 'completed', 'failed', 'killed', 'timeout']).optional().describe('Only sub-agents in this state (default: all).'),
}));
export type ListAgentsToolInput = z.infer<typeof listAgentsToolInput>;

/** The definition the model sees (fixed bytes); a teammate's (`team`) lists its team, since it has no sub-agents. */
export function listAgentsTool(opts: { team?: boolean } = {}): ToolDefinition {
  const schema = z.toJSONSchema(listAgentsToolInput, { target: 'draft-7' }) as Record<string, unknown>;
  delete schema.$schema;
  return {
    name: LIST_AGENTS,
    description: opts.team
      ? 'List your team: its lead and every teammate, with the name to address each by in SendMessage, its agent id, whether it is still running, and its turns, tool uses and tokens.'
      : 'List your sub-agents: state, turns, tokens, duration and last activity of each, with counts. A running one shows how long it has run; TaskOutput with block false shows its progress.',
    input_schema: { type: 'object', ...schema },
  };
}

export const TASK_OUTPUT_DEFAULT_TIMEOUT_MS = 30_000;

export const SUB_AGENT_TOOLS = ['Agent', 'Skill', 'SendMessage', 'TaskOutput', 'TaskStop', LIST_AGENTS, ANSWER_APPROVAL] as const;
export type SubAgentToolName = (typeof SUB_AGENT_TOOLS)[number];

export function isSubAgentTool(name: string): name is SubAgentToolName {
  return (SUB_AGENT_TOOLS as readonly string[]).includes(name);
}

function jsonSchema(schema: z.ZodType): ToolDefinition['input_schema'] {
  const out = z.toJSONSchema(schema, { target: 'draft-7' }) as Record<string, unknown>;
  delete out.$schema;
  return { type: 'object', ...out };
}

export interface AgentToolOptions {
  /** Forks when subagent_type is omitted; every spawn then runs in the background. */
  forkGate: boolean;
  agents: AgentDefinition[];
  modelAllowlist?: ModelAllowlist;
  /** The provider this tree runs on: only its allowlist entry is shown (the others are refused). */
  provider?: string;
  /**
   * The tree has a provider catalogue (`subAgents.providers`): the Agent tool takes `provider`
   * and every provider's models are shown. Without it the tool's bytes are what they were.
   */
  providers?: Record<string, string[]>;
  /** Teams are on (`subAgents.teams`): Agent takes team_name and mode, SendMessage `*` and JSON messages. Off: the tools' bytes are what they were. */
  teams?: boolean;
  /** `subAgents.spawnControls`: Agent takes budget, tool_access, budget_policy and system_prompt, SendMessage `interrupt`. Off: their bytes are what they were. */
  spawnControls?: boolean;
  /** `subAgents.listAgents`: the ListAgents tool is offered (last). Off: not offered. */
  listAgents?: boolean;
  /** `subAgents.parentApprovals`: the AnswerApproval tool is offered (after ListAgents). Off: not offered. */
  parentApprovals?: boolean;
  /** The tree disables background tasks (`backgroundTasks: false`): no run_in_background, and every sub-agent is waited for. Absent: the bytes are what they were. */
  backgroundTasks?: false;
  /** `subAgents.hostMode`: Agent takes `host_mode` (last). Off: the bytes are what they were. */
  hostMode?: boolean;
}

/** The Agent call as a tree with spawn controls shows it: tool_access as the object (the parser also takes it as a JSON string). */
const agentShownWithControls = schemaOnce('tree/agent-tools#agentShownWithControls', () => agentToolInput.extend({ tool_access: accessObject.optional().describe(TOOL_ACCESS_TEXT) }));

/** The options a tree's `spawnControls`, `listAgents` and `parentApprovals` settings give (absent when off, so options compare as before). */
export function controlOptions(config: { spawnControls?: boolean | undefined; listAgents?: boolean | undefined; parentApprovals?: boolean | undefined; hostMode?: boolean | undefined }): Pick<AgentToolOptions, 'spawnControls' | 'listAgents' | 'parentApprovals' | 'hostMode'> {
  return { ...(config.spawnControls ? { spawnControls: true } : {}), ...(config.listAgents ? { listAgents: true } : {}), ...(config.parentApprovals ? { parentApprovals: true } : {}), ...(config.hostMode ? { hostMode: true } : {}) };
}

/** The Agent call's fields that only trees with `spawnControls` offer. */
export const SPAWN_CONTROL_FIELDS = { budget: true, tool_access: true, budget_policy: true, system_prompt: true } as const;

/** An Agent call as a tree without spawn controls reads it (the fields above are unknown keys, as they always were). */
export const agentCallWithoutControls = schemaOnce('tree/agent-tools#agentCallWithoutControls', () => agentToolInput.omit(SPAWN_CONTROL_FIELDS));

/** The skills a model may run (`context: fork` definitions), by name, first of each name. */
export function forkSkills(agents: readonly AgentDefinition[]): AgentDefinition[] {
  const seen = new Set<string>();
  return agents.filter((a) => a.context === 'fork' && !seen.has(a.name) && seen.add(a.name)).sort((a, b) => compareCodeUnits(a.name, b.name));
}

function skillTool(skills: AgentDefinition[]): ToolDefinition {
  const list = skills.map((s) => `- ${s.name}: ${s.description.replace(/\s+/g, ' ').trim()}`).join('\n');
  return {
    name: 'Skill',
    description: `Run a skill: a prepared task that runs as a fork of you (it shares your context), under the same limits as Agent; its report comes back like a fork's. Skills:\n${list}`,
    input_schema: jsonSchema(skillToolInput),
  };
}

/** The SendMessage definition (with teams: broadcast and structured messages too). */
export function sendMessageTool(teams: boolean, interrupt = false): ToolDefinition {
  const shape = teams ? teamSendMessageToolInput : sendMessageToolInput;
  const schema = interrupt ? shape.extend({ interrupt: interruptArg }) : shape;
  return teams
    ? { name: 'SendMessage', description: 'Send a message to any agent of this tree by name or id: your team ("*", "lead", a teammate\'s name), your sub-agents, your parent. A finished sub-agent of yours resumes with it.', input_schema: jsonSchema(schema) }
    : { name: 'SendMessage', description: 'Send a message to a sub-agent (or any agent of this tree) by name or id. A finished agent resumes with it.', input_schema: jsonSchema(schema) };
}

/**
 * The sub-agent tool definitions for an agent. Deterministic bytes for the same options
 * (the definitions are part of the cached prompt prefix). With the fork gate on,
 * `run_in_background` is not offered: every spawn runs in the background.
 */
export function subAgentToolDefinitions(opts: AgentToolOptions): ToolDefinition[] {
  const controlled = opts.spawnControls ? agentShownWithControls : agentCallWithoutControls;
  const withTeams = opts.teams ? controlled : controlled.omit({ team_name: true, mode: true });
  const offered = opts.providers ? withTeams : withTeams.omit({ provider: true });
  const foreground = opts.backgroundTasks === false;
  const routed = opts.forkGate || foreground ? offered.omit({ run_in_background: true }) : offered;
  // host_mode needs the background: not offered where background tasks are disabled.
  const agentSchema = opts.hostMode && !foreground ? routed.extend({ host_mode: hostModeArg }) : routed;
  const routing = foreground
    ? opts.forkGate
      ? 'Omit subagent_type to fork yourself: the fork shares your context; you wait for its report, which is the result of this call.'
      : 'Omit subagent_type for a general-purpose agent. You wait for its result (background tasks are disabled here).'
    : opts.forkGate
      ? 'Omit subagent_type to fork yourself: the fork shares your context and works in the background; its report arrives as a task notification.'
      : 'Omit subagent_type for a general-purpose agent. Set run_in_background to get the result later as a task notification.';
  const allowlist = opts.providers ?? (opts.modelAllowlist && opts.provider ? { [opts.provider]: opts.modelAllowlist[opts.provider] ?? [] } : opts.modelAllowlist);
  const available = describeAgentsForTool(opts.agents, allowlist ? { modelAllowlist: allowlist } : {});
  const skills = forkSkills(opts.agents);
  return [
    { name: 'Agent', description: `Start a sub-agent for a self-contained task. ${routing}\n${available}`, input_schema: jsonSchema(agentSchema) },
    // Only offered when there is a skill to run: an agent without skills sees the same bytes as before.
    ...(skills.length ? [skillTool(skills)] : []),
    // With spawn controls SendMessage may interrupt a sub-agent's turn (one more property: those trees' bytes changed once).
    sendMessageTool(opts.teams === true, opts.spawnControls === true),
    { name: 'TaskOutput', description: "Read a sub-agent's result, waiting for it by default (30 s, at most 600 s).", input_schema: jsonSchema(taskOutputToolInput) },
    { name: 'TaskStop', description: 'Stop a running sub-agent (its partial result is kept) or background command.', input_schema: jsonSchema(taskStopToolInput) },
    ...(opts.listAgents ? [listAgentsTool()] : []),
    ...(opts.parentApprovals ? [answerApprovalTool()] : []),
  ];
}
