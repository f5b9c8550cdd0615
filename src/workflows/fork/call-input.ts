/**
 * A model call's input: a reference to the conversation (run, message count, chained digest,
 * the context's key), never the conversation itself, plus what the call needs to know — the
 * newest message inline when small, a by-reference fork's opening recipe, budget, stream and
 * cache settings, and the context window's cut and checks (src/shared/context/). Built the
 * same way for the turn's model call and for a compaction before it.
 */
import { workflowInfo } from '@temporalio/workflow';
import { INLINE_TAIL_BYTES, type ModelCallInput } from '../../shared/wire/activity-io';
import { canonicalJson, utf8Length } from '../../shared/base/hash';
import { remainingTokens } from '../../shared/tree/budget';
import { withTreeToken } from './tree-authority';
import { callShare } from './tree-shares';
import type { ForkAgent } from './agent';

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

/**
 * In a tree with a ledger: what the call may charge of this agent's own budget, and the share of
 * the tree's budget it may charge (a tree that lends shares) or where to reserve it (one that does not).
 */
export function budgetOf(agent: ForkAgent): ModelCallInput['budget'] {
  if (!agent.inTreeLedger) return undefined;
  const left = remainingTokens(agent.budgetUsage, agent.input.budget);
  if (agent.shares) {
    const share = callShare(agent);
    return share ? { left, share } : { left };
  }
  return { left, ledger: { rootId: agent.rootAgentId, toolUses: agent.toolUses, ...withTreeToken(agent) } };
}

/**
 * The input of the model call of `turn`. `compactAbove`: the call refuses a request over the
 * compaction threshold (forkflow compacts first); off for the call made again after a compaction.
 */
export function modelCallInput(agent: ForkAgent, turn: number, opts: { compactAbove: boolean }): ModelCallInput {
  const info = workflowInfo();
  const tail = inlineTail(agent);
  const recipe = tail ? undefined : openingRecipe(agent);
  const self = { workflowId: info.workflowId, runId: info.runId };
  const ref = agent.prefixRef;
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
  // Absent for agents on the workers' default client: their inputs (and histories) are unchanged.
  if (agent.input.provider !== undefined) input.provider = agent.input.provider;
  const budget = budgetOf(agent);
  if (budget) input.budget = budget;
  // Absent for interactive forks: their inputs (and histories) are unchanged.
  if (agent.input.delivery === 'batch') input.delivery = 'batch';
  if (agent.input.delivery === 'batch' && agent.input.batchFallback === 'fail') input.batchFallback = 'fail';
  if (agent.input.stream === false) input.stream = false;
  else if (agent.live.watched) input.watched = true;
  // A run's first call: a subscriber that came with the fork's start may not have polled yet, so
  // the call asks at once (one query per run, not per turn).
  else if (agent.turns === agent.turnsAtRunStart) input.askWatched = true;
  const prefixAt = agent.cache.prefixAt;
  if (prefixAt !== undefined) input.prefixAt = prefixAt;
  const cacheTtl = agent.warmth.cacheTtl;
  if (cacheTtl) input.cacheTtl = cacheTtl;
  input.context = agent.window.spec(thinkingOn(agent), opts);
  // Absent for agents without an effort: their inputs (and requests) are unchanged.
  if (agent.input.effort) input.effort = agent.input.effort;
  return input;
}

/** Extended thinking, when this run knows it is on (a by-reference fork's context lives elsewhere). */
function thinkingOn(agent: ForkAgent): boolean {
  const thinking = agent.context?.thinking ?? agent.input.thinking ?? agent.input.parent?.thinking;
  return thinking !== undefined && thinking.type !== 'disabled';
}
