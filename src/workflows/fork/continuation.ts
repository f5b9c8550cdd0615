/**
 * Long-lived agents continue as new before their history reaches Temporal's limits, at a turn
 * boundary: when the server suggests it, when this run's history passes forkflow's own size or
 * event thresholds, or after a number of turns in one run. Background children may still run:
 * started under CHILDREN_OUTLIVE_RUNS_PATCH they outlive the run (ParentClosePolicy.ABANDON)
 * and report their outcome to the agent's workflow id, which the next run hears (children.ts).
 * The new run references this run's conversation (zero-copy) and carries the agent's counters,
 * inbox and children, so nothing is lost or counted twice.
 *
 * Pending approvals never block: they are awaited inside a tool round, so none is pending at a
 * turn boundary, and a wait adds only the decision and its timer to history.
 */
import { allHandlersFinished, condition, deprecatePatch, makeContinueAsNewFunc, patched, workflowInfo } from '@temporalio/workflow';
import type { ForkInputJson } from '../../shared/wire/fork-input';
import { prefixRefOf } from '../conversation-queries';
import { conversation } from '../activities';
import { EMPTY_DIGEST } from '../../shared/base/hash';
import type { HeldConversation } from '../../shared/tree/tree-input';
import type { ForkAgent } from './agent';
import { canOutliveRun } from './children';
import type { ForkWorkflowFn } from './signature';
import { sharesSettled } from './tree-shares';

/**
 * Before this patch a run continued only on the server's suggestion and only with no child
 * running; histories recorded then replay without the marker (it is recorded only where the
 * new rule continues and the old one would not have).
 */
export const CONTINUE_AT_ANY_BOUNDARY_PATCH = 'forkflow-continue-at-any-boundary';

/** Defaults of `continueAsNew` (ForkInput): well under the server's warnings (10 MiB, 10,240 events). */
export const CONTINUE_AS_NEW_DEFAULTS = { historyBytes: 6 * 1024 * 1024, historyEvents: 6_000 };

/** Why this run should end here, or undefined. */
export function continueAsNewReason(agent: ForkAgent): string | undefined {
  const info = workflowInfo();
  const limits = agent.input.continueAsNew;
  if (info.continueAsNewSuggested) return 'suggested by the server';
  if (info.historySize > (limits?.historyBytes ?? CONTINUE_AS_NEW_DEFAULTS.historyBytes)) return `history of ${info.historySize} bytes`;
  if (info.historyLength > (limits?.historyEvents ?? CONTINUE_AS_NEW_DEFAULTS.historyEvents)) return `history of ${info.historyLength} events`;
  if (limits?.turnsPerRun !== undefined && agent.turns - agent.turnsAtRunStart >= limits.turnsPerRun) return `${limits.turnsPerRun} turns in this run`;
  return undefined;
}

export function shouldContinueAsNew(agent: ForkAgent): boolean {
  // The rule of histories recorded before the patch, unchanged (no marker where it holds).
  if (workflowInfo().continueAsNewSuggested && agent.runningChildren.length === 0 && agent.approvals.length === 0 && allHandlersFinished()) return true;
  if (continueAsNewReason(agent) === undefined) return false;
  // A child started before CHILDREN_OUTLIVE_RUNS_PATCH is cancelled when its parent's run closes: wait for it.
  if (!agent.runningChildren.every((c) => canOutliveRun(agent, c))) return false;
  // Retirement step 2 (docs/guides/patches.md): no recorded history takes the old branch.
  deprecatePatch(CONTINUE_AT_ANY_BOUNDARY_PATCH);
  return true;
}

/**
 * Before this patch an agent waiting for its children (after its final reply) never continued
 * as new, however much its history grew meanwhile (a tree's root records every reservation and
 * charge of its tree); histories recorded then replay without the marker.
 */
export const CONTINUE_WHILE_WAITING_PATCH = 'forkflow-continue-while-waiting';

/** Whether a run waiting for its children should end (checked by the wait's condition, so no command). */
export function wantsToContinueWhileWaiting(agent: ForkAgent): boolean {
  return continueAsNewReason(agent) !== undefined && agent.runningChildren.every((c) => canOutliveRun(agent, c));
}

/** Continues as new from the wait for children (the next run goes on waiting); false in histories recorded before the patch. */
export async function continueWhileWaiting(agent: ForkAgent): Promise<boolean> {
  if (!patched(CONTINUE_WHILE_WAITING_PATCH)) return false;
  return continueAsNewNow(agent, { waitingForChildren: true });
}

/**
 * Worker Versioning: a new build of this deployment became current while this run is pinned
 * to an older one. An idle agent continues as new onto it at once (continueWhileIdle); any
 * other run moves at its next continue-as-new, and a short fork ends on the build it began on.
 */
export function newBuildIsCurrent(): boolean {
  return workflowInfo().targetWorkerDeploymentVersionChanged === true;
}

/** Continues as new onto the current build, still idle for the time it had left. */
export function continueWhileIdle(agent: ForkAgent, idleMs: number): Promise<never> {
  return continueAsNewNow(agent, { idleMs });
}

export async function continueAsNewNow(agent: ForkAgent, opts: { waitingForChildren?: boolean; idleMs?: number } = {}): Promise<never> {
  // A signal that just woke the turn loop (a child's report) counts as in progress until its
  // handler's promise settles, a few microtasks later: wait for it rather than skip this boundary.
  // Stream subscribers' polls wait in handlers: let them return now and re-poll the next run.
  await agent.live.detach();
  // Its share of the tree's budget crosses whole: no call (a keep-alive) or message of it in flight.
  if (agent.shares && !sharesSettled(agent)) await condition(() => sharesSettled(agent));
  if (!allHandlersFinished()) await condition(allHandlersFinished);
  // What only a first run reads (its point, its set-up, the retry it makes) stays behind; its lineage is carried.
  const { parent: _snapshot, parentRef: _ref, continuation: _previous, from: _point, counterfactual: _cf, replay: _replay, retry: _retry, ...config } = agent.input;
  // The next run starts on the deployment's current build when a new one is current, holding
  // the whole conversation: reading it by reference would query runs of this build, which
  // fail once its workers are retired (a closed run pinned to a build is replayed only there).
  const moving = newBuildIsCurrent();
  const held = moving ? await heldConversation(agent) : undefined;
  const next: ForkInputJson = {
    ...config,
    // A run whose `default` asks nothing (recorded before it did) goes on as what it was.
    ...(config.permissionMode === 'default' && !agent.defaultAsks ? { permissionMode: 'acceptEdits' as const } : {}),
    overrides: { ...config.overrides, agentId: agent.agentId },
    rootAgentId: agent.rootAgentId,
    continuation: {
      ref: prefixRefOf(agent),
      ...(held ? { held } : {}),
      state: { ...agent.carry(), ...(opts.waitingForChildren ? { waitingForChildren: true } : {}), ...(opts.idleMs !== undefined ? { idleMs: opts.idleMs } : {}) },
    },
  };
  return makeContinueAsNewFunc<ForkWorkflowFn>(moving ? { initialVersioningBehavior: 'AUTO_UPGRADE' } : {})(next);
}

/** The run's conversation and context in full: what it holds, and (by an activity) what other runs hold for it. */
async function heldConversation(agent: ForkAgent): Promise<HeldConversation> {
  const ref = agent.prefixRef;
  const summary = agent.summary;
  const read = ref || !agent.context ? await conversation.readHeldConversation({ prefix: ref ? { run: ref.run, count: ref.count, digest: ref.digest } : { run: summary.from, count: 0, digest: EMPTY_DIGEST }, context: { from: summary.from, contextKey: summary.contextKey } }) : undefined;
  const c = agent.context ?? read!.context;
  const context: HeldConversation['context'] = { system: c.system, tools: c.tools, model: c.model, maxTokens: summary.maxTokens, ...(c.thinking ? { thinking: c.thinking } : {}), ...(c.toolChoice ? { toolChoice: c.toolChoice as HeldConversation['context']['toolChoice'] } : {}) };
  return { context, messages: [...(read?.messages ?? []), ...agent.messages] };
}
