/**
 * The input of a sub-agent's workflow, from the parent's state and the model's Agent call:
 * - a fork references the parent's conversation (zero-copy) and inherits model, tools and
 *   filter — so its request shares the parent's cached prefix;
 * - a named or general-purpose agent starts fresh from its definition, with the tools its
 *   definition allows, and sub-agent tools only when nested spawning is on.
 * Pure and deterministic, so a resumed child is rebuilt with the same configuration.
 */
import { agentProvider, allowlistOf, childProvider } from '../../shared/providers/agent-provider';
import type { AgentToolInput } from '../../shared/tree/agent-tools';
import { controlOptions, sendMessageTool, subAgentToolDefinitions } from '../../shared/tree/agent-tools';
import type { AgentDefinition } from '../../shared/agents/agents';
import { agentMcpServers, agentToolsFor, applyToolAccess, permittedAgents } from '../../shared/tools/agent-access';
import { definitionMemory, withMemoryTools } from '../../shared/agents/agent-memory';
import { withPreloadedSkills } from '../../shared/agents/agent-skills';
import { mergeHooks } from '../../shared/tools/hooks';
import { mcpServerOf } from '../../shared/tools/mcp';
import { routeFor } from '../../shared/tools/routes';
import { isSubAgentTool } from '../../shared/tree/agent-tools';
import { childBudget, parseForkBudgetPolicy, remainingTokens } from '../../shared/tree/budget';
import { DEFAULTS, FORK_QUERY_SOURCE } from '../../shared/wire/constants';
import type { ForkInputJson } from '../../shared/wire/fork-input';
import { childPermissionMode } from '../../shared/tools/permissions';
import { confineCwd } from '../../shared/tree/workspace-path';
import type { PrefixRef } from '../../shared/prefix/prefix';
import { DEFAULT_SYSTEM_PROMPT } from '../../shared/agents/prompts';
import { isBuiltinTool, toolDefinition, type BuiltinToolName } from '../../shared/tools/schemas';
import { textOnlyRead } from './media-rules';
import type { ChildRecord, SubAgentsConfig } from '../../shared/tree/tree-input';
import { subtractUsage, ZERO_USAGE } from '../../shared/messages-api/anthropic';
import { CARRIED_STATE_VERSION, type CarriedStateInput, type FoldedUsage } from '../../shared/wire/carried-state';
import { estimateCostUsd } from '../../shared/providers/pricing';
import type { ForkAgent } from './agent';
import { failoverChainOf, failoverForChild } from './failover-routes';
import { cataloguedAsk, uncataloguedModel } from './spawn-model';


export const GENERAL_PURPOSE = 'general-purpose';

export function childIdFor(agent: ForkAgent, input: AgentToolInput, kind: 'fork' | 'spawn'): string {
  return agent.children.nextId(agent.agentId, input.name ?? kind);
}

/** The child's token budget under the parent's budget policy (unparsable → equal). */
function budgetFor(agent: ForkAgent, config: SubAgentsConfig): number {
  const { policy } = parseForkBudgetPolicy(config.budgetPolicy);
  return childBudget({
    policy,
    parentRemaining: remainingTokens(agent.budgetUsage, agent.input.budget),
    perAgentCap: config.perAgentMaxTokens,
    liveSiblings: agent.runningChildren.length,
    defaultBudget: agent.input.budget.maxTokens,
  });
}

function common(agent: ForkAgent, input: AgentToolInput, config: SubAgentsConfig, background: boolean) {
  return {
    prompt: input.prompt,
    forkLabel: input.description,
    parentAgentId: agent.agentId,
    rootAgentId: agent.rootAgentId,
    ...(input.name ? { name: input.name } : {}),
    depth: agent.input.depth + 1,
    mode: background ? ('background' as const) : ('child' as const),
    toolFilter: agent.input.toolFilter,
    ...sandboxFor(agent, input),
    ...(agent.input.requireSandbox ? { requireSandbox: true } : {}),
    ...(agent.input.shellPrograms ? { shellPrograms: agent.input.shellPrograms } : {}),
    ...(agent.input.backgroundTasks === false ? { backgroundTasks: false } : {}),
    ...(agent.input.allowBypassPermissions ? { allowBypassPermissions: true } : {}),
    // The main rules hold for the whole tree (seed 001: global allow rules still apply).
    ...(agent.input.permissionRules ? { permissionRules: agent.input.permissionRules } : {}),
    ...(agent.input.toolAccess ? { toolAccess: agent.input.toolAccess } : {}),
    // Only a parent that answers (subAgents.parentApprovals) has its children's requests sent to it.
    approval: approvalFor(agent, config),
    ...(agent.input.cacheWhileWaiting ? { cacheWhileWaiting: agent.input.cacheWhileWaiting } : {}),
    budget: { maxTokens: budgetFor(agent, config), ...(agent.input.budget.maxToolCalls !== undefined ? { maxToolCalls: agent.input.budget.maxToolCalls } : {}) },
    ...(input.isolation === 'worktree' ? { isolation: 'worktree' as const } : {}),
    // Seed 002's host_mode: it stays for messages after its task, as a teammate does.
    ...(input.host_mode === true ? { idleTimeout: config.teammateIdle } : {}),
    ...(agent.input.modelQueue ? { modelQueue: agent.input.modelQueue } : {}),
    // Nobody waits on a batched agent's sub-agents either.
    ...(agent.input.delivery === 'batch' ? { delivery: 'batch' as const } : {}),
    ...(agent.input.batchFallback ? { batchFallback: agent.input.batchFallback } : {}),
    ...(agent.input.contextManagement ? { contextManagement: agent.input.contextManagement } : {}),
    // Bring your own tools: a child inherits its caller's routes, MCP servers and hooks.
    ...(agent.input.routes ? { routes: agent.input.routes } : {}),
    ...(agent.input.mcpServers ? { mcpServers: agent.input.mcpServers } : {}),
    ...(agent.input.hooks ? { hooks: agent.input.hooks } : {}),
    // A fork (and a skill) runs on its caller's provider; a spawn may name another (spawnChildInput).
    ...(agent.input.provider ? { provider: agent.input.provider } : {}),
    // The tree's tenant: whose home its memory: user agents keep their memory in.
    ...(agent.input.tenant ? { tenant: agent.input.tenant } : {}),
  };
}

/** The caller's approval policy, with its requests going up to the caller when its tree says so. */
function approvalFor(agent: ForkAgent, config: SubAgentsConfig): ForkInputJson['approval'] {
  const { toParent: _own, ...policy } = agent.input.approval;
  return config.parentApprovals ? { ...policy, toParent: true } : policy;
}

/**
 * The child's sandbox settings: its parent's (read paths, network allowance), and for a child started with a `cwd` the
 * parent's workspace as the one its root must stay in (checked again by every tool call,
 * canonically); `.` stands for the worker's own root.
 */
function sandboxFor(agent: ForkAgent, input: AgentToolInput): Pick<ForkInputJson, 'sandbox'> {
  const inherited = agent.input.sandbox;
  const confinedTo = input.cwd !== undefined ? (agent.workspaceRoot ?? '.') : inherited?.confinedTo;
  // The network allowance passes down as it is: a child never reaches more hosts than its parent.
  const network = inherited?.network ? { network: inherited.network } : {};
  const sandbox = { ...(inherited?.readPaths ? { readPaths: inherited.readPaths } : {}), ...network, ...(confinedTo !== undefined ? { confinedTo } : {}) };
  return Object.keys(sandbox).length > 0 ? { sandbox } : {};
}

/** Where the child works: its `cwd` made lexically safe (the refusal came first, agent-launch.ts), else the parent's root. */
function rootFor(agent: ForkAgent, input: AgentToolInput): string | undefined {
  if (input.cwd === undefined) return agent.workspaceRoot;
  const confined = confineCwd(agent.workspaceRoot, input.cwd);
  // Runs recorded before the refusal existed resolved nothing: they keep the cwd as given.
  return confined.ok ? confined.root : input.cwd;
}

/**
 * A named child's own tools from its definition, on top of its caller's: its routes first,
 * its caller's MCP servers that its tool lists allow plus its own, its hooks before its
 * caller's, and only its own required servers.
 */
function definedTools(agent: ForkAgent, definition: AgentDefinition | undefined) {
  if (!definition) return {};
  const routes = [...(definition.routes ?? []), ...(agent.input.routes ?? [])];
  const mcpServers = agentMcpServers(definition, agent.input.mcpServers);
  const hooks = mergeHooks(definition.hooks, agent.input.hooks);
  // Absent fields are left out, not set to undefined: the child's input is compared and hashed as JSON.
  return {
    ...(routes.length ? { routes } : {}),
    ...(mcpServers ? { mcpServers } : {}),
    ...(hooks ? { hooks } : {}),
    ...(definition.requiredMcpServers ? { requiredMcpServers: definition.requiredMcpServers } : {}),
  };
}

/** The caller's routed tools its definitions are known for (its own request's), that a named child may use. */
function routedDefinitions(agent: ForkAgent, names: readonly string[]) {
  const routes = agent.input.routes ?? [];
  if (routes.length === 0) return [];
  return (agent.context?.tools ?? []).filter((t) => names.includes(t.name) && !isBuiltinTool(t.name) && !isSubAgentTool(t.name) && mcpServerOf(t.name) === undefined && routeFor(routes, t.name) !== undefined);
}

/** A child on its parent's model inherits the parent's window override; another model has its own window. */
function windowFor(agent: ForkAgent, model: string): { contextWindow?: number } {
  return agent.input.contextWindow !== undefined && model === agent.summary.model ? { contextWindow: agent.input.contextWindow } : {};
}

function workspaceFor(agent: ForkAgent, input: AgentToolInput, config: SubAgentsConfig) {
  const remote = input.isolation === 'remote' ? config.remoteTaskQueue : undefined;
  const root = rootFor(agent, input);
  const taskQueue = remote ?? agent.input.workspace?.taskQueue;
  return root || taskQueue ? { workspace: { ...(root ? { root } : {}), ...(taskQueue ? { taskQueue } : {}) } } : {};
}

export function forkChildInput(agent: ForkAgent, input: AgentToolInput, config: SubAgentsConfig, ref: PrefixRef, background: boolean): ForkInputJson {
  return {
    ...common(agent, input, config, background),
    parentRef: ref,
    querySource: FORK_QUERY_SOURCE,
    permissionMode: childPermissionMode(agent.input.permissionMode, { kind: 'fork' }, agent.input.allowBypassPermissions === true, agent.defaultAsks),
    maxTurns: config.forkMaxTurns ?? DEFAULTS.forkMaxTurns,
    // A fork runs as its caller does: on its effort too (its colour stays its caller's own).
    ...(agent.input.effort ? { effort: agent.input.effort } : {}),
    ...windowFor(agent, agent.summary.model),
    ...workspaceFor(agent, input, config),
    ...(agent.input.requiredMcpServers ? { requiredMcpServers: agent.input.requiredMcpServers } : {}),
    // It has no provider catalogue: its fallbacks come with it (src/shared/providers/failover.ts).
    ...failoverForChild(agent, failoverChainOf(agent)[0]!),
  };
}

/**
 * The tools a memory agent may be given to keep its memory: its caller's, as the caller may use
 * them itself (its own access policy), within the definition's `allowedTools` and less its
 * `disallowedTools` (only `tools` does not narrow them: the seed turns them on for a memory).
 */
function memoryToolsOffered(agent: ForkAgent, definition: AgentDefinition, parentTools: readonly BuiltinToolName[]): BuiltinToolName[] {
  const usable = new Set(applyToolAccess(agent.input.toolAccess ?? { mode: 'inherit' }, agent.summary.toolNames));
  const narrowed = agentToolsFor({ allowedTools: definition.allowedTools, disallowedTools: definition.disallowedTools }, parentTools);
  return parentTools.filter((t) => usable.has(t) && narrowed.includes(t));
}

export function spawnChildInput(agent: ForkAgent, input: AgentToolInput, config: SubAgentsConfig, definition: AgentDefinition | undefined, background: boolean): ForkInputJson {
  const parentTools = agent.summary.toolNames.filter(isBuiltinTool);
  const memory = definition ? definitionMemory(definition, agent.input.tenant) : undefined;
  const allowed = definition ? agentToolsFor(definition, parentTools).filter(isBuiltinTool) : parentTools;
  // An agent with a memory keeps it with Read, FileWrite and FileEdit, if its caller has them.
  const names = memory ? withMemoryTools(allowed, memoryToolsOffered(agent, definition!, parentTools)) : allowed;
  const nested = config.nested && agent.input.depth + 1 < config.maxDepth;
  // With teams on, a child that cannot start agents still talks to its tree (seed 002: comms both ways).
  // The caller's routed tools its definition allows (an MCP server's come from the child's own sessions).
  const routed = routedDefinitions(agent, definition ? agentToolsFor(definition, agent.summary.toolNames) : agent.summary.toolNames);
  const textRead = textOnlyRead(names);
  const tools = [...names.map((name) => toolDefinition(name, { textRead })), ...routed, ...(nested ? subAgentToolDefinitions({ forkGate: config.forkGate, agents: permittedAgents(config), modelAllowlist: config.modelAllowlist, provider: config.provider, ...(config.providers ? { providers: allowlistOf(config.providers) } : {}), ...(config.teams ? { teams: true } : {}), ...controlOptions(config), ...(agent.input.backgroundTasks === false ? { backgroundTasks: false as const } : {}) }) : config.teams ? [sendMessageTool(true)] : [])];
  // With a provider catalogue the child's provider and model resolve there (checked before the start: agent-launch.ts).
  const parentProvider = agentProvider(agent.input, config);
  // A definition's Claude Code alias resolves in the catalogue, if the tree has one (agent-provider.ts).
  const choice = config.providers ? childProvider({ catalogue: config.providers, parent: { provider: parentProvider, model: agent.summary.model }, fork: false, ...cataloguedAsk(agent, { ...config, providers: config.providers }, input, definition) }) : undefined;
  // Without one, an alias is the built-in table's id on Anthropic (spawn-model.ts).
  const model = choice?.ok ? choice.model : uncataloguedModel(agent, config, input, definition);
  const { mcpServers: _callers, ...base } = common(agent, input, config, background);
  const own = definedTools(agent, definition);
  return {
    ...base,
    // A named child has the caller's servers its definition allows; a general-purpose one all of them.
    ...(definition ? {} : agent.input.mcpServers ? { mcpServers: agent.input.mcpServers } : {}),
    ...own,
    ...(definition?.contextManagement ? { contextManagement: definition.contextManagement } : {}),
    // A definition's delivery wins over the caller's (an interactive caller may batch a background reviewer).
    ...(definition?.delivery ? { delivery: definition.delivery } : {}),
    ...windowFor(agent, model),
    querySource: definition ? `agent:custom:${definition.name}` : `agent:builtin:${GENERAL_PURPOSE}`,
    // A definition's skills are preloaded into its prompt; its initialPrompt opens its first turn.
    // A general-purpose child may be given its own by the call (spawn controls; refused for others: spawn-controls.ts).
    system: definition ? withPreloadedSkills(definition.systemPrompt || DEFAULT_SYSTEM_PROMPT, definition, config.agents) : (input.system_prompt ?? DEFAULT_SYSTEM_PROMPT),
    ...(definition?.initialPrompt ? { prompt: `${definition.initialPrompt}\n\n${input.prompt}` } : {}),
    // Its memory's index joins that prompt when it starts (read on its workspace's worker: isolation.ts).
    ...(memory ? { agentMemory: memory } : {}),
    tools,
    model,
    maxTurns: definition?.maxTurns ?? agent.input.maxTurns,
    // Its definition's effort and colour, never its caller's: a spawned agent is its definition.
    ...(definition?.effort ? { effort: definition.effort } : {}),
    ...(definition?.color ? { color: definition.color } : {}),
    // Set when it differs from the caller's (the caller's own, if named, came with `common`).
    ...(choice?.ok && choice.provider !== parentProvider ? { provider: choice.provider } : {}),
    ...(nested ? { subAgents: choice?.ok ? { ...config, provider: choice.provider } : config } : failoverForChild(agent, { provider: choice?.ok ? choice.provider : parentProvider, model })),
    permissionMode: childPermissionMode(agent.input.permissionMode, { kind: 'agent', definitionMode: definition?.permissionMode }, agent.input.allowBypassPermissions === true, agent.defaultAsks),
    // The call's isolation overrides the definition's (seed 001): a call for remote gets no worktree.
    ...(definition?.isolation === 'worktree' && input.isolation !== 'remote' ? { isolation: 'worktree' as const } : {}),
    ...workspaceFor(agent, input, config),
  };
}

/** The Agent-call shape of a skill run (what its child record keeps, to rebuild it on resume). */
export function skillAgentInput(skill: AgentDefinition, args: string | undefined): AgentToolInput {
  const prompt = [skill.systemPrompt, args?.trim()].filter(Boolean).join('\n\n');
  return { description: `/${skill.name}`, prompt: prompt || `Run the /${skill.name} skill.` };
}

/**
 * A skill runs as a fork of its caller: the caller's conversation, model and tools (so the
 * cache holds), its calls narrowed to the skill's `allowed-tools` within what the caller
 * itself may use (never wider than the caller's own access policy).
 */
export function skillChildInput(agent: ForkAgent, skill: AgentDefinition, input: AgentToolInput, config: SubAgentsConfig, ref: PrefixRef, background: boolean): ForkInputJson {
  const base = forkChildInput(agent, input, config, ref, background);
  if (!skill.allowedTools) return base;
  const usable = applyToolAccess(agent.input.toolAccess ?? { mode: 'inherit' }, agent.summary.toolNames);
  const tools = applyToolAccess({ mode: 'allow_list', tools: skill.allowedTools }, usable);
  return { ...base, toolAccess: { mode: 'allow_list', tools } };
}

/**
 * What a finished child resumed by a message takes over: the budget it was granted, its
 * counters and usage (so its turns and spend go on from where they were), and — kept by the
 * parent, since the new run does not hold its old children — the usage of its subtree below
 * it. `undefined` for an outcome recorded before outcomes carried these (it starts afresh).
 */
export function resumeOf(child: ChildRecord): { budget: number; state: CarriedStateInput; descendants: FoldedUsage } | undefined {
  const o = child.result;
  if (!o || o.turns === undefined || child.budget === undefined) return undefined;
  const ownCost = o.model ? estimateCostUsd(o.model, o.usage) : 0;
  return {
    budget: child.budget,
    state: {
      v: CARRIED_STATE_VERSION,
      turns: o.turns,
      toolUses: o.toolUses,
      usage: o.usage,
      budgetUsage: o.budgetUsage ?? ZERO_USAGE,
      ...(o.text ? { lastText: o.text } : {}),
      startedAt: child.startedAt,
      inbox: [],
      inboxSeq: 0,
      children: [],
      childCounter: o.childCounter ?? 0,
      touched: [],
      maxTurnsReached: false,
      freshBudget: false,
      ...(o.cache ? { cache: o.cache } : {}),
      ...(o.ownFrom !== undefined ? { ownFrom: o.ownFrom } : {}),
    },
    descendants: { usage: subtractUsage(o.treeUsage, o.usage), costUsd: Math.max(0, Math.round((o.treeCostUsd - ownCost) * 1_000_000) / 1_000_000), agents: 0 },
  };
}
