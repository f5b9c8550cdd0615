/**
 * The turn loop, split into steps: a model step, a tool round, and the turn boundary where
 * queued messages enter the conversation. Each turn ends in a discriminated outcome; stop
 * conditions are small predicates checked before every model call.
 */
import { ActivityFailure, ApplicationFailure, condition, workflowInfo } from '@temporalio/workflow';
import { toolUsesOf, type ContentBlock, type ToolResultBlock, type ToolUseBlock, textOf } from '../../shared/anthropic';
import { INLINE_TAIL_BYTES, type ModelCallInput, type ModelCallResult } from '../../shared/activity-io';
import { canonicalJson, utf8Length } from '../../shared/hash';
import type { StopReason } from '../../shared/status';
import { batchModel, model, modelQueueOf } from '../activities';
import type { ForkAgent } from './agent';
import { withTreeToken } from './tree-authority';
import { budgetExhausted, remainingTokens } from '../../shared/budget';
import { BUDGET_EXHAUSTED_FAILURE } from '../../shared/tree-ledger';
import { workflowNow } from '../clock';
import { continueAsNewNow, continueWhileWaiting, shouldContinueAsNew, wantsToContinueWhileWaiting } from './continuation';
import { runToolRound } from './tool-round';
import { whileWaiting } from './keep-alive';
import { publishProgress } from './visibility';

export type TurnOutcome =
  | { kind: 'run_again' } // tools ran (or messages arrived): call the model again
  | { kind: 'final' } //     the model finished and nothing is queued
  | { kind: 'stop'; reason: StopReason };

type StopCondition = (agent: ForkAgent) => StopReason | undefined;

/** Checked before each model call; the first that fires ends the loop normally. */
export const stopConditions: StopCondition[] = [
  (a) => (a.turns >= a.input.maxTurns ? 'max_turns' : undefined),
  (a) => (budgetExhausted(a.budgetUsage, { turns: a.turns, toolCalls: a.toolUses }, a.input.budget) ? 'budget_exhausted' : undefined),
];

/**
 * The newest message inline when it is small and ends a turn (see ModelCallInput.tail): a
 * turn boundary after the model's reply, or this run's opening message. The opening one
 * spares every new fork (and every sibling started by reference) a conversation query on
 * its first model call: a query waits for a workflow task on the worker holding the run,
 * which under load (bench:load, bench:fork) is most of a fork's start latency. Only a short
 * opening rides along: a fork's opening with the fork rules (~2 KB) would add that much to
 * every fork's history, which a zero-copy fork keeps to a few KB (zero-copy.test.ts).
 */
function inlineTail(agent: ForkAgent): ModelCallInput['tail'] {
  const last = agent.messages.length - 1;
  const message = agent.messages[last];
  if (!message || message.role !== 'user' || (last > 0 && agent.messages[last - 1]?.role !== 'assistant')) return undefined;
  const limit = last === 0 ? INLINE_OPENING_BYTES : INLINE_TAIL_BYTES;
  return utf8Length(canonicalJson(message)) <= limit ? { from: agent.base + last, messages: [message] } : undefined;
}

/** The largest opening message sent inline with the first model call. */
const INLINE_OPENING_BYTES = 512;

/** The longest directive a by-reference fork's first call carries as its opening's recipe. */
const RECIPE_DIRECTIVE_BYTES = 4096;

/**
 * A by-reference fork's opening, too long to ride inline (the fork rules), as the recipe the
 * worker builds it from: the directive alone goes into history, and the first call of every
 * sibling needs no conversation query (which waits for a workflow task on a busy worker).
 */
function openingRecipe(agent: ForkAgent): ModelCallInput['openingRecipe'] {
  const recipe = agent.setup.recipe;
  if (!recipe || agent.messages.length !== 1 || utf8Length(recipe.directive) > RECIPE_DIRECTIVE_BYTES) return undefined;
  return { from: agent.base, ...recipe };
}

/** A model call the budget could not pay for (the activity refused before asking the model). */
function isBudgetRefusal(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === BUDGET_EXHAUSTED_FAILURE;
}

/** In a tree with a ledger: what the call may charge of this agent's own budget, and where to reserve the rest. */
function budgetOf(agent: ForkAgent): ModelCallInput['budget'] {
  if (!agent.inTreeLedger) return undefined;
  return { left: remainingTokens(agent.budgetUsage, agent.input.budget), ledger: { rootId: agent.rootAgentId, toolUses: agent.toolUses, ...withTreeToken(agent) } };
}

/** One model call; `undefined` when the budget (the agent's or its tree's) cannot pay for it. */
async function modelStep(agent: ForkAgent): Promise<ModelCallResult | undefined> {
  const info = workflowInfo();
  const turn = agent.turns + 1;
  const tail = inlineTail(agent);
  const recipe = tail ? undefined : openingRecipe(agent);
  agent.doing(`model turn ${turn}`);
  publishProgress(agent);
  const self = { workflowId: info.workflowId, runId: info.runId };
  const ref = agent.prefixRef;
  // Where this turn began: a fork from the end of the previous turn starts from here (turnPoint query).
  agent.turnIndex.called(turn, { count: agent.messageCount, digest: agent.digest, usage: agent.usage, toolUses: agent.toolUses });
  // The run holding the request context: the parent's for a fork by reference, this run's own
  // when it holds one (a counterfactual fork, which changed what the parent sent).
  const contextFrom = agent.summary.from;
  const ownContext = contextFrom.workflowId === self.workflowId && contextFrom.runId === self.runId;
  const input: ModelCallInput = {
    run: self,
    agentId: agent.agentId,
    turn,
    messageCount: agent.messageCount,
    digest: agent.digest,
    contextKey: agent.summary.contextKey,
    ...(tail ? { tail } : {}),
    ...(recipe ? { openingRecipe: recipe } : {}),
    ...(agent.sharedPrefixEnd ? { sharedPrefixEnd: agent.sharedPrefixEnd } : {}),
    ...(ref ? { prefix: { run: ref.run, count: ref.count, digest: ref.digest }, ...(ownContext ? {} : { contextFrom }) } : {}),
    ...(ref && agent.summary.maxTokens !== ref.context.maxTokens ? { maxTokens: agent.summary.maxTokens } : {}),
  };
  const budget = budgetOf(agent);
  if (budget) input.budget = budget;
  // Absent for interactive forks: their inputs (and histories) are unchanged.
  if (agent.input.delivery === 'batch') input.delivery = 'batch';
  if (agent.input.stream === false) input.stream = false;
  else if (agent.live.watched) input.watched = true;
  // A run's first call: a subscriber that came with the fork's start may not have polled yet, so
  // the call asks at once (one query per run, not per turn).
  else if (agent.turns === agent.turnsAtRunStart) input.askWatched = true;
  const prefixAt = agent.cache.prefixAt;
  if (prefixAt !== undefined) input.prefixAt = prefixAt;
  const cacheTtl = agent.warmth.cacheTtl;
  if (cacheTtl) input.cacheTtl = cacheTtl;
  const startedAt = workflowNow();
  let result: ModelCallResult;
  try {
    // One fairness key per tree: on a server with fairness on, a tree of 200 agents shares
    // the model queue with a tree of 2 instead of queueing it behind its backlog.
    result = await (input.delivery === 'batch' ? batchModel : model).callModel.executeWithOptions({ summary: `turn ${turn} · model ${agent.summary.model}`, priority: { fairnessKey: agent.rootAgentId }, ...modelQueueOf(agent.input) }, [input]);
  } catch (err) {
    if (!isBudgetRefusal(err)) throw err;
    agent.doing(undefined);
    return undefined;
  }
  agent.tally.recordModelCall(result.usage, result.message);
  agent.warmth.called(input, startedAt, result);
  agent.cache.check({ agentId: agent.agentId, forkLabel: agent.input.forkLabel }, agent.setup, turn, result, startedAt);
  agent.append(result.message);
  for (const use of toolUsesOf(result.message)) agent.live.toolUse(turn, use);
  agent.live.turnEnd(turn, result.stopReason, result.usage, textOf(result.message));
  agent.doing(undefined);
  return result;
}

/** Tool results to stream subscribers (previews: the transcript has them whole). */
function publishToolResults(agent: ForkAgent, uses: ToolUseBlock[], results: ToolResultBlock[]): void {
  const names = new Map(uses.map((u) => [u.id, u.name]));
  for (const r of results) {
    const text = typeof r.content === 'string' ? r.content : (r.content ?? []).map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
    agent.live.toolResult(agent.turns, { toolUseId: r.tool_use_id, name: names.get(r.tool_use_id), isError: r.is_error === true, text });
  }
}

/** The turn boundary: tool results first, then queued messages, then the reminder. */
export function boundaryBlocks(agent: ForkAgent, results: ContentBlock[]): ContentBlock[] {
  return [...results, ...agent.drainInbox(), ...agent.reminderBlocks()];
}

/**
 * Waits for a report (or a message) from background sub-agents. A long wait may outgrow the
 * run's history (a tree's root records its tree's reservations and charges meanwhile): then
 * the run continues as new and the next one goes on waiting (continuation.ts).
 */
async function waitForChildren(agent: ForkAgent): Promise<void> {
  const news = () => agent.inbox.length > 0 || agent.runningChildren.length === 0;
  agent.doing(`waiting for ${agent.runningChildren.length} sub-agent(s)`);
  publishProgress(agent);
  await whileWaiting(agent, () => condition(() => news() || wantsToContinueWhileWaiting(agent)));
  if (!news()) {
    await continueWhileWaiting(agent);
    await whileWaiting(agent, () => condition(news));
  }
  agent.doing(undefined);
}

export async function runTurn(agent: ForkAgent): Promise<TurnOutcome> {
  // A run that continued as new while waiting for its children goes on waiting (no model call: its final reply is on record).
  if (!agent.takeResumedWait()) {
    for (const condition of stopConditions) {
      const reason = condition(agent);
      if (reason) return { kind: 'stop', reason };
    }
    const reply = await modelStep(agent);
    if (!reply) return { kind: 'stop', reason: 'budget_exhausted' };
    const uses = toolUsesOf(reply.message);
    if (uses.length > 0) {
      const results = await runToolRound(agent, uses, agent.messageCount - 1);
      publishToolResults(agent, uses, results);
      agent.append({ role: 'user', content: boundaryBlocks(agent, results) });
      publishProgress(agent);
      return { kind: 'run_again' };
    }
  }
  // Background sub-agents still at work: their reports are what this agent waits for.
  if (agent.inbox.length === 0 && agent.runningChildren.length > 0) await waitForChildren(agent);
  if (agent.inbox.length > 0) {
    agent.append({ role: 'user', content: boundaryBlocks(agent, []) });
    return { kind: 'run_again' };
  }
  return { kind: 'final' };
}

/**
 * Hands queued messages to a fork that finished its answer and was woken: they become the
 * next user turn, so the next request ends with them (never with the fork's own reply,
 * which the API would read as a prefill to continue).
 */
export function deliverWakingMessages(agent: ForkAgent): void {
  if (agent.inbox.length > 0) agent.append({ role: 'user', content: boundaryBlocks(agent, []) });
}

/** Runs turns until the model finishes or a stop condition fires. */
export async function runTurns(agent: ForkAgent): Promise<StopReason> {
  for (;;) {
    if (shouldContinueAsNew(agent)) await continueAsNewNow(agent);
    const outcome = await runTurn(agent);
    if (outcome.kind === 'final') return 'end_turn';
    if (outcome.kind === 'stop') return outcome.reason;
  }
}
