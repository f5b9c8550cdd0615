/**
 * `forkWorkflow`: one sub-agent fork as a durable workflow. Validates its input (a bad input
 * fails the workflow at once, never a task-retry loop), runs the turn loop inside a
 * cancellation scope (workflow cancel → `killed`, the fork's own limit → `timeout`), and
 * records the terminal state before anything slow happens.
 */
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  ContinueAsNew,
  isCancellation,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import * as otel from '@opentelemetry/api';
import { instrument } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { toMs } from '../../shared/base/duration';
import { FAILURE, forkFailed, invalid } from '../../shared/wire/failures';
import { type ForkInputJson } from '../../shared/wire/fork-input';
import { validateForkInput } from '../../shared/wire/fork-input-validation';
import type { ForkResult, StopReason, TerminalStatus } from '../../shared/wire/status';
import { workflowNow } from '../clock';
import { ForkAgent } from './agent';
import { whileWaiting } from './keep-alive';
import { registerHandlers } from './handlers';
import { auditMemory, closeWorktree, openAgentMemory, openWorktree, pinMemory } from './isolation';
import { registerApprovalHandlers } from './approvals';
import { registerChildHandlers, reportToParent, settleChildren } from './children';
import { resumeShellTasks, stopShellTasks } from './shell-tasks';
import { setUpFork } from './setup';
import { forkRules } from './fork-rules';
import { prefixRefOf } from '../conversation-queries';
import { parseCarriedState, type CarriedState } from '../../shared/wire/carried-state';
import { deliverWakingMessages, runTurns } from './turn-loop';
import { continueWhileIdle, newBuildIsCurrent } from './continuation';
import { registerLedgerHandlers, renewTokenForRetry, rootLedgerFor, usesTreeLedger } from './tree-authority';
import { publicLedger } from '../../shared/tree/tree-ledger-view';
import { publishIdentity, setState } from './visibility';
import { forkEnded, forkStarted } from '../metrics';
import { LiveStream } from './live-stream';
import { prepareTimeTravel, recordLineage, rewindLedgerForRetry } from './time-travel';
import { closeMcpSessions, mcpToolDefinitions, openMcpServers } from './mcp-servers';
import { subagentStart, subagentStop } from './hooks';
import { hooksFor } from '../../shared/tools/hooks';
import { runTurnsUntilStopped } from './stop-hook';
import { registerInterruptHandlers } from './interrupt';
import { resumedByCommand, settleCommands } from './typed-commands';
import { endShares, openShares } from './tree-shares';
import { registerRootCallAnswers } from './root-calls';

/** The state a continuing run takes over, parsed (never cast): bad state fails the run at once. */
function carriedStateOf(raw: unknown): CarriedState | undefined {
  if (raw === undefined) return undefined;
  const parsed = parseCarriedState(raw);
  if (!parsed.ok) throw invalid(FAILURE.invalidCarriedState, 'The state carried from the previous run cannot be read', parsed.issues);
  return parsed.state;
}

/**
 * Before this patch a woken fork called the model once more before reading its message (the
 * request ended with its own reply); histories recorded then replay without the marker.
 */
const WAKE_DELIVERS_MESSAGE_PATCH = 'wake-delivers-message-first';

/**
 * Runs turns; when idle-waiting is enabled, a message arriving in time resumes the fork. An
 * interrupted turn always waits for the next message (or a sub-agent's report): for its
 * idleTimeout, or without a limit when it has none.
 */
async function runUntilDone(agent: ForkAgent, opts: { resumedByCommand?: boolean } = {}): Promise<StopReason> {
  // Sub-agents' scopes hang from this one: a turn's interruption leaves them running (turn-control.ts).
  agent.turnControl.attach(CancellationScope.current());
  // Resumed by a typed command: it runs first, and its output is the turn that wakes the agent.
  if (opts.resumedByCommand) {
    await settleCommands(agent);
    deliverWakingMessages(agent);
  }
  const idleMs = agent.input.idleTimeout === undefined ? 0 : toMs(agent.input.idleTimeout);
  // A run that continued as new while idle (to move to a new build) goes on idling, and does
  // not move again: if the server still says a newer build is current, the next one will.
  let idleLeft = agent.takeResumedIdle();
  const mayMove = idleLeft === undefined;
  for (;;) {
    const reason = idleLeft !== undefined ? 'end_turn' : hooksFor(agent.input.hooks, 'Stop').length > 0 ? await runTurnsUntilStopped(agent) : await runTurns(agent);
    const interrupted = reason === 'interrupted';
    if (!interrupted && (reason !== 'end_turn' || idleMs === 0)) return reason;
    // A teammate whose lead ended the team does not wait for more (team-inbox.ts).
    if (!interrupted && agent.team.shutdownRequested && agent.inbox.length === 0) return reason;
    setState(agent, 'idle');
    const waitMs = idleLeft ?? idleMs;
    idleLeft = undefined;
    const idleSince = workflowNow();
    const woken = () => agent.inbox.length > 0 || agent.team.shutdownRequested || (mayMove && newBuildIsCurrent());
    const resumed = await whileWaiting(agent, () => (waitMs === 0 ? condition(woken).then(() => true) : condition(woken, waitMs)));
    if (!resumed || (agent.team.shutdownRequested && agent.inbox.length === 0)) return reason;
    // Woken on a build that is no longer current: the message (carried in the inbox) is read on the new one.
    if (mayMove && newBuildIsCurrent()) await continueWhileIdle(agent, Math.max(0, waitMs - (workflowNow() - idleSince)));
    setState(agent, 'running');
    if (patched(WAKE_DELIVERS_MESSAGE_PATCH)) {
      // A command typed while it was idle runs first (typed-commands.ts; none: nothing is awaited).
      await settleCommands(agent);
      deliverWakingMessages(agent);
    }
  }
}

function providerMessage(err: unknown): string {
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}

function resultOf(agent: ForkAgent, status: TerminalStatus, stopReason: StopReason): ForkResult {
  return {
    agentId: agent.agentId,
    status,
    text: agent.lastText ?? '',
    usage: agent.usage,
    turns: agent.turns,
    toolUses: agent.toolUses,
    durationMs: workflowNow() - workflowInfo().runStartTime.getTime(),
    stopReason,
    maxTurnsReached: agent.maxTurnsReached,
    forkLabel: agent.input.forkLabel,
    error: agent.error,
    ...(agent.cacheBreak ? { cacheBreak: agent.cacheBreak, cacheBreaks: agent.cache.breaks } : {}),
    ...agent.keepAliveFields(),
    ...(agent.touched.length ? { touched: [...new Set(agent.touched)] } : {}),
    ...treeFields(agent),
    conversation: prefixRefOf(agent),
    budgetUsage: agent.budgetUsage,
    childCounter: agent.children.started,
    model: agent.model,
    cache: agent.cache.carry(),
    ...(agent.ownFrom !== undefined ? { ownMessagesFrom: agent.ownFrom } : {}),
    ...withFailover(agent.failover.carry()),
    ...(agent.opened ? { context: agent.window.status(agent.model) } : {}),
    ...agent.lineage,
  };
}

function withFailover(failover: ForkResult['failover']): Pick<ForkResult, 'failover'> {
  return failover ? { failover } : {};
}

function treeFields(agent: ForkAgent): Pick<ForkResult, 'treeUsage' | 'treeCostUsd' | 'children' | 'ledger'> {
  const children = agent.children.all;
  if (children.length === 0 && !agent.book && agent.children.folded.agents === 0) return {};
  const totals = agent.treeTotals();
  return {
    treeUsage: totals.usage,
    treeCostUsd: totals.costUsd,
    // Without the tree's capability: results travel further than the tree.
    ...(agent.book ? { ledger: publicLedger(agent.book) } : {}),
    children: children.map((c) => ({
      agentId: c.agentId,
      ...(c.name ? { name: c.name } : {}),
      description: c.description,
      state: c.state,
      ...(c.result ? { text: c.result.text } : {}),
      ...(c.result?.error ? { error: c.result.error } : {}),
    })),
  };
}

export async function forkWorkflow(raw: ForkInputJson): Promise<ForkResult> {
  const validated = validateForkInput(raw);
  if (!validated.ok) {
    throw invalid(FAILURE.invalidForkInput, 'Invalid forkWorkflow input', validated.issues);
  }
  const input = validated.value;
  // Handlers first: a status query or a message that arrives while a worktree is being
  // created is answered or queued, never refused for want of a handler.
  const agent = new ForkAgent(input);
  agent.inTreeLedger = usesTreeLedger(agent);
  const carried = carriedStateOf(input.continuation?.state);
  // Continue-as-new keeps the budget; so does a finished agent resumed by a message, unless
  // its caller granted a new one (a v1 state, written before resume kept it, starts a new one).
  if (carried) agent.adopt(carried, { keepBudget: !input.continuation?.message || carried.freshBudget === false });
  if (agent.inTreeLedger && !input.parentAgentId) agent.book ??= rootLedgerFor(agent);
  rewindLedgerForRetry(agent);
  renewTokenForRetry(agent);
  openShares(agent, input.continuation?.message ? undefined : carried?.share);
  agent.live = new LiveStream(agent.agentId, input.stream !== false, carried?.streamOffset, carried?.streamPolledAt, (signal, issues) => agent.rejectSignal(signal, issues), input.skipTranscript);
  registerHandlers(agent);
  registerApprovalHandlers(agent);
  registerChildHandlers(agent);
  registerInterruptHandlers(agent);
  // Background shell tasks carried from the previous run are followed again (none: nothing scheduled).
  resumeShellTasks(agent);
  if (agent.book) registerLedgerHandlers(agent);
  // Below the root of a tree that lends shares: the root's answers (grants, recalls, admissions, routes) come by signal.
  if (agent.shares && !agent.shares.local) registerRootCallAnswers(agent);
  // A worktree exists before the fork's opening is written: the opening names its path.
  if (input.isolation === 'worktree') {
    agent.doing('creating worktree');
    await openWorktree(agent);
    agent.doing(undefined);
  }
  const worktree = agent.worktree;
  // A fork from a point named by `from` learns its reference here; a counterfactual one its parent's context.
  const prepared = await prepareTimeTravel(agent);
  // MCP servers before the opening (their tools join a fresh agent's), after the worktree (a stdio server works in it).
  // (Nothing is awaited without them: an agent with neither runs exactly as before.)
  if (input.mcpServers) await openMcpServers(agent);
  const startContext = !input.continuation && hooksFor(input.hooks, 'SubagentStart').length > 0 ? await subagentStart(agent) : undefined;
  // A named agent's memory joins its system prompt (nothing is awaited without one).
  const memorySection = input.agentMemory && !input.continuation ? await openAgentMemory(agent) : undefined;
  // A finished agent resumed by a typed command sets up without the message: the command is queued (typed-commands.ts).
  const byCommand = resumedByCommand(agent, prepared.input);
  const setup = setUpFork(byCommand ?? prepared.input, { ...(worktree ? { worktree: { parentRoot: worktree.repoRoot, worktreeRoot: worktree.path } } : {}), ...forkRules(prepared.input) }, {
    mcpTools: mcpToolDefinitions(agent.mcp.all),
    ...(startContext ? { startContext } : {}),
    ...(memorySection ? { memorySection } : {}),
    ...(prepared.parentContext ? { parentContext: prepared.parentContext } : {}),
  });
  agent.open(setup);
  recordLineage(agent, prepared.input, setup, carried);
  agent.buildToolTable();
  if (input.timeout !== undefined) agent.startClock(workflowNow(), toMs(input.timeout));
  publishIdentity(agent);
  // A continue-as-new run is the same fork; a finished agent resumed by a message (or retried) runs (and ends) again.
  if (!input.continuation || input.continuation.message || input.retry) forkStarted(input.forkLabel);
  // One span per fork; the model and tool activity spans it schedules nest under it.
  return instrument({
    tracer: otel.trace.getTracer('forkflow'),
    spanName: 'fork.subagent',
    fn: (span) => {
      span.setAttributes(forkSpanAttributes(agent));
      return runFork(agent, span, { resumedByCommand: byCommand !== undefined });
    },
    acceptableErrors: (err) => err instanceof ContinueAsNew,
  });
}

/** The fields of the `fork.subagent` span (the same that appear as search attributes). */
function forkSpanAttributes(agent: ForkAgent): otel.Attributes {
  return {
    fork_run_id: workflowInfo().runId,
    parent_agent: agent.input.parentAgentId ?? '',
    fork_label: agent.input.forkLabel,
    query_source: agent.input.querySource,
    mode: agent.input.mode,
    skip_transcript: agent.input.skipTranscript,
    cache_key_hash: agent.summary.cacheKeyHash,
    agent_id: agent.agentId,
  };
}

async function runFork(agent: ForkAgent, span: otel.Span, opts: { resumedByCommand?: boolean }): Promise<ForkResult> {
  const timeoutMs = agent.deadline === undefined ? undefined : Math.max(1, agent.deadline - workflowNow());
  let status: TerminalStatus;
  let stopReason: StopReason;
  try {
    const work = async () => {
      await pinMemory(agent);
      return runUntilDone(agent, opts);
    };
    stopReason = timeoutMs ? await CancellationScope.withTimeout(timeoutMs, work) : await CancellationScope.cancellable(work);
    if (stopReason === 'max_turns') agent.tally.markMaxTurnsReached();
    status = 'completed';
  } catch (err) {
    if (isCancellation(err)) {
      // The root scope is cancelled only by a workflow cancellation request; otherwise our own timer fired.
      const killed = CancellationScope.current().consideredCancelled;
      status = killed ? 'killed' : 'timeout';
      stopReason = killed ? 'cancelled' : 'timeout';
    } else if (err instanceof ActivityFailure || err instanceof ApplicationFailure) {
      status = 'failed';
      stopReason = 'error';
      agent.fail(providerMessage(err));
    } else {
      throw err; // a bug, not bad input: fail the task so a fixed worker can continue the fork
    }
  }
  agent.doing(undefined);
  // Sub-agents end with their parent (cancelled with it, or already done): their partial results join its result.
  await CancellationScope.nonCancellable(() => settleChildren(agent, { cancelAdopted: status === 'killed' || status === 'timeout' }));
  // Its background shell tasks end with it.
  if (agent.shells.running.length > 0) await CancellationScope.nonCancellable(() => stopShellTasks(agent));
  // What it holds of the tree's budget goes back with its last spend, before its parent hears it ended.
  if (agent.shares) await CancellationScope.nonCancellable(() => endShares(agent));
  // The audit decides the outcome, so it comes first; worktree clean-up waits until the
  // terminal state is recorded, so nobody waiting on the state is held up by it.
  const escapes = await CancellationScope.nonCancellable(() => auditMemory(agent));
  if (escapes.length > 0) {
    status = 'failed';
    stopReason = 'escape_audit_failed';
    agent.fail(`Escape audit failed: ${escapes.map((e) => `${e.path} (${e.reason}: ${e.detail})`).join('; ')}`);
  }
  setState(agent, status);
  forkEnded(agent.input.forkLabel, status, workflowNow() - Date.parse(agent.startedAt));
  const result = resultOf(agent, status, stopReason);
  const worktree = await CancellationScope.nonCancellable(() => closeWorktree(agent));
  if (worktree) result.worktree = worktree;
  span.setAttributes({ 'fork.status': status, 'fork.stop_reason': stopReason, 'fork.turns': agent.turns, 'fork.tool_uses': agent.toolUses });
  if (agent.cacheBreak) span.addEvent('fork.cache_break_detected', { ratio: agent.cacheBreak.ratio, reason: agent.cacheBreak.reason, turn: agent.cacheBreak.turn ?? 0, breaks: agent.cache.breaks });
  // The parent hears the outcome even if it continued as new since it started this child.
  await CancellationScope.nonCancellable(() => reportToParent(agent, result));
  // Its stdio MCP servers stop with it; a service's SubagentStop hooks hear how it ended.
  if (agent.mcp.size > 0) await CancellationScope.nonCancellable(() => closeMcpSessions(agent));
  if (hooksFor(agent.input.hooks, 'SubagentStop').length > 0) await CancellationScope.nonCancellable(() => subagentStop(agent, status, result.text));
  // Subscribers hear the end; their waiting polls return with it instead of holding the run open.
  await CancellationScope.nonCancellable(() => agent.live.done(agent.turns, status, stopReason, result.error));
  // Let in-flight handlers finish before the run closes (nothing is lost at the edge).
  await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
  if (status === 'failed') {
    throw forkFailed(result);
  }
  return result;
}
