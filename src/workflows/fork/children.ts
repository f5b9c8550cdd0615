/**
 * Sub-agents as child workflows. Each child runs in its own cancellation scope inside the
 * parent's (so cancelling the parent cancels the subtree, TaskStop cancels one child, and a
 * child's failure never reaches the parent as anything but data). A child's outcome reaches
 * the parent exactly once: as the Agent tool's result (sync), or as a task notification in
 * the inbox (background) — unless TaskOutput or TaskStop took it first. Everything here is
 * derived from history, so crashes and replays deliver the same notifications.
 *
 * Children started under CHILDREN_OUTLIVE_RUNS_PATCH outlive the run that started them
 * (ParentClosePolicy.ABANDON), so their parent may continue as new while they work. Each
 * reports its outcome to its parent's workflow id as it ends (`childOutcome`, sent by
 * fork-workflow.ts), which reaches the parent's current run; the run that started it also sees
 * its result. The first report settles the record, the other is ignored. A later run treats
 * the carried running records as adopted: it waits for their report, and stops or cancels them
 * by workflow id.
 */
import { colorMemo } from '../../shared/agents/agent-color';
import {
  CancellationScope,
  ChildWorkflowFailure,
  condition,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  patched,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { AgentToolInput } from '../../shared/tree/agent-tools';
import { totalTokens, ZERO_USAGE } from '../../shared/messages-api/anthropic';
import { forkResultOf } from '../../shared/wire/failures';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import { childOutcomeReportSchema, childOutcomeSignal } from '../../shared/wire/messages';
import type { ForkInputJson } from '../../shared/wire/fork-input';
import { firstLine } from '../../shared/base/text';
import { renderTaskNotification } from '../../shared/tree/notifications';
import { COMMAND_USE_PREFIX, commandPrompt } from '../../shared/agents/typed-command';
import { SA } from '../../shared/wire/search-attributes';
import { throughStartGate } from './start-gate';
import type { ForkResult } from '../../shared/wire/status';
import type { ChildOutcome, ChildRecord } from '../../shared/tree/tree-input';
import { isoNow } from '../clock';
import type { ForkAgent } from './agent';
import type { ForkWorkflowFn } from './signature';
import { childEnded, dropSignal, treeTokenOf, withTreeToken } from './tree-authority';
import { undecodableReason } from '../../shared/wire/undecodable';
import { outputFileOf } from './agent-output';

/** Result texts kept on record are capped: the record crosses continue-as-new. */
const KEPT_TEXT = 20_000;

export function outcomeFromResult(r: ForkResult): ChildOutcome {
  return {
    status: r.status,
    text: r.text.length > KEPT_TEXT ? `${r.text.slice(0, KEPT_TEXT)}\n[… ${r.text.length - KEPT_TEXT} characters not kept]` : r.text,
    ...(r.error ? { error: r.error } : {}),
    usage: r.usage,
    treeUsage: r.treeUsage ?? r.usage,
    treeCostUsd: r.treeCostUsd ?? 0,
    toolUses: r.toolUses,
    durationMs: r.durationMs,
    ...(r.worktree?.kind === 'kept' ? { worktree: { path: r.worktree.path, branch: r.worktree.branch } } : {}),
    ...(r.conversation ? { conversation: r.conversation } : {}),
    turns: r.turns,
    ...(r.budgetUsage ? { budgetUsage: r.budgetUsage } : {}),
    ...(r.childCounter !== undefined ? { childCounter: r.childCounter } : {}),
    ...(r.model ? { model: r.model } : {}),
    ...(r.cache ? { cache: r.cache } : {}),
    ...(r.ownMessagesFrom !== undefined ? { ownFrom: r.ownMessagesFrom } : {}),
  };
}

/** A child that failed (ForkFailed carries its result) or ended without a result (terminated). */
function outcomeFromFailure(err: unknown): ChildOutcome {
  const cause = err instanceof ChildWorkflowFailure ? err.cause : undefined;
  const failed = forkResultOf(cause);
  if (failed) return outcomeFromResult(failed);
  const message = cause?.message ?? (err instanceof Error ? err.message : String(err));
  return { status: 'killed', text: '', error: message, usage: ZERO_USAGE, treeUsage: ZERO_USAGE, treeCostUsd: 0, toolUses: 0, durationMs: 0 };
}

function notify(agent: ForkAgent, record: ChildRecord): void {
  const o = record.result!;
  // A typed command's child (typed-commands.ts) comes back as a prompt of its own, as the seed's assistant mode re-queues it.
  if (record.toolUseId.startsWith(COMMAND_USE_PREFIX)) return void agent.inbox.enqueue(commandPrompt(record));
  agent.inbox.enqueue({
    priority: 'later',
    kind: 'notification',
    taskId: record.agentId,
    text: renderTaskNotification({
      taskId: record.agentId,
      // Seed 001's notification: the tool call that started it, and `Agent "<description>" <status>`.
      toolUseId: record.toolUseId,
      ...outputFileOf(record),
      name: record.name,
      status: o.status,
      summary: `Agent "${record.description}" ${o.status}${o.error ? ` (${firstLine(o.error, 100)})` : ''}`,
      ...(o.status === 'failed' ? { error: o.error ?? 'failed' } : { result: o.text }),
      totalTokens: totalTokens(o.treeUsage),
      toolUses: o.toolUses,
      durationMs: o.durationMs,
      ...(o.worktree ? { worktree: o.worktree } : {}),
    }),
  });
}

function settle(agent: ForkAgent, record: ChildRecord, outcome: ChildOutcome): void {
  const unseen = agent.children.settle(record, outcome, agent.input.subAgents?.keepCompleted ?? 256);
  if (unseen) notify(agent, record);
}

/**
 * Before this patch children were started with ParentClosePolicy.REQUEST_CANCEL and their
 * outcome came only from their result; histories recorded then replay without the marker.
 */
export const CHILDREN_OUTLIVE_RUNS_PATCH = 'forkflow-children-outlive-runs';

/** Whether a running child survives this run's continue-as-new: started outliving it, or adopted from an earlier run. */
export function canOutliveRun(agent: ForkAgent, record: ChildRecord): boolean {
  return agent.children.runtime(record.agentId)?.outlives ?? true;
}

/** Records an outliving (or adopted) child's outcome once, whichever report comes first; the root hears it ended. */
function endChild(agent: ForkAgent, agentId: string, outcome: ChildOutcome): void {
  const record = agent.children.running.find((c) => c.agentId === agentId);
  if (!record || !canOutliveRun(agent, record)) return;
  settle(agent, record, outcome);
  void childEnded(agent, agentId);
}

/**
 * Hears children report their outcome (registered with the other handlers, before any await).
 * A report must carry the tree's capability (in trees that have one): a report from outside the
 * tree is dropped with its reason, and the child's own report or result settles it.
 */
export function registerChildHandlers(agent: ForkAgent): void {
  setHandler(childOutcomeSignal, (raw: unknown) => {
    const undecodable = undecodableReason(raw);
    if (undecodable) return dropSignal(agent, 'childOutcome', [undecodable]);
    const parsed = childOutcomeReportSchema.safeParse(raw);
    if (!parsed.success) return dropSignal(agent, 'childOutcome', describeIssues(parsed.error));
    const token = treeTokenOf(agent);
    if (token !== undefined && parsed.data.token !== token) {
      return dropSignal(agent, 'childOutcome', [`a report for ${parsed.data.agentId.slice(0, 200)} without the capability of tree ${agent.rootAgentId}: only the child itself reports its outcome`]);
    }
    endChild(agent, parsed.data.agentId, parsed.data.outcome);
  });
}

/** Before this patch a child did not report its outcome by signal (its parent read its result). */
export const CHILD_REPORTS_OUTCOME_PATCH = 'forkflow-child-reports-outcome';

/**
 * Reports this agent's outcome to its parent agent (a child of a forkflow tree only). Never
 * fails the caller: a parent that is gone has nobody left to tell.
 */
export async function reportToParent(agent: ForkAgent, result: ForkResult): Promise<void> {
  const parent = workflowInfo().parent;
  if (!parent || !agent.input.parentAgentId || !patched(CHILD_REPORTS_OUTCOME_PATCH)) return;
  try {
    await getExternalWorkflowHandle(parent.workflowId).signal(childOutcomeSignal, { agentId: workflowInfo().workflowId, outcome: outcomeFromResult(result), ...withTreeToken(agent) });
  } catch {
    // The parent closed (finished, or terminated): it no longer waits for this report.
  }
}

/** `{ treeToken }` for a child's input, in a tree that has a capability. */
function childToken(agent: ForkAgent): { treeToken?: string } {
  const token = treeTokenOf(agent);
  return token ? { treeToken: token } : {};
}

export interface StartedChild {
  record: ChildRecord;
  handle: ChildWorkflowHandle<ForkWorkflowFn>;
}

/** Starts a child workflow in its own cancellation scope and wires its outcome to the record. */
export async function startChildAgent(
  agent: ForkAgent,
  args: { id: string; input: ForkInputJson; agentInput: AgentToolInput; kind: 'fork' | 'spawn'; subagentType?: string; toolUseId: string; mode: ChildRecord['mode']; taskQueue: string; resumed?: boolean },
): Promise<StartedChild> {
  const record: ChildRecord = {
    agentId: args.id,
    ...(args.agentInput.name ? { name: args.agentInput.name } : {}),
    kind: args.kind,
    ...((args.subagentType ?? args.agentInput.subagent_type) ? { subagentType: args.subagentType ?? args.agentInput.subagent_type } : {}),
    description: args.agentInput.description,
    agentInput: args.agentInput,
    toolUseId: args.toolUseId,
    mode: args.mode,
    taskQueue: args.taskQueue,
    state: 'running',
    // A sync child's outcome is the Agent tool's result, so no notification unless it moves to the background.
    notified: args.mode === 'sync',
    startedAt: isoNow(),
    ...(agent.inTreeLedger && args.input.budget?.maxTokens !== undefined ? { budget: args.input.budget.maxTokens } : {}),
  };
  agent.children.add(record, args.resumed === true);
  const outlives = patched(CHILDREN_OUTLIVE_RUNS_PATCH);
  // Its scope hangs from the agent's, not from the turn that started it: interrupting the turn
  // (turn-control.ts) leaves it running; cancelling the agent still cancels it.
  const under = agent.turnControl.children;
  const scope = new CancellationScope({ cancellable: true, ...(under ? { parent: under } : {}) });
  const childArgs = agent.inTreeLedger ? { ...args.input, overrides: { ...args.input.overrides, agentId: args.id }, ...childToken(agent) } : args.input;
  // Its input, and its prompt twice more (summary and details): what its start command carries.
  const bytes = JSON.stringify(childArgs).length + 2 * args.agentInput.prompt.length;
  const handle = await throughStartGate(agent, bytes, () =>
    scope.run(() =>
    startChild<ForkWorkflowFn>('forkWorkflow', {
      workflowId: args.id,
      // The agent id travels in the input too, so the child's own ids never depend on where its history runs (replay fixtures).
      // So does the tree's capability, which its reports and ledger requests carry.
      args: [childArgs],
      taskQueue: args.taskQueue,
      // Outliving children end with the agent by its own cancellation cascade (settleChildren), not by policy.
      parentClosePolicy: outlives ? ParentClosePolicy.ABANDON : ParentClosePolicy.REQUEST_CANCEL,
      staticSummary: `${args.agentInput.description}: ${firstLine(args.agentInput.prompt, 100)}`,
      staticDetails: `**Directive**\n\n${args.agentInput.prompt}`,
      // Its colour, for listings (only when it has one: other starts are unchanged).
      ...(args.input.color ? { memo: colorMemo(args.input) } : {}),
      typedSearchAttributes: [
        { key: SA.agentId, value: args.id },
        { key: SA.parentId, value: agent.agentId },
        { key: SA.rootId, value: agent.rootAgentId },
        { key: SA.label, value: args.agentInput.description },
        { key: SA.state, value: 'running' },
      ],
    }),
    ),
  );
  if (outlives) {
    // Settled by its report or its result, whichever comes first; `done` once it closed.
    const done = handle.result().then(
      (r) => endChild(agent, args.id, outcomeFromResult(r)),
      (err: unknown) => endChild(agent, args.id, outcomeFromFailure(err)),
    );
    agent.children.attach(args.id, { scope, done, outlives });
    return { record, handle };
  }
  // Settled first (the outcome is the parent's), then the root hears it ended (tree ledger).
  const done = handle
    .result()
    .then(
      (r) => settle(agent, record, outcomeFromResult(r)),
      (err: unknown) => settle(agent, record, outcomeFromFailure(err)),
    )
    .then(() => childEnded(agent, args.id));
  agent.children.attach(args.id, { scope, done, outlives });
  return { record, handle };
}

/** How a sync child's wait ended: its outcome, or it moved to the background (after the time limit, or asked to `by` someone). */
export type SyncWait = { outcome?: ChildOutcome } | { moved: { by?: string } };

/**
 * Waits for a sync child, unless it is still running after `backgroundAfterMs` or someone asks
 * to move it (the `backgroundChild` update): then it moves to the background (its outcome will
 * arrive as a notification). A sync child is part of its caller's turn: interrupting the turn
 * stops it, and its partial outcome is the call's result.
 */
export async function awaitSyncChild(agent: ForkAgent, record: ChildRecord, backgroundAfterMs: number | undefined): Promise<SyncWait> {
  const runtime = agent.children.runtime(record.agentId);
  if (runtime) {
    const control = agent.turnControl;
    const asked = () => control.backgroundRequestedBy(record.agentId) !== undefined;
    const timer = new CancellationScope();
    control.waiting(record.agentId, true);
    let moved: false | { by?: string };
    try {
      moved = await Promise.race([
        runtime.done.then(() => false as const),
        // `undefined`: no time limit (background tasks disabled); only an explicit request moves it.
        timer.run(() => Promise.race([...(backgroundAfterMs === undefined ? [] : [sleep(backgroundAfterMs).then(() => ({}))]), condition(asked).then(() => ({ by: control.backgroundRequestedBy(record.agentId)! }))])),
      ]);
    } catch (err) {
      if (!control.stoppedBy(err)) throw err;
      await CancellationScope.nonCancellable(() => stopChild(agent, record));
      return { outcome: record.result };
    } finally {
      timer.cancel();
      control.waiting(record.agentId, false);
    }
    if (moved && record.state === 'running') {
      agent.children.moveToBackground(record);
      return { moved };
    }
  }
  return { outcome: record.result };
}

/** Marks a child's outcome as seen, dropping a notification that is still queued for it. */
export function markSeen(agent: ForkAgent, record: ChildRecord): void {
  agent.children.markSeen(record);
  agent.inbox.dropNotificationsFor(record.agentId);
}

/**
 * Asks an adopted child (started by an earlier run) to cancel, by workflow id. A child that is
 * already closed without having reported (terminated, or timed out by the server: a child that
 * ends on its own reports before it closes, so its report is already in) is settled `killed`.
 */
async function cancelAdopted(agent: ForkAgent, record: ChildRecord): Promise<void> {
  try {
    await getExternalWorkflowHandle(record.agentId).cancel();
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    endChild(agent, record.agentId, { status: 'killed', text: '', error: `ended without reporting its outcome (${why})`, usage: ZERO_USAGE, treeUsage: ZERO_USAGE, treeCostUsd: 0, toolUses: 0, durationMs: 0 });
  }
}

/** Cancels one running child and waits for its partial result. */
export async function stopChild(agent: ForkAgent, record: ChildRecord): Promise<void> {
  const runtime = agent.children.runtime(record.agentId);
  if (!runtime) {
    await cancelAdopted(agent, record);
    await condition(() => record.state !== 'running');
    return;
  }
  runtime.scope.cancel();
  await runtime.done;
}

/**
 * Waits for every running child to end (after the parent itself was cancelled or finished).
 * `cancelAdopted`: the parent was cancelled or timed out — children it started are cancelled
 * with its scope, adopted ones are asked here.
 */
export async function settleChildren(agent: ForkAgent, opts: { cancelAdopted: boolean }): Promise<void> {
  const adopted = agent.children.adopted;
  if (opts.cancelAdopted && adopted.length > 0) await Promise.all(adopted.map((c) => cancelAdopted(agent, c)));
  // Children this run started are waited for until they close (as before the patch); adopted ones until they report.
  await Promise.all([...agent.children.liveRuntimes.map((r) => r.done), ...agent.children.unclosed, ...adopted.map((c) => condition(() => c.state !== 'running'))]);
}
