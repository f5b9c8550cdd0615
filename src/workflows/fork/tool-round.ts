/**
 * One tool round: every tool_use of an assistant turn becomes a tool_result, in order.
 * The filter decides per call here (pure, no activity needed to say no); allowed calls run
 * as activities on the workspace's task queue. Tool failures become `is_error` results the
 * model can act on; only cancellation propagates.
 */
import { ActivityFailure, ApplicationFailure, isCancellation, patched, workflowInfo } from '@temporalio/workflow';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/anthropic';
import { INLINE_TOOL_INPUT_BYTES, type ToolCallInput, type ToolCallResult, type WritePolicySpec } from '../../shared/activity-io';
import { canonicalJson, utf8Length } from '../../shared/hash';
import { isSubAgentTool } from '../../shared/agent-tools';
import { applyToolAccess } from '../../shared/agents';
import { isBuiltinTool, READ_ONLY_TOOLS } from '../../shared/tools/schemas';
import { awaitApproval, NEEDS_APPROVAL } from './approvals';
import { runSubAgentTool } from './sub-agent-tools';
import { errorResult } from './tool-results';
import { localTools, tools } from '../activities';
import type { ForkAgent } from './agent';
import type { ToolCallOutcome } from '../../shared/metrics';
import { toolCalled } from '../metrics';

/** Histories from before read tools ran as local activities replay on the old path. */
const LOCAL_READ_TOOLS_PATCH = 'read-tools-as-local-activities';

type Decision = { allow: true; writePolicy: WritePolicySpec } | { allow: false; message: string };

/** The memory agent's write policy: inside its pinned memory directory only. */
function memoryPolicy(agent: ForkAgent): WritePolicySpec {
  if (!agent.memory) return { kind: 'none' };
  return { kind: 'within', dir: agent.memory.dir, canonicalDir: agent.memory.canonicalDir };
}

/**
 * The fork's tool filter, decided per call. Bash is offered to read-only and memory agents
 * too: outside the workspace policy the activity runs it only when the shell classifier
 * says the command just reads.
 */
export function decide(agent: ForkAgent, name: string): Decision {
  if (!isBuiltinTool(name)) {
    return { allow: false, message: `Tool "${name}" is not available to this agent. Available tools: ${availableTools(agent).join(', ')}.` };
  }
  const filter = agent.input.toolFilter;
  if (filter === 'allowAll') return { allow: true, writePolicy: { kind: 'workspace' } };
  const memory = typeof filter === 'object' && filter.kind === 'autoMem';
  if (READ_ONLY_TOOLS.includes(name)) return { allow: true, writePolicy: { kind: 'none' } };
  if (name === 'Bash') return { allow: true, writePolicy: memory ? memoryPolicy(agent) : { kind: 'none' } };
  if (memory && (name === 'FileEdit' || name === 'FileWrite')) return { allow: true, writePolicy: memoryPolicy(agent) };
  return {
    allow: false,
    message: memory
      ? `${name} is denied: a memory agent may only read, run read-only shell commands, and edit files inside ${filter.memoryDir}.`
      : `${name} is denied: this agent is read-only. Use ${READ_ONLY_TOOLS.join(', ')} or a read-only Bash command instead.`,
  };
}

function availableTools(agent: ForkAgent): string[] {
  return agent.summary.toolNames.filter((n) => isBuiltinTool(n) && decide(agent, n).allow);
}

function toResult(toolUseId: string, r: ToolCallResult): ToolResultBlock {
  return r.isError ? errorResult(toolUseId, r.content) : { type: 'tool_result', tool_use_id: toolUseId, content: r.content };
}

/** Read-only tools may run side by side; anything that writes runs alone, in order. */
function concurrencySafe(name: string): boolean {
  return isBuiltinTool(name) && READ_ONLY_TOOLS.includes(name);
}

/** Agent and Skill calls of one round start together (siblings of one turn share the cache prefix). */
function batchable(name: string): boolean {
  return concurrencySafe(name) || name === 'Agent' || name === 'Skill';
}

/** The agent's tool access policy (inherit | allow_list | deny_list), on top of its filter. */
function accessDenial(agent: ForkAgent, name: string): string | undefined {
  const policy = agent.input.toolAccess;
  if (!policy || applyToolAccess(policy, [name]).includes(name)) return undefined;
  return `${name} is not allowed by this agent's tool access policy (${policy.mode}${'tools' in policy ? `: ${policy.tools.join(', ')}` : ''}).`;
}

type Attempt = { block: ToolResultBlock; outcome: ToolCallOutcome };

const deny = (toolUseId: string, message: string): Attempt => ({ block: errorResult(toolUseId, message), outcome: 'denied' });

/** One tool call, counted once by outcome (ok / error / denied). */
async function runOne(agent: ForkAgent, use: ToolUseBlock, messageIndex: number): Promise<ToolResultBlock> {
  const { block, outcome } = await attempt(agent, use, messageIndex);
  toolCalled(use.name, outcome);
  return block;
}

async function attempt(agent: ForkAgent, use: ToolUseBlock, messageIndex: number): Promise<Attempt> {
  const limit = agent.input.budget.maxToolCalls;
  if (limit !== undefined && agent.toolUses >= limit) {
    return deny(use.id, `Not run: this agent's budget of ${limit} tool calls is spent. Finish with what you have and write your report.`);
  }
  agent.tally.countToolUse();
  const denied = accessDenial(agent, use.name);
  if (denied) return deny(use.id, denied);
  if (isSubAgentTool(use.name)) {
    const block = await runSubAgentTool(agent, use);
    return { block, outcome: block.is_error ? 'error' : 'ok' };
  }
  const decision = decide(agent, use.name);
  if (!decision.allow) return deny(use.id, decision.message);
  if (agent.input.permissionMode === 'bubble' && NEEDS_APPROVAL.has(use.name)) {
    const approval = await awaitApproval(agent, use);
    if (!approval.approved) return deny(use.id, approval.message);
  }
  const info = workflowInfo();
  const small = utf8Length(canonicalJson(use.input)) <= INLINE_TOOL_INPUT_BYTES;
  const input: ToolCallInput = {
    run: { workflowId: info.workflowId, runId: info.runId },
    agentId: agent.agentId,
    turn: agent.turns,
    toolUseId: use.id,
    name: use.name,
    ...(small ? { input: use.input } : { inputAt: { messageIndex } }),
    workspaceRoot: agent.workspaceRoot,
    writePolicy: decision.writePolicy,
    ...(agent.input.sandbox ? { sandbox: agent.input.sandbox } : {}),
    ...(agent.input.requireSandbox ? { requireSandbox: true } : {}),
  };
  // A worktree lives on one host: say so, so a fork waiting for a lost host shows why.
  const host = agent.worktree?.taskQueue;
  agent.doing(host ? `tool ${use.name} on ${host}, the host of its worktree` : `tool ${use.name}`);
  const summary = `turn ${agent.turns} · ${use.name}${host ? ` · on ${host}` : ''}`;
  const taskQueue = agent.toolQueue ?? info.taskQueue;
  try {
    const result =
      taskQueue === info.taskQueue && concurrencySafe(use.name) && patched(LOCAL_READ_TOOLS_PATCH)
        ? await localTools.runTool.executeWithOptions({ summary }, [input])
        : await tools.runTool.executeWithOptions({ summary, taskQueue }, [input]);
    if (result.touched) agent.workArea.recordWrites(result.touched);
    if (result.containment) agent.workArea.recordContainment(result.containment);
    return { block: toResult(use.id, result), outcome: result.isError ? 'error' : 'ok' };
  } catch (err) {
    if (isCancellation(err)) throw err;
    const cause = err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause.message : String(err);
    return { block: errorResult(use.id, `${use.name} failed and was not retried further: ${cause}`), outcome: 'error' };
  }
}

/** Runs a round of tool calls from the assistant message at `messageIndex`. */
export async function runToolRound(agent: ForkAgent, uses: ToolUseBlock[], messageIndex: number): Promise<ToolResultBlock[]> {
  const results: ToolResultBlock[] = [];
  let batch: ToolUseBlock[] = [];
  const flush = async () => {
    results.push(...(await Promise.all(batch.map((u) => runOne(agent, u, messageIndex)))));
    batch = [];
  };
  for (const use of uses) {
    if (batchable(use.name)) {
      batch.push(use);
      continue;
    }
    await flush();
    results.push(await runOne(agent, use, messageIndex));
  }
  await flush();
  agent.doing(undefined);
  return results;
}
