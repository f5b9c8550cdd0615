/**
 * Sub-agents as child workflows. Each child runs in its own cancellation scope inside the
 * parent's (so cancelling the parent cancels the subtree, TaskStop cancels one child, and a
 * child's failure never reaches the parent as anything but data). A child's outcome reaches
 * the parent exactly once: as the Agent tool's result (sync), or as a task notification in
 * the inbox (background) — unless TaskOutput or TaskStop took it first. Everything here is
 * derived from history, so crashes and replays deliver the same notifications.
 */
import {
  CancellationScope,
  ChildWorkflowFailure,
  ParentClosePolicy,
  sleep,
  startChild,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { AgentToolInput } from '../../shared/agent-tools';
import { totalInputTokens, ZERO_USAGE } from '../../shared/anthropic';
import { forkResultOf } from '../../shared/failures';
import type { ForkInputJson } from '../../shared/fork-input';
import { firstLine } from '../../shared/text';
import { renderTaskNotification } from '../../shared/notifications';
import { SA } from '../../shared/search-attributes';
import type { ForkResult } from '../../shared/status';
import type { ChildOutcome, ChildRecord } from '../../shared/tree-input';
import { isoNow } from '../clock';
import type { ForkAgent } from './agent';
import type { ForkWorkflowFn } from './signature';
import { childEnded } from './tree-authority';

/** Result texts kept on record are capped: the record crosses continue-as-new. */
const KEPT_TEXT = 20_000;

function outcomeFromResult(r: ForkResult): ChildOutcome {
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
  agent.inbox.enqueue({
    priority: 'later',
    kind: 'notification',
    taskId: record.agentId,
    text: renderTaskNotification({
      taskId: record.agentId,
      name: record.name,
      status: o.status,
      summary: `${record.description}: ${o.status}${o.error ? ` (${firstLine(o.error, 100)})` : ''}`,
      ...(o.status === 'failed' ? { error: o.error ?? 'failed' } : { result: o.text }),
      totalTokens: totalInputTokens(o.treeUsage) + o.treeUsage.outputTokens,
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
  const scope = new CancellationScope();
  const handle = await scope.run(() =>
    startChild<ForkWorkflowFn>('forkWorkflow', {
      workflowId: args.id,
      // The agent id travels in the input too, so the child's own ids never depend on where its history runs (replay fixtures).
      args: [agent.inTreeLedger ? { ...args.input, overrides: { ...args.input.overrides, agentId: args.id } } : args.input],
      taskQueue: args.taskQueue,
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      staticSummary: `${args.agentInput.description}: ${firstLine(args.agentInput.prompt, 100)}`,
      staticDetails: `**Directive**\n\n${args.agentInput.prompt}`,
      typedSearchAttributes: [
        { key: SA.agentId, value: args.id },
        { key: SA.parentId, value: agent.agentId },
        { key: SA.rootId, value: agent.rootAgentId },
        { key: SA.label, value: args.agentInput.description },
        { key: SA.state, value: 'running' },
      ],
    }),
  );
  // Settled first (the outcome is the parent's), then the root hears it ended (tree ledger).
  const done = handle
    .result()
    .then(
      (r) => settle(agent, record, outcomeFromResult(r)),
      (err: unknown) => settle(agent, record, outcomeFromFailure(err)),
    )
    .then(() => childEnded(agent, args.id));
  agent.children.attach(args.id, { scope, done });
  return { record, handle };
}

/**
 * Waits for a sync child, unless it is still running after `backgroundAfterMs`: then it
 * moves to the background (its outcome will arrive as a notification) and `undefined` is
 * returned.
 */
export async function awaitSyncChild(agent: ForkAgent, record: ChildRecord, backgroundAfterMs: number): Promise<ChildOutcome | undefined> {
  const runtime = agent.children.runtime(record.agentId);
  if (runtime) {
    const timer = new CancellationScope();
    const moved = await Promise.race([runtime.done.then(() => false), timer.run(() => sleep(backgroundAfterMs)).then(() => true)]);
    timer.cancel();
    if (moved && record.state === 'running') {
      agent.children.moveToBackground(record);
      return undefined;
    }
  }
  return record.result;
}

/** Marks a child's outcome as seen, dropping a notification that is still queued for it. */
export function markSeen(agent: ForkAgent, record: ChildRecord): void {
  agent.children.markSeen(record);
  agent.inbox.dropNotificationsFor(record.agentId);
}

/** Cancels one running child and waits for its partial result. */
export async function stopChild(agent: ForkAgent, record: ChildRecord): Promise<void> {
  const runtime = agent.children.runtime(record.agentId);
  if (!runtime) return;
  runtime.scope.cancel();
  await runtime.done;
}

/** Waits for every running child to end (after the parent itself was cancelled or finished). */
export async function settleChildren(agent: ForkAgent): Promise<void> {
  await Promise.all(agent.children.liveRuntimes.map((r) => r.done));
}
