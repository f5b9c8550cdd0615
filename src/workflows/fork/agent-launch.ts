/**
 * Starting a sub-agent, shared by the Agent and Skill tools so both follow the same rules:
 * one list of refusals (recursion, depth, children, names, models against the allowlist,
 * remote workers, the tree's running limit, spawn counts, the root's admission and budget
 * grant), one routing (sync, background, remote) and one
 * way of reporting a child's outcome to the model.
 */
import { isCancellation, log, workflowInfo } from '@temporalio/workflow';
import type { ToolResultBlock } from '../../shared/messages-api/anthropic';
import type { AgentToolInput } from '../../shared/tree/agent-tools';
import { INHERIT_MODEL, type AgentDefinition } from '../../shared/agents/agents';
import { agentTypeDenied, permittedAgents } from '../../shared/tools/agent-access';
import { toMs } from '../../shared/base/duration';
import type { ForkInputJson } from '../../shared/wire/fork-input';
import { modelRefusal, type ModelSource } from '../../shared/providers/model-allowlist';
import { forkRecursionGuard } from '../../shared/prefix/recursion';
import { agentProvider, childProvider } from '../../shared/providers/agent-provider';
import { confineCwd } from '../../shared/tree/workspace-path';
import type { ChildRecord, SubAgentsConfig } from '../../shared/tree/tree-input';
import { tree } from '../activities';
import { prefixRefOf } from '../conversation-queries';
import type { ForkAgent } from './agent';
import { forkChildInput, GENERAL_PURPOSE, skillChildInput, spawnChildInput } from './child-input';
import { aliasRefusal, cataloguedAsk, childModel, claudeCodeBuiltinNote } from './spawn-model';
import { opsRefusal, withInheritedSystem } from './spawn-defaults';
import { userMemoryRefusal } from './user-memory';
import { awaitSyncChild, startChildAgent, type StartedChild } from './children';
import { errorResult, jsonResult } from './tool-results';
import { launchedOutputFields } from './agent-output';
import { launched, outcomeView } from './launch-views';
import { backgroundOff } from './background-switch';
import { admitChild, withdrawChild } from './tree-authority';
import { callTokensFor } from './tree-shares';
import { teammateChildInput } from './team-input';
import { childComms } from '../../shared/tree/team';
import { withControls } from './spawn-controls';
import type { AdmitResult } from '../../shared/tree/tree-ledger-requests';

/** A skill child's record says which skill it runs (`subagentType`), so a resume rebuilds it as one. */
export const SKILL_TYPE_PREFIX = 'skill:';

/** What is being started: a fork, a spawn (with its named definition, if any), or a skill (a fork). */
export type Launch = { kind: 'fork' } | { kind: 'spawn'; definition?: AgentDefinition } | { kind: 'skill'; skill: AgentDefinition };

export { outcomeView } from './launch-views';

const named = (model: string | undefined): string | undefined => {
  const m = model?.trim();
  return m && m !== INHERIT_MODEL ? m : undefined;
};

/** A skill asking for a model other than its caller's: it runs as a fork and cannot. */
function skillModelProblem(agent: ForkAgent, skill: AgentDefinition, wanted: string | undefined): string | undefined {
  if (!wanted || wanted === agent.summary.model) return undefined;
  return `Skill "${skill.name}" asks for model "${wanted}", but a skill runs as a fork of you and shares your model (${agent.summary.model}). Do the task yourself, or start a named agent with that model.`;
}

/**
 * With a provider catalogue (`subAgents.providers`): the child's provider and model resolve
 * there (src/shared/providers/agent-provider.ts), a fork stays on its parent's.
 */
function providerProblem(agent: ForkAgent, config: SubAgentsConfig & { providers: NonNullable<SubAgentsConfig['providers']> }, input: AgentToolInput, launch: Launch): string | undefined {
  const definition = launch.kind === 'spawn' ? launch.definition : undefined;
  // The call's provider, else the definition's (its frontmatter `provider:`), else the tree's spawnProvider (spawn-model.ts).
  const fromDefinition = input.provider === undefined ? definition?.provider : undefined;
  const parentProvider = agentProvider(agent.input, config);
  const fork = launch.kind !== 'spawn';
  const ask = fork ? { ...(input.provider !== undefined ? { provider: input.provider } : {}) } : cataloguedAsk(agent, config, input, definition);
  const choice = childProvider({ catalogue: config.providers, parent: { provider: parentProvider, model: agent.summary.model }, fork, ...ask });
  if (!choice.ok) return fromDefinition ? `Agent type "${definition!.name}" is configured with provider "${fromDefinition}". ${choice.error}` : choice.error;
  return launch.kind === 'skill' ? skillModelProblem(agent, launch.skill, named(launch.skill.model)) : undefined;
}

/** The model a fork call names that is not its caller's (a fork runs on its caller's model whatever the call says). */
function ignoredForkModel(agent: ForkAgent, input: AgentToolInput): string | undefined {
  return input.model && input.model !== agent.summary.model ? input.model : undefined;
}

/** Why a model cannot be used for this child, or undefined. */
function modelProblem(agent: ForkAgent, config: SubAgentsConfig, input: AgentToolInput, launch: Launch): string | undefined {
  const check = (model: string, source: ModelSource) => modelRefusal({ allowlist: config.modelAllowlist, provider: config.provider, model, source });
  const providers = config.providers;
  if (providers) return providerProblem(agent, { ...config, providers }, input, launch);
  if (input.provider !== undefined) return 'This agent tree offers no choice of provider (no subAgents.providers): omit provider.';
  const definition = launch.kind === 'spawn' ? launch.definition : undefined;
  if (definition?.provider !== undefined && definition.provider !== agentProvider(agent.input, config)) {
    return `Agent type "${definition.name}" is configured with provider "${definition.provider}", but this agent tree offers no choice of provider (no subAgents.providers). Pick another subagent_type.`;
  }
  if (launch.kind === 'skill') {
    const wanted = named(launch.skill.model);
    const refused = wanted ? check(wanted, { kind: 'skill', skill: launch.skill.name }) : undefined;
    if (refused) return refused;
    if (wanted && wanted !== agent.summary.model) {
      return `Skill "${launch.skill.name}" asks for model "${wanted}", but a skill runs as a fork of you and shares your model (${agent.summary.model}). Do the task yourself, or start a named agent with that model.`;
    }
  }
  const { model, source } = childModel(agent, config, input, launch);
  return check(model, source);
}

/** The warning for a call giving both `cwd` and a worktree (seed 001 says not to). */
function cwdWorktreeWarning(input: AgentToolInput): { warning?: string } {
  if (input.cwd === undefined || input.isolation !== 'worktree') return {};
  return { warning: 'cwd and isolation "worktree" were both given: the worktree is made from the repository at cwd, and the sub-agent works at the top of its worktree, not at cwd. Give one of them.' };
}

/**
 * A definition's `isolation: remote` (seed 001) places its agent on the remote workers as the
 * call's own `isolation: "remote"` would (refused the same way where a tree has none); the call
 * is recorded so, and a resume goes there again. A call asking for another isolation is refused
 * (refusal, below).
 */
export function placedBy(launch: Launch, input: AgentToolInput): AgentToolInput {
  if (launch.kind !== 'spawn' || launch.definition?.isolation !== 'remote' || input.isolation !== undefined) return input;
  return { ...input, isolation: 'remote' };
}

/** The agent types a call may name in this tree: general-purpose and the named agents, less the denied ones. */
function openAgentTypes(config: SubAgentsConfig): string[] {
  const general = agentTypeDenied(GENERAL_PURPOSE, config.deniedAgentTypes) ? [] : [GENERAL_PURPOSE];
  return [...general, ...permittedAgents(config).filter((a) => a.context !== 'fork').map((a) => a.name)];
}

/** Why this call's agent type (a definition's, general-purpose, a skill's) may not be started in this tree, or undefined. A fork has no type. */
function deniedType(config: SubAgentsConfig, input: AgentToolInput, launch: Launch): string | undefined {
  const type = launch.kind === 'skill' ? launch.skill.name : launch.kind === 'spawn' ? (input.subagent_type ?? GENERAL_PURPOSE) : undefined;
  if (type === undefined || !agentTypeDenied(type, config.deniedAgentTypes)) return undefined;
  const open = openAgentTypes(config);
  return `Agent type "${type}" may not be started in this agent tree (subAgents.deniedAgentTypes). ${open.length ? `Available: ${open.join(', ')}.` : 'No agent type is available: do this part yourself.'}`;
}

/** The reason a child cannot be started, or undefined. Every reason is something the model can act on. */
export async function refusal(agent: ForkAgent, config: SubAgentsConfig, input: AgentToolInput, launch: Launch): Promise<string | undefined> {
  const guard = forkRecursionGuard({ querySource: agent.input.querySource, messages: agent.messages });
  if (!guard.allowed) return guard.message;
  if (agent.input.depth + 1 > config.maxDepth) return `Sub-agents may nest ${config.maxDepth} levels deep and you are at level ${agent.input.depth}: do this part yourself.`;
  if (agent.runningChildren.length >= config.maxChildren) {
    return `You already run ${agent.runningChildren.length} sub-agents, the most one agent may run at once. Wait for one (TaskOutput) or stop one (TaskStop), then try again.`;
  }
  const ops = opsRefusal(agent, config, 'the sub-agent');
  if (ops) return ops;
  if (agent.inTreeLedger && agent.children.spawned >= config.maxSpawns) {
    return `You have started ${agent.children.spawned} sub-agents, the most one agent may start: finish the work with their reports and your own tools.`;
  }
  if (input.name && agent.runningChildren.some((c) => c.name === input.name)) return `A running sub-agent is already called "${input.name}": pick another name.`;
  const denied = deniedType(config, input, launch);
  if (denied) return denied;
  if (input.subagent_type && input.subagent_type !== GENERAL_PURPOSE && !config.agents.some((a) => a.name === input.subagent_type && a.context !== 'fork')) {
    // Without deny rules this is every type, as it always was.
    const names = openAgentTypes(config).join(', ');
    const omit = config.forkGate ? ' Omit subagent_type to fork yourself.' : agentTypeDenied(GENERAL_PURPOSE, config.deniedAgentTypes) ? '' : ' Omit subagent_type to use the general-purpose agent.';
    return `${claudeCodeBuiltinNote(input.subagent_type)}There is no agent type "${input.subagent_type}". Available: ${names}.${omit}`;
  }
  const model = aliasRefusal(agent, config, input, launch) ?? modelProblem(agent, config, input, launch) ?? userMemoryRefusal(agent, launch);
  if (model) return model;
  // A cwd must stay inside the caller's workspace.
  if (input.cwd !== undefined) {
    const confined = confineCwd(agent.workspaceRoot, input.cwd);
    if (!confined.ok) return confined.message;
  }
  // A call's own isolation overrides its definition's `remote` (seed 001): it runs here.
  if (input.isolation === 'remote' && !config.remoteTaskQueue) {
    const defined = launch.kind === 'spawn' && launch.definition?.isolation === 'remote' ? launch.definition.name : undefined;
    return defined
      ? `No remote workers are configured for this agent, and agent type "${defined}" runs only on them (its definition says isolation: remote): pick another agent type, or do this part yourself.`
      : 'No remote workers are configured for this agent: run it here (omit isolation).';
  }
  // In a tree with a ledger the root counts running agents exactly (admission, after this).
  if (agent.inTreeLedger) return undefined;
  // Visibility lags a little behind new starts: this agent's own running children are known exactly.
  const seen = await tree.countRunningAgents.executeWithOptions({ summary: 'count running agents in the tree' }, [{ rootId: agent.rootAgentId }]);
  const running = Math.max(seen, 1 + agent.runningChildren.length);
  if (running >= config.maxTreeRunning) return `This agent tree already runs ${running} agents, its limit: wait for sub-agents to finish before starting more.`;
  return undefined;
}

/** The child's workflow input (also rebuilds a finished child's configuration when it is resumed). */
export function childInputFor(agent: ForkAgent, config: SubAgentsConfig, input: AgentToolInput, launch: Launch, background: boolean): ForkInputJson {
  // The call's own limits (spawn-controls.ts), if it set any: never more than the caller has.
  if (launch.kind === 'fork') return withControls(agent, config, input, forkChildInput(agent, input, config, prefixRefOf(agent), background));
  if (launch.kind === 'skill') return skillChildInput(agent, launch.skill, input, config, prefixRefOf(agent), background);
  // A teammate resumes as a teammate.
  if (input.team_name !== undefined) return teammateChildInput(agent, input, config, launch.definition);
  const spawned = spawnChildInput(agent, input, config, launch.definition, background);
  // With teams on, a plain sub-agent is told who its caller is and how to reach it (a teammate is told its team).
  const told = config.teams ? { ...spawned, prompt: `${childComms({ caller: callerName(agent) })}\n\n${spawned.prompt}` } : spawned;
  return withControls(agent, config, input, told);
}

/** How a caller is named to its sub-agents: by its name and id, or its id. */
function callerName(agent: ForkAgent): string {
  return agent.input.name ? `"${agent.input.name}" (${agent.agentId})` : `"${agent.agentId}"`;
}

/** How a recorded child was started (to resume it the same way). */
export function launchOf(record: ChildRecord, config: SubAgentsConfig): Launch | undefined {
  const type = record.subagentType;
  if (type?.startsWith(SKILL_TYPE_PREFIX)) {
    const skill = config.agents.find((a) => a.context === 'fork' && a.name === type.slice(SKILL_TYPE_PREFIX.length));
    return skill ? { kind: 'skill', skill } : undefined;
  }
  if (record.kind === 'fork') return { kind: 'fork' };
  return { kind: 'spawn', definition: config.agents.find((a) => a.name === type && a.context !== 'fork') };
}

/**
 * In a tree with a ledger, the root admits the child and grants its budget (at most what its
 * policy gives and what every ancestor has left); the child's input carries the grant.
 * Without a ledger (a run recorded before it) the input is used as it is.
 */
export async function admitted(agent: ForkAgent, id: string, childInput: ForkInputJson, kind: 'spawn' | 'resume'): Promise<{ input: ForkInputJson } | { refused: string }> {
  if (!agent.inTreeLedger) return { input: childInput };
  const want = childInput.budget?.maxTokens ?? agent.input.budget.maxTokens;
  let admission: AdmitResult;
  try {
    // Its name (and a teammate's team) join the ledger: peer messages find it by name (team-ledger.ts).
    const named = { ...(childInput.name ? { name: childInput.name } : {}), ...(childInput.team ? { team: childInput.team.name } : {}) };
    // In a tree that lends shares, what one of its calls may charge sizes its first share.
    const call = agent.shares ? { callTokens: callTokensFor(agent, childInput) } : {};
    admission = await admitChild(agent, { agentId: id, parentId: agent.agentId, model: childInput.model ?? agent.model, kind, want, ...named, ...call });
  } catch (err) {
    // The root may have admitted it before its answer was lost: take the admission back.
    await withdrawChild(agent, id);
    if (isCancellation(err)) throw err;
    return { refused: `The tree's root did not answer the admission of ${id}, so it was not started (${messageOf(err)}). Try again later, or do the work yourself.` };
  }
  if (!admission.ok) return { refused: admission.reason };
  // In a tree that lends budget shares, the child starts with the share its admission lent (src/shared/tree/tree-shares.ts).
  const share = admission.share !== undefined ? { treeShare: { tokens: admission.share } } : {};
  return { input: { ...childInput, treeLedger: true, budget: { ...childInput.budget, maxTokens: admission.budget }, ...share } };
}

function messageOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}

/** Starts an admitted child; one that does not start is taken back from the root's ledger. */
export async function startAdmitted(agent: ForkAgent, id: string, start: () => Promise<StartedChild>): Promise<StartedChild> {
  try {
    return await start();
  } catch (err) {
    await withdrawChild(agent, id);
    throw err;
  }
}

/**
 * Starts the child and answers the tool call: at once when it runs in the background or
 * remotely, else with its outcome (or `async_launched` once it outlives `backgroundAfter`).
 */
export async function launchChild(
  agent: ForkAgent,
  config: SubAgentsConfig,
  args: { id: string; use: { id: string }; input: AgentToolInput; launch: Launch; background: boolean },
): Promise<ToolResultBlock> {
  const { id, use, input, launch } = args;
  const remote = input.isolation === 'remote';
  const background = args.background || remote;
  const taskQueue = remote ? config.remoteTaskQueue! : workflowInfo().taskQueue;
  const admission = await admitted(agent, id, await withInheritedSystem(agent, config, input, launch, childInputFor(agent, config, input, launch, background)), 'spawn');
  if ('refused' in admission) return errorResult(use.id, admission.refused);
  const { record } = await startAdmitted(agent, id, () =>
    startChildAgent(agent, {
      id,
      input: admission.input,
      agentInput: input,
      kind: launch.kind === 'spawn' ? 'spawn' : 'fork',
      ...(launch.kind === 'skill' ? { subagentType: `${SKILL_TYPE_PREFIX}${launch.skill.name}` } : {}),
      toolUseId: use.id,
      mode: remote ? 'remote' : background ? 'background' : 'sync',
      taskQueue,
    }),
  );
  const warned = cwdWorktreeWarning(input);
  if (warned.warning) log.warn('fork.cwd_with_worktree', { agentId: agent.agentId, childId: id });
  if (remote) {
    const ui = config.uiBaseUrl ? `${config.uiBaseUrl.replace(/\/$/, '')}/namespaces/${workflowInfo().namespace}/workflows/${encodeURIComponent(id)}` : undefined;
    const file = launchedOutputFields(agent, record).outputFile;
    return jsonResult(use.id, { status: 'remote_launched', agentId: id, workflowId: id, taskQueue, ...(ui ? { uiUrl: ui } : {}), ...(file ? { outputFile: file, description: record.description } : {}) });
  }
  const inherited = launch.kind === 'spawn' ? undefined : admission.input.parentRef?.count;
  const on = { provider: admission.input.provider ?? agentProvider(agent.input, config), model: admission.input.model ?? agent.summary.model };
  // A fork names another model only to have it ignored (seed 001): the launch says so.
  const ignored = launch.kind === 'fork' ? ignoredForkModel(agent, input) : undefined;
  const ignoredNote = ignored ? `model "${ignored}" ignored: a fork always runs on your model (${agent.summary.model}); pick a subagent_type for another model.` : undefined;
  const hostNote = input.host_mode === true ? `It stays alive after its task (host_mode): SendMessage to "${record.name ?? record.agentId}" gives it more work; it ends after ${config.teammateIdle} idle, or by TaskStop.` : undefined;
  const note = [ignoredNote, hostNote].filter(Boolean).join(' ') || undefined;
  if (background) return jsonResult(use.id, { ...launched(agent, record, note, inherited, on), ...warned });
  // With background tasks disabled nothing moves it to the background: the call waits until it ends.
  const wait = await awaitSyncChild(agent, record, backgroundOff(agent) ? undefined : toMs(config.backgroundAfter));
  const outcome = 'moved' in wait ? undefined : wait.outcome;
  if (!outcome) {
    const by = 'moved' in wait ? wait.moved.by : undefined;
    return jsonResult(use.id, { ...launched(agent, record, by ? `moved to the background by ${by}` : `still running after ${config.backgroundAfter}: moved to the background`, inherited, on), ...warned });
  }
  return jsonResult(use.id, { ...outcomeView(record), ...warned }, outcome.status !== 'completed');
}
