/**
 * The sub-agent tools, carried out by the workflow: Agent (fork or spawn a child workflow),
 * Skill (skill-tool.ts), SendMessage (signal a running agent, or resume a finished child from its history),
 * TaskOutput and TaskStop. Every limit and refusal is an `is_error` result the model can act
 * on; nothing here throws for something the model did.
 */
import { deprecatePatch, getExternalWorkflowHandle, isCancellation, patched, workflowInfo } from '@temporalio/workflow';
import type { ChildProgress } from '../../shared/wire/activity-io';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages-api/anthropic';
import { agentCallWithoutControls, agentToolInput, hostModeArg, sendMessageCallInput, sendMessageCallWithInterrupt, taskOutputToolInput, taskStopCallInput, TASK_OUTPUT_DEFAULT_TIMEOUT_MS, LIST_AGENTS } from '../../shared/tree/agent-tools';
import { sendMessageSignal } from '../../shared/wire/messages';
import { isMember } from '../../shared/tree/tree-ledger';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import { forkRecursionGuard } from '../../shared/prefix/recursion';
import type { ChildRecord, SubAgentsConfig } from '../../shared/tree/tree-input';
import type { ForkAgent } from './agent';
import { admitted, childInputFor, launchChild, launchOf, outcomeView, placedBy, refusal, startAdmitted, type Launch } from './agent-launch';
import { childIdFor, resumeOf } from './child-input';
import { markSeen, startChildAgent, stopChild } from './children';
import { skillCall } from './skill-tool';
import { shellTaskOutput, shellTaskStop } from './shell-tasks';
import { errorResult, jsonResult } from './tool-results';
import { condition } from '@temporalio/workflow';
import { whileWaiting } from './keep-alive';
import { progress } from '../activities';
import type { AgentToolInput, SendMessageCallInput, SendMessageInterruptingInput } from '../../shared/tree/agent-tools';
import { controlsRefusal, grantOf, hasControls, withGrant } from './spawn-controls';
import { listAgentsCall } from './agent-list';
import { ANSWER_APPROVAL } from '../../shared/tree/parent-approvals';
import { answerApprovalCall } from './parent-approvals';
import { BROADCAST } from '../../shared/tree/team-ledger';
import { PEER_MESSAGES_PATCH, peerSend } from './team-messages';
import { teammateCall, teammateSpawnRefusal } from './team-spawn';
import { interruptingSend } from './interrupt';
import { backgroundOff, backgroundRefusal } from './background-switch';

async function agentCall(agent: ForkAgent, use: ToolUseBlock, config: SubAgentsConfig): Promise<ToolResultBlock> {
  // Without spawn controls their fields are unknown keys, as they always were.
  const base = config.spawnControls ? agentToolInput : agentCallWithoutControls;
  // host_mode only where the tree offers it (elsewhere an unknown key, as it always was).
  const parsed = (config.hostMode ? base.extend({ host_mode: hostModeArg }) : base).safeParse(use.input);
  if (!parsed.success) return errorResult(use.id, `Invalid Agent call: ${describeIssues(parsed.error).join('; ')}`);
  const input: AgentToolInput = parsed.data;
  if (input.host_mode === true && backgroundOff(agent)) return errorResult(use.id, backgroundRefusal('A sub-agent with host_mode (it waits in the background)'));
  const controls = controlsRefusal(agent, config, input);
  if (controls) return errorResult(use.id, controls);
  if (input.team_name !== undefined || input.mode !== undefined) return teammateCall(agent, use, input, config);
  const fork = !input.subagent_type && config.forkGate;
  // Numbered before any wait, so calls of one round get ids in the order they were made.
  const id = childIdFor(agent, input, fork ? 'fork' : 'spawn');
  const launch: Launch = fork ? { kind: 'fork' } : { kind: 'spawn', definition: config.agents.find((a) => a.name === input.subagent_type && a.context !== 'fork') };
  const placed = placedBy(launch, input);
  if (placed.run_in_background === true && backgroundOff(agent)) return errorResult(use.id, backgroundRefusal('A sub-agent with run_in_background'));
  const why = await refusal(agent, config, placed, launch);
  if (why) return errorResult(use.id, why);
  // With background tasks disabled every sub-agent runs in the foreground, a fork and a background definition too.
  const background = !backgroundOff(agent) && (config.forkGate || placed.run_in_background === true || placed.host_mode === true || alwaysBackground(launch));
  // What the child is given, before it runs (the result says so: larger values were lowered).
  const planned = hasControls(placed) ? childInputFor(agent, config, placed, launch, background) : undefined;
  const result = await launchChild(agent, config, { id, use, input: placed, launch, background });
  return planned ? withGrant(result, grantOf(planned, agent.children.find(id)?.budget, placed)) : result;
}

/** A named agent whose definition says `background: true` always runs in the background (seed 001: call OR definition). */
function alwaysBackground(launch: Launch): boolean {
  return launch.kind === 'spawn' && launch.definition?.background === true;
}

/** Before this patch a tree's root signalled whatever id its model named (histories then hold that signal). */
export const TREE_BOUNDARY_PATCH = 'forkflow-tree-boundary-1';

/** Broadcast and structured messages are for teams: why this call cannot have them, if it cannot. */
function teamOnly(agent: ForkAgent, config: SubAgentsConfig | undefined, input: SendMessageCallInput): string | undefined {
  const broadcast = input.to === BROADCAST;
  if (!broadcast && typeof input.message === 'string') return undefined;
  if (config?.teams !== true && !agent.input.team) return `${broadcast ? 'Broadcast ("*")' : 'A structured message'} is for teams, which this agent tree does not have (subAgents.teams): send text to one agent.`;
  return agent.inTreeLedger ? undefined : 'This agent tree keeps no ledger (it was started before teams existed): send text to one agent.';
}

/** The schema a SendMessage call is read with: `interrupt` only in a tree with spawn controls. */
function sendMessageSchemaFor(use: ToolUseBlock, config: SubAgentsConfig | undefined) {
  const asks = typeof use.input === 'object' && use.input !== null && 'interrupt' in use.input;
  return asks && config?.spawnControls === true ? sendMessageCallWithInterrupt : sendMessageCallInput;
}

/**
 * Why a message to `to` — an id this agent gave out (`<its id>.<label>-<n>`) that is on its
 * record no more — is refused by name: a finished child dropped from the record
 * (`keepCompleted`) is not resumed from here (seed 001 resumes it from its transcript; forkflow
 * leaves that to a client, which can read any closed agent's history). Undefined otherwise.
 */
function offRecord(agent: ForkAgent, to: string): string | undefined {
  const own = to.startsWith(`${agent.agentId}.`) ? /^[a-z0-9-]+-(\d+)$/.exec(to.slice(agent.agentId.length + 1)) : null;
  if (!own || Number(own[1]) > agent.children.started) return undefined;
  const kept = agent.input.subAgents?.keepCompleted ?? 256;
  return `${to} is not on your record: it was never started, or it finished and was dropped from your record (you keep your last ${kept} finished sub-agents, subAgents.keepCompleted), so it cannot be resumed from here. An operator can resume a finished agent by its id (\`forkflow send ${to} <message>\`); or start a new sub-agent.`;
}

async function sendMessageCall(agent: ForkAgent, use: ToolUseBlock, config: SubAgentsConfig | undefined): Promise<ToolResultBlock> {
  const parsed = sendMessageSchemaFor(use, config).safeParse(use.input);
  if (!parsed.success) return errorResult(use.id, `Invalid SendMessage call: ${describeIssues(parsed.error).join('; ')}`);
  const team = teamOnly(agent, config, parsed.data);
  if (team) return errorResult(use.id, team);
  const input: SendMessageInterruptingInput = parsed.data;
  if (input.interrupt === true) return interruptingSend(agent, use, input);
  const { to, message: raw, summary } = parsed.data;
  const child = agent.children.find(to);
  const resume = child !== undefined && child.state !== 'running';
  const gone = child ? undefined : offRecord(agent, to);
  if (gone) return errorResult(use.id, gone);
  // Under the patch every message that does not resume a child is a peer message: routed and counted at the root, with the tree's capability.
  // (One's own child by its name or id is addressed by its id: another agent of the tree may share the name.)
  if (!resume && agent.inTreeLedger && patched(PEER_MESSAGES_PATCH)) return peerSend(agent, use, child ? { ...parsed.data, to: child.agentId } : parsed.data);
  if (typeof raw !== 'string') return errorResult(use.id, 'A structured message cannot resume a finished agent: send it text.');
  const message = raw;
  const payload = { message, summary, from: agent.agentId };
  if (child && child.state !== 'running') {
    // A finished child resumes from its durable history with the message as its next turn.
    const ref = child.result?.conversation;
    if (!ref || !config) return errorResult(use.id, `${child.agentId} has finished and its conversation cannot be resumed from here.`);
    const launch = launchOf(child, config);
    if (!launch) return errorResult(use.id, `${child.agentId} ran a skill that is no longer configured: it cannot be resumed.`);
    const base = childInputFor(agent, config, child.agentInput, launch, true);
    const { parentRef: _prefix, ...rest } = base;
    // A resumed child keeps the budget it was granted and goes on from what it had counted.
    const kept = agent.inTreeLedger ? resumeOf(child) : undefined;
    const admission = await admitted(agent, child.agentId, kept ? { ...rest, budget: { ...rest.budget, maxTokens: kept.budget } } : rest, 'resume');
    if ('refused' in admission) return errorResult(use.id, admission.refused);
    agent.children.remove(child);
    if (kept) agent.children.fold(kept.descendants);
    await startAdmitted(agent, child.agentId, () =>
      startChildAgent(agent, {
        id: child.agentId,
        input: { ...admission.input, continuation: { ref, message: payload, ...(kept ? { state: kept.state } : {}) } },
        agentInput: child.agentInput,
        kind: child.kind,
        ...(child.subagentType ? { subagentType: child.subagentType } : {}),
        toolUseId: use.id,
        mode: 'background',
        taskQueue: child.taskQueue ?? workflowInfo().taskQueue,
        resumed: true,
      }),
    );
    return jsonResult(use.id, { status: 'resumed', agentId: child.agentId, note: 'It continues from its own history with your message; its report arrives as a task notification.' });
  }
  const target = child?.agentId ?? to;
  // A tree is a boundary: its root, which keeps the ledger, knows every agent of it and refuses
  // others here; every receiver also drops a message naming another tree (handlers.ts).
  if (!child && agent.book && !isMember(agent.book, target)) {
    // Retirement step 2 (docs/guides/patches.md): no recorded history takes the old branch.
    deprecatePatch(TREE_BOUNDARY_PATCH);
    return errorResult(use.id, `No running agent "${to}" in this agent tree: messages reach only agents of your own tree. Address a sub-agent by the name you gave it or by its agent id.`);
  }
  try {
    await getExternalWorkflowHandle(target).signal(sendMessageSignal, { ...payload, fromTree: agent.rootAgentId });
  } catch {
    return errorResult(use.id, `No running agent "${to}". Address a sub-agent by the name you gave it or by its agent id.`);
  }
  // Only the root knows its whole tree: elsewhere, an agent that is not one's own child is told the rule.
  const note = child ? 'It reads your message at its next turn boundary.' : 'It reads your message at its next turn boundary if it is an agent of your tree; agents of other trees drop it.';
  return jsonResult(use.id, { status: 'queued', agentId: target, note });
}

/** A running child's progress; none when asking failed (TaskOutput then says only that it runs: it never fails the agent). */
async function askedProgress(agentId: string): Promise<ChildProgress | undefined> {
  try {
    return await progress.childProgress({ agentId });
  } catch (err) {
    if (isCancellation(err)) throw err;
    return undefined;
  }
}

/** Seed 002's `is_final`: whether the state can still change (false while it runs). */
function finality(record: ChildRecord): { is_final?: boolean } {
  return { is_final: record.state !== 'running' };
}

async function taskOutputCall(agent: ForkAgent, use: ToolUseBlock): Promise<ToolResultBlock> {
  const parsed = taskOutputToolInput.safeParse(use.input);
  if (!parsed.success) return errorResult(use.id, `Invalid TaskOutput call: ${describeIssues(parsed.error).join('; ')}`);
  const shell = agent.shells.find(parsed.data.task_id);
  if (shell) return shellTaskOutput(agent, use, shell, parsed.data);
  const record = agent.children.find(parsed.data.task_id);
  if (!record) return errorResult(use.id, `No sub-agent "${parsed.data.task_id}" of yours (nor background task). Use the agentId the Agent tool returned, or the task_id of your background Bash command.`);
  if (record.state === 'running' && parsed.data.block !== false) {
    await whileWaiting(agent, () => condition(() => record.state !== 'running', parsed.data.timeout_ms ?? TASK_OUTPUT_DEFAULT_TIMEOUT_MS));
  }
  if (record.state === 'running') {
    // Its progress so far (seed 001: a running agent's output is readable), by its status query.
    const now = await askedProgress(record.agentId);
    const shown = now?.found ? { progress: { turns: now.turns, toolUses: now.toolUses, totalTokens: now.totalTokens, ...(now.doing ? { doing: now.doing } : {}), lastText: now.lastText } } : {};
    return jsonResult(use.id, { ...outcomeView(record), ...finality(record), ...shown, note: 'still running; ask again later or wait for its notification' });
  }
  markSeen(agent, record);
  return jsonResult(use.id, { ...outcomeView(record), ...finality(record) }, record.state !== 'completed');
}

async function taskStopCall(agent: ForkAgent, use: ToolUseBlock): Promise<ToolResultBlock> {
  const parsed = taskStopCallInput.safeParse(use.input);
  if (!parsed.success) return errorResult(use.id, `Invalid TaskStop call: ${describeIssues(parsed.error).join('; ')}`);
  const shell = agent.shells.find(parsed.data.task_id);
  if (shell) return shellTaskStop(agent, use, shell);
  const record = agent.children.find(parsed.data.task_id);
  if (!record) return errorResult(use.id, `No sub-agent "${parsed.data.task_id}" of yours (nor background task).`);
  if (record.state !== 'running') return errorResult(use.id, `Only a running task can be stopped; ${record.agentId} is ${record.state}.`);
  await stopChild(agent, record);
  markSeen(agent, record);
  return jsonResult(use.id, outcomeView(record));
}

/** Runs one sub-agent tool call. */
export async function runSubAgentTool(agent: ForkAgent, use: ToolUseBlock): Promise<ToolResultBlock> {
  const config = agent.input.subAgents;
  if (use.name === 'SendMessage') return sendMessageCall(agent, use, config);
  const teammate = use.name === 'Agent' || use.name === 'Skill' ? teammateSpawnRefusal(agent) : undefined;
  if (teammate) return errorResult(use.id, teammate);
  if (use.name === 'TaskOutput') return taskOutputCall(agent, use);
  if (use.name === 'TaskStop') return taskStopCall(agent, use);
  if (use.name === LIST_AGENTS) return listAgentsCall(agent, use);
  if (use.name === ANSWER_APPROVAL) return answerApprovalCall(agent, use);
  const tool = use.name === 'Skill' ? 'Skill' : 'Agent';
  // A fork child sees its parent's Agent tool (the cache needs the same tools): the guard answers it.
  const guard = forkRecursionGuard({ querySource: agent.input.querySource, messages: agent.messages });
  if (!guard.allowed) return errorResult(use.id, guard.message);
  if (!config?.enabled) return errorResult(use.id, `${tool === 'Skill' ? 'Skills are' : 'Sub-agents are'} not available to this agent: do the work yourself with your own tools.`);
  return tool === 'Skill' ? skillCall(agent, use, config) : agentCall(agent, use, config);
}
