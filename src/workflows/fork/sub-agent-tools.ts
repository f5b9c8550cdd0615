/**
 * The sub-agent tools, carried out by the workflow: Agent (fork or spawn a child workflow),
 * SendMessage (signal a running agent, or resume a finished child from its history),
 * TaskOutput and TaskStop. Every limit and refusal is an `is_error` result the model can act
 * on; nothing here throws for something the model did.
 */
import { getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/anthropic';
import { agentToolInput, sendMessageToolInput, taskOutputToolInput, taskStopToolInput, TASK_OUTPUT_DEFAULT_TIMEOUT_MS, type AgentToolInput } from '../../shared/agent-tools';
import { toMs } from '../../shared/duration';
import type { ForkInputJson } from '../../shared/fork-input';
import { sendMessageSignal } from '../../shared/messages';
import { describeIssues } from '../../shared/fork-input';
import { forkRecursionGuard } from '../../shared/recursion';
import type { ChildRecord, SubAgentsConfig } from '../../shared/tree-input';
import { tree } from '../activities';
import { prefixRefOf } from '../conversation-queries';
import type { ForkAgent } from './agent';
import { childIdFor, forkChildInput, GENERAL_PURPOSE, resumeOf, spawnChildInput } from './child-input';
import { admitChild } from './tree-authority';
import { awaitSyncChild, markSeen, startChildAgent, stopChild } from './children';
import { errorResult, jsonResult } from './tool-results';
import { condition } from '@temporalio/workflow';

/**
 * A child's outcome as a tool result. No wall-clock duration: it would make the same
 * conversation differ from run to run for no use to the model (notifications keep it).
 */
function outcomeView(record: ChildRecord) {
  const o = record.result;
  return o
    ? { status: o.status, agentId: record.agentId, ...(record.name ? { name: record.name } : {}), content: o.text, ...(o.error ? { error: o.error } : {}), usage: o.treeUsage, toolUses: o.toolUses, ...(o.worktree ? { worktree: o.worktree } : {}) }
    : { status: 'running', agentId: record.agentId, ...(record.name ? { name: record.name } : {}) };
}

function launched(record: ChildRecord, note?: string) {
  return {
    status: 'async_launched',
    agentId: record.agentId,
    ...(record.name ? { name: record.name } : {}),
    description: record.description,
    output: `Its report arrives as a task notification. To wait for it now: TaskOutput with task_id "${record.agentId}" (or \`forkflow result ${record.agentId}\`).`,
    ...(note ? { note } : {}),
  };
}

/** The reason an Agent call cannot start a child, or undefined. */
async function refusal(agent: ForkAgent, config: SubAgentsConfig, input: AgentToolInput, fork: boolean): Promise<string | undefined> {
  const guard = forkRecursionGuard({ querySource: agent.input.querySource, messages: agent.messages });
  if (!guard.allowed) return guard.message;
  if (agent.input.depth + 1 > config.maxDepth) return `Sub-agents may nest ${config.maxDepth} levels deep and you are at level ${agent.input.depth}: do this part yourself.`;
  if (agent.runningChildren.length >= config.maxChildren) {
    return `You already run ${agent.runningChildren.length} sub-agents, the most one agent may run at once. Wait for one (TaskOutput) or stop one (TaskStop), then try again.`;
  }
  if (agent.inTreeLedger && agent.children.spawned >= config.maxSpawns) {
    return `You have started ${agent.children.spawned} sub-agents, the most one agent may start: finish the work with their reports and your own tools.`;
  }
  if (input.name && agent.runningChildren.some((c) => c.name === input.name)) return `A running sub-agent is already called "${input.name}": pick another name.`;
  if (input.subagent_type && input.subagent_type !== GENERAL_PURPOSE && !config.agents.some((a) => a.name === input.subagent_type)) {
    const names = [GENERAL_PURPOSE, ...config.agents.map((a) => a.name)].join(', ');
    return `There is no agent type "${input.subagent_type}". Available: ${names}. Omit subagent_type to ${config.forkGate ? 'fork yourself' : 'use the general-purpose agent'}.`;
  }
  if (fork && input.model && input.model !== agent.summary.model) return `A fork always uses your model (${agent.summary.model}); omit model, or pick a subagent_type.`;
  if (input.model && config.modelAllowlist) {
    const allowed = Object.values(config.modelAllowlist).flat();
    if (!allowed.includes(input.model)) return `Model "${input.model}" is not allowed here. Allowed: ${allowed.join(', ')}.`;
  }
  if (input.isolation === 'remote' && !config.remoteTaskQueue) return 'No remote workers are configured for this agent: run it here (omit isolation).';
  // In a tree with a ledger the root counts running agents exactly (admission, after this).
  if (agent.inTreeLedger) return undefined;
  // Visibility lags a little behind new starts: this agent's own running children are known exactly.
  const seen = await tree.countRunningAgents.executeWithOptions({ summary: 'count running agents in the tree' }, [{ rootId: agent.rootAgentId }]);
  const running = Math.max(seen, 1 + agent.runningChildren.length);
  if (running >= config.maxTreeRunning) return `This agent tree already runs ${running} agents, its limit: wait for sub-agents to finish before starting more.`;
  return undefined;
}

function childInputFor(agent: ForkAgent, config: SubAgentsConfig, input: AgentToolInput, fork: boolean, background: boolean): ForkInputJson {
  if (fork) return forkChildInput(agent, input, config, prefixRefOf(agent), background);
  const definition = config.agents.find((a) => a.name === input.subagent_type);
  return spawnChildInput(agent, input, config, definition, background);
}

/**
 * In a tree with a ledger, the root admits the child and grants its budget (at most what its
 * policy gives and what every ancestor has left); the child's input carries the grant.
 * Without a ledger (a run recorded before it) the input is used as it is.
 */
async function admitted(agent: ForkAgent, id: string, childInput: ForkInputJson, kind: 'spawn' | 'resume'): Promise<{ input: ForkInputJson } | { refused: string }> {
  if (!agent.inTreeLedger) return { input: childInput };
  const want = childInput.budget?.maxTokens ?? agent.input.budget.maxTokens;
  const admission = await admitChild(agent, { agentId: id, parentId: agent.agentId, model: childInput.model ?? agent.model, kind, want });
  if (!admission.ok) return { refused: admission.reason };
  return { input: { ...childInput, treeLedger: true, budget: { ...childInput.budget, maxTokens: admission.budget } } };
}

async function agentCall(agent: ForkAgent, use: ToolUseBlock, config: SubAgentsConfig): Promise<ToolResultBlock> {
  const parsed = agentToolInput.safeParse(use.input);
  if (!parsed.success) return errorResult(use.id, `Invalid Agent call: ${describeIssues(parsed.error).join('; ')}`);
  const input = parsed.data;
  const fork = !input.subagent_type && config.forkGate;
  // Numbered before any wait, so calls of one round get ids in the order they were made.
  const id = childIdFor(agent, input, fork ? 'fork' : 'spawn');
  const why = await refusal(agent, config, input, fork);
  if (why) return errorResult(use.id, why);

  const remote = input.isolation === 'remote';
  const background = config.forkGate || remote || input.run_in_background === true;
  const taskQueue = remote ? config.remoteTaskQueue! : workflowInfo().taskQueue;
  const admission = await admitted(agent, id, childInputFor(agent, config, input, fork, background), 'spawn');
  if ('refused' in admission) return errorResult(use.id, admission.refused);
  const { record } = await startChildAgent(agent, {
    id,
    input: admission.input,
    agentInput: input,
    kind: fork ? 'fork' : 'spawn',
    toolUseId: use.id,
    mode: remote ? 'remote' : background ? 'background' : 'sync',
    taskQueue,
  });
  if (remote) {
    const ui = config.uiBaseUrl ? `${config.uiBaseUrl.replace(/\/$/, '')}/namespaces/${workflowInfo().namespace}/workflows/${encodeURIComponent(id)}` : undefined;
    return jsonResult(use.id, { status: 'remote_launched', agentId: id, workflowId: id, taskQueue, ...(ui ? { uiUrl: ui } : {}) });
  }
  if (background) return jsonResult(use.id, launched(record));
  const outcome = await awaitSyncChild(agent, record, toMs(config.backgroundAfter));
  if (!outcome) return jsonResult(use.id, launched(record, `still running after ${config.backgroundAfter}: moved to the background`));
  return jsonResult(use.id, outcomeView(record), outcome.status !== 'completed');
}

async function sendMessageCall(agent: ForkAgent, use: ToolUseBlock, config: SubAgentsConfig | undefined): Promise<ToolResultBlock> {
  const parsed = sendMessageToolInput.safeParse(use.input);
  if (!parsed.success) return errorResult(use.id, `Invalid SendMessage call: ${describeIssues(parsed.error).join('; ')}`);
  const { to, message, summary } = parsed.data;
  const payload = { message, summary, from: agent.agentId };
  const child = agent.children.find(to);
  if (child && child.state !== 'running') {
    // A finished child resumes from its durable history with the message as its next turn.
    const ref = child.result?.conversation;
    if (!ref || !config) return errorResult(use.id, `${child.agentId} has finished and its conversation cannot be resumed from here.`);
    const fork = child.kind === 'fork';
    const base = childInputFor(agent, config, child.agentInput, fork, true);
    const { parentRef: _prefix, ...rest } = base;
    // A resumed child keeps the budget it was granted and goes on from what it had counted.
    const kept = agent.inTreeLedger ? resumeOf(child) : undefined;
    const admission = await admitted(agent, child.agentId, kept ? { ...rest, budget: { ...rest.budget, maxTokens: kept.budget } } : rest, 'resume');
    if ('refused' in admission) return errorResult(use.id, admission.refused);
    agent.children.remove(child);
    if (kept) agent.children.fold(kept.descendants);
    await startChildAgent(agent, {
      id: child.agentId,
      input: { ...admission.input, continuation: { ref, message: payload, ...(kept ? { state: kept.state } : {}) } },
      agentInput: child.agentInput,
      kind: child.kind,
      toolUseId: use.id,
      mode: 'background',
      taskQueue: child.taskQueue ?? workflowInfo().taskQueue,
      resumed: true,
    });
    return jsonResult(use.id, { status: 'resumed', agentId: child.agentId, note: 'It continues from its own history with your message; its report arrives as a task notification.' });
  }
  const target = child?.agentId ?? to;
  try {
    await getExternalWorkflowHandle(target).signal(sendMessageSignal, payload);
  } catch {
    return errorResult(use.id, `No running agent "${to}". Address a sub-agent by the name you gave it or by its agent id.`);
  }
  return jsonResult(use.id, { status: 'queued', agentId: target, note: 'It reads your message at its next turn boundary.' });
}

async function taskOutputCall(agent: ForkAgent, use: ToolUseBlock): Promise<ToolResultBlock> {
  const parsed = taskOutputToolInput.safeParse(use.input);
  if (!parsed.success) return errorResult(use.id, `Invalid TaskOutput call: ${describeIssues(parsed.error).join('; ')}`);
  const record = agent.children.find(parsed.data.task_id);
  if (!record) return errorResult(use.id, `No sub-agent "${parsed.data.task_id}" of yours. Use the agentId the Agent tool returned.`);
  if (record.state === 'running' && parsed.data.block !== false) {
    await condition(() => record.state !== 'running', parsed.data.timeout_ms ?? TASK_OUTPUT_DEFAULT_TIMEOUT_MS);
  }
  if (record.state === 'running') return jsonResult(use.id, { ...outcomeView(record), note: 'still running; ask again later or wait for its notification' });
  markSeen(agent, record);
  return jsonResult(use.id, outcomeView(record), record.state !== 'completed');
}

async function taskStopCall(agent: ForkAgent, use: ToolUseBlock): Promise<ToolResultBlock> {
  const parsed = taskStopToolInput.safeParse(use.input);
  if (!parsed.success) return errorResult(use.id, `Invalid TaskStop call: ${describeIssues(parsed.error).join('; ')}`);
  const record = agent.children.find(parsed.data.task_id);
  if (!record) return errorResult(use.id, `No sub-agent "${parsed.data.task_id}" of yours.`);
  if (record.state !== 'running') return errorResult(use.id, `Only a running task can be stopped; ${record.agentId} is ${record.state}.`);
  await stopChild(agent, record);
  markSeen(agent, record);
  return jsonResult(use.id, outcomeView(record));
}

/** Runs one sub-agent tool call. */
export async function runSubAgentTool(agent: ForkAgent, use: ToolUseBlock): Promise<ToolResultBlock> {
  const config = agent.input.subAgents;
  if (use.name === 'SendMessage') return sendMessageCall(agent, use, config);
  if (use.name === 'TaskOutput') return taskOutputCall(agent, use);
  if (use.name === 'TaskStop') return taskStopCall(agent, use);
  // A fork child sees its parent's Agent tool (the cache needs the same tools): the guard answers it.
  const guard = forkRecursionGuard({ querySource: agent.input.querySource, messages: agent.messages });
  if (!guard.allowed) return errorResult(use.id, guard.message);
  if (!config?.enabled) return errorResult(use.id, 'Sub-agents are not available to this agent: do the work yourself with your own tools.');
  return agentCall(agent, use, config);
}
