/**
 * One tool round: every tool_use of an assistant turn becomes a tool_result, in order.
 * Each call is looked up in the agent's tool table (src/shared/tools/table.ts) and decided
 * by the permission model (src/shared/tools/permissions.ts): pure, no activity needed to say no.
 * Allowed calls run where the table says: built-in tools as activities on the workspace's
 * task queue, a service's routed tools on its queue (service-call.ts), MCP tools on the
 * worker holding the server's session (mcp-call.ts), sub-agent tools in the workflow itself.
 * A service's PreToolUse and PostToolUse hooks (hooks.ts) wrap the built-in, routed and MCP
 * calls. Tool failures become `is_error` results the model can act on; only cancellation
 * propagates.
 */
import { ActivityFailure, ApplicationFailure, isCancellation, log, patched, workflowInfo } from '@temporalio/workflow';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages-api/anthropic';
import { INLINE_TOOL_INPUT_BYTES, type ToolCallInput, type ToolCallResult } from '../../shared/wire/activity-io';
import { canonicalJson, utf8Length } from '../../shared/base/hash';
import { applyToolAccess } from '../../shared/tools/agent-access';
import { decideCall, type CallDecision, type CallPolicy } from '../../shared/tools/permissions';
import type { ToolTraits } from '../../shared/tools/table';
import { awaitApproval } from './approvals';
import { hooksFor } from '../../shared/tools/hooks';
import { postToolUse, preToolUse } from './hooks';
import { runMcpTool } from './mcp-call';
import { runServiceTool } from './service-call';
import { runSubAgentTool } from './sub-agent-tools';
import { listAgentsOffered } from './agent-list';
import { LIST_AGENTS } from '../../shared/tree/agent-tools';
import { ANSWER_APPROVAL } from '../../shared/tree/parent-approvals';
import { readOwnOutput, startBackgroundShell, wantsBackground } from './shell-tasks';
import { userMemoryOf } from './user-memory';
import { readAgentOutput, readsAgentOutput } from './agent-output';
import { backgroundOff, backgroundRefusal } from './background-switch';
import { askLead, needsPlanApproval } from './team-plan';
import { errorResult } from './tool-results';
import { guardCall } from './interrupt';
import { localTools, tools } from '../activities';
import type { ForkAgent } from './agent';
import type { ToolCallOutcome } from '../../shared/wire/metrics';
import { toolCalled } from '../metrics';

/** Histories from before read tools ran as local activities replay on the old path. */
const LOCAL_READ_TOOLS_PATCH = 'read-tools-as-local-activities';

/** What the permission model reads off the agent (`tool`: the call being decided, if any). */
function policyOf(agent: ForkAgent, tool?: ToolTraits): CallPolicy {
  const mode = agent.input.permissionMode;
  const unasked = mode === 'bubble' && tool?.effect === 'shell';
  const rules = agent.input.permissionRules?.allow;
  return {
    filter: agent.input.toolFilter,
    mode,
    ...(agent.memory ? { memory: agent.memory } : {}),
    ...(unasked ? { sandboxedShellAsksNothing: true } : {}),
    ...(agent.defaultAsks ? { defaultAsks: true } : {}),
    ...(rules ? { allowRules: rules } : {}),
  };
}

/** The tools this agent could call now, for a refusal's message. */
function availableTools(agent: ForkAgent): string[] {
  return agent.summary.toolNames.filter((n) => {
    const tool = agent.toolTable.lookup(n);
    return tool !== undefined && tool.home.kind !== 'subagent' && decideCall(policyOf(agent), tool).allow;
  });
}

function toResult(toolUseId: string, r: ToolCallResult): ToolResultBlock {
  return r.isError ? errorResult(toolUseId, r.content) : { type: 'tool_result', tool_use_id: toolUseId, content: r.blocks ?? r.content };
}

/** Read-only tools may run side by side; anything that writes runs alone, in order. */
function concurrencySafe(tool: ToolTraits | undefined): boolean {
  return tool?.readOnly === true;
}

/** Agent and Skill calls of one round start together (siblings of one turn share the cache prefix). */
function batchable(agent: ForkAgent, name: string): boolean {
  return concurrencySafe(agent.toolTable.lookup(name)) || name === 'Agent' || name === 'Skill';
}

/** The agent's tool access policy (inherit | allow_list | deny_list), on top of its filter. */
function accessDenial(agent: ForkAgent, name: string): string | undefined {
  const policy = agent.input.toolAccess;
  if (!policy || applyToolAccess(policy, [name]).includes(name)) return undefined;
  return `${name} is not allowed by this agent's tool access policy (${policy.mode}${'tools' in policy ? `: ${policy.tools.join(', ')}` : ''}).`;
}

type Attempt = { block: ToolResultBlock; outcome: ToolCallOutcome };

const deny = (toolUseId: string, message: string): Attempt => ({ block: errorResult(toolUseId, message), outcome: 'denied' });
const blockAttempt = (block: ToolResultBlock): Attempt => ({ block, outcome: block.is_error ? 'error' : 'ok' });

/**
 * A call the agent's filter (or its tool access policy, or its mode) denies: seed 000's
 * `fork.tool_filter` event at DEBUG (replay-aware, no command), then the denial the model reads.
 */
function filtered(agent: ForkAgent, use: ToolUseBlock, filter: string, message: string): Attempt {
  log.debug('fork.tool_filter', { agentId: agent.agentId, turn: agent.turns, tool: use.name, filter, mode: agent.input.permissionMode, reason: message });
  return deny(use.id, message);
}

/** One tool call, counted once by outcome (ok / error / denied); `lane` is its place in the round (1-based). */
async function runOne(agent: ForkAgent, use: ToolUseBlock, messageIndex: number, lane: number): Promise<ToolResultBlock> {
  const { block, outcome } = await attempt(agent, use, messageIndex, lane);
  toolCalled(use.name, outcome);
  return block;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

async function attempt(agent: ForkAgent, use: ToolUseBlock, messageIndex: number, lane: number): Promise<Attempt> {
  const limit = agent.input.budget.maxToolCalls;
  if (limit !== undefined && agent.toolUses >= limit) {
    return deny(use.id, `Not run: this agent's budget of ${limit} tool calls is spent. Finish with what you have and write your report.`);
  }
  agent.tally.countToolUse();
  const denied = accessDenial(agent, use.name);
  if (denied) return filtered(agent, use, 'toolAccess', denied);
  const tool = agent.toolTable.lookup(use.name);
  // ListAgents and AnswerApproval are sub-agent tools only where they were offered; elsewhere they are as unknown as they always were.
  if (tool?.home.kind === 'subagent' && ((use.name !== LIST_AGENTS && use.name !== ANSWER_APPROVAL) || listAgentsOffered(agent, use.name))) {
    const block = await runSubAgentTool(agent, use);
    return { block, outcome: block.is_error ? 'error' : 'ok' };
  }
  if (!tool || tool.home.kind === 'subagent') return deny(use.id, `Tool "${use.name}" is not available to this agent. Available tools: ${availableTools(agent).join(', ')}.`);
  const decision = decideCall(policyOf(agent, tool), tool);
  if (!decision.allow) return filtered(agent, use, typeof agent.input.toolFilter === 'string' ? agent.input.toolFilter : agent.input.toolFilter.kind, decision.message);
  // A teammate in plan mode asks its lead before its first change (team-plan.ts).
  const unplanned = needsPlanApproval(agent, tool) ? await askLead(agent, use) : undefined;
  if (unplanned) return deny(use.id, unplanned);
  const hooks = agent.input.hooks;
  const pre = hooksFor(hooks, 'PreToolUse', use.name).length > 0;
  const post = hooksFor(hooks, 'PostToolUse', use.name).length > 0;
  // A service's tools and every hook take the input as a JSON object (the contract's shape).
  if ((tool.home.kind !== 'builtin' || pre || post) && !isObject(use.input)) return deny(use.id, `${use.name} was not run: its input must be a JSON object.`);
  let input = use.input as Record<string, unknown>;
  if (pre) {
    const verdict = await preToolUse(agent, use, input);
    if ('deny' in verdict) return deny(use.id, verdict.deny);
    input = verdict.input;
  }
  const rewritten = input !== use.input;
  if (decision.approval) {
    const approval = await awaitApproval(agent, rewritten ? { ...use, input } : use);
    if (!approval.approved) return deny(use.id, approval.message);
  }
  let done: Attempt;
  const home = tool.home;
  if (home.kind === 'service') done = await runServiceTool(agent, use, input, home.route);
  else if (home.kind === 'mcp') done = await runMcpTool(agent, use, input, { ...tool, home }, lane);
  else done = await runBuiltin(agent, use, messageIndex, tool, decision, rewritten ? input : undefined);
  if (post) done = { ...done, block: await postToolUse(agent, use, input, done.block) };
  return done;
}

/** A built-in tool as an activity on the workspace's queue (short reads as local activities); `input`: a hook's rewrite. */
/**
 * The activity's sandbox settings: the fork's allowed read paths and, when it names hosts,
 * its network allowance. Absent fields stay absent (runs recorded before replay as recorded).
 */
function sandboxOf(sandbox: ForkAgent['input']['sandbox']): Pick<ToolCallInput, 'sandbox'> {
  const network = sandbox?.network ? { network: sandbox.network } : {};
  const readPaths = sandbox?.readPaths ? { readPaths: sandbox.readPaths } : {};
  return sandbox?.readPaths || sandbox?.network ? { sandbox: { ...readPaths, ...network } } : {};
}

async function runBuiltin(agent: ForkAgent, use: ToolUseBlock, messageIndex: number, tool: ToolTraits, decision: Extract<CallDecision, { allow: true }>, rewrite?: Record<string, unknown>): Promise<Attempt> {
  const info = workflowInfo();
  const given = rewrite ?? use.input;
  const small = utf8Length(canonicalJson(given)) <= INLINE_TOOL_INPUT_BYTES;
  const input: ToolCallInput = {
    run: { workflowId: info.workflowId, runId: info.runId },
    agentId: agent.agentId,
    turn: agent.turns,
    toolUseId: use.id,
    name: use.name,
    // A rewritten input is not in the conversation: it always travels inline.
    ...(small || rewrite ? { input: given } : { inputAt: { messageIndex } }),
    workspaceRoot: agent.workspaceRoot,
    writePolicy: decision.writePolicy,
    // A memory: user agent's memory, which its tools may reach (absent for every other agent).
    ...userMemoryOf(agent),
    ...sandboxOf(agent.input.sandbox),
    ...(agent.input.requireSandbox || decision.sandbox === 'required' ? { requireSandbox: true } : {}),
    ...(decision.sandbox === 'bypass' ? { unsandboxed: true } : {}),
    ...(agent.worktree ? { worktreeRepo: agent.worktree.repoRoot } : {}),
    ...(agent.input.sandbox?.confinedTo !== undefined ? { confinedTo: agent.input.sandbox.confinedTo } : {}),
    // Absent unless its operator allowed a program back: other runs' inputs stay as they were.
    ...(agent.input.shellPrograms ? { shellPrograms: agent.input.shellPrograms } : {}),
  };
  // A worktree lives on one host: say so, so a fork waiting for a lost host shows why.
  const host = agent.worktree?.taskQueue;
  agent.doing(host ? `tool ${use.name} on ${host}, the host of its worktree` : `tool ${use.name}`);
  const summary = `turn ${agent.turns} · ${use.name}${host ? ` · on ${host}` : ''}`;
  const taskQueue = agent.toolQueue ?? info.taskQueue;
  // Background shell tasks (shell-tasks.ts): started where this call would have run, with the same input.
  // A sub-agent's output file (agent-output.ts) is answered here, never read from disk.
  if (use.name === 'Read' && readsAgentOutput(given)) return blockAttempt(await readAgentOutput(agent, use, given));
  if (use.name === 'Bash' && wantsBackground(given)) {
    if (backgroundOff(agent)) return deny(use.id, backgroundRefusal('A Bash command with run_in_background'));
    return blockAttempt(await startBackgroundShell(agent, use, given, input, taskQueue));
  }
  if (use.name === 'Read' && agent.shells.started > 0) {
    const own = await readOwnOutput(agent, use);
    if (own) return blockAttempt(own);
  }
  try {
    const result =
      taskQueue === info.taskQueue && concurrencySafe(tool) && patched(LOCAL_READ_TOOLS_PATCH)
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
  const lane = (use: ToolUseBlock) => uses.indexOf(use) + 1;
  // An interrupted turn answers every call: not run, or stopped (interrupt.ts).
  const one = (use: ToolUseBlock) => guardCall(agent, use, () => runOne(agent, use, messageIndex, lane(use)));
  const flush = async () => {
    results.push(...(await Promise.all(batch.map(one))));
    batch = [];
  };
  for (const use of uses) {
    if (batchable(agent, use.name)) {
      batch.push(use);
      continue;
    }
    await flush();
    results.push(await one(use));
  }
  await flush();
  agent.doing(undefined);
  return results;
}
