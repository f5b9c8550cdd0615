/**
 * A model call against its budget, on the activity's side: before the request is sent its
 * bound (input counted in full, plus `max_tokens`) is fitted to what the agent has left and,
 * in a tree, to the share it holds (trees that lend shares: src/shared/tree/tree-shares.ts) or to
 * what the root reserves for it (older trees: one update per call); after it, the usage is
 * charged at the root for those older trees. call-model.ts calls these around the request.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ApplicationFailureCategory } from '@temporalio/common';
import type { MessagesRequest } from '../../shared/messages-api/anthropic';
import type { ModelCallInput, ModelCallResult } from '../../shared/wire/activity-io';
import { estimateRequestTokens, type MediaRules } from '../../shared/messages-api/request-tokens';
import { BUDGET_EXHAUSTED_FAILURE } from '../../shared/tree/tree-ledger';
import { SHARE_SHORT_FAILURE } from '../../shared/tree/tree-shares';
import type { LedgerClient } from '../tree';

function budgetExhausted(turn: number, why: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`model call of turn ${turn} not made: ${why}`, BUDGET_EXHAUSTED_FAILURE);
}

/**
 * Fits the request into the budget: its input counted in full (an upper bound of what it
 * charges: cache reads weigh less) plus `max_tokens`, lowered to what the agent has left and,
 * in a tree, to what the root reserved for it. Throws `BudgetExhausted` when even the input
 * does not fit. The same request (a retry, a handed-over body) gets the same reservation.
 */
export async function withinBudget(deps: { ledger?: LedgerClient }, input: ModelCallInput, body: MessagesRequest, rules?: MediaRules): Promise<MessagesRequest> {
  const budget = input.budget;
  // In a tree that lends shares every call, a keep-alive too, fits the share its agent holds.
  if (budget?.share) return withinShare(input, body, budget.left, budget.share, rules);
  // A keep-alive reserves nothing (tree-ledger.ts): it is charged after, like any call.
  if (!budget || input.keepAlive) return body;
  const inputTokens = estimateRequestTokens(body, rules);
  const need = inputTokens + 1;
  let tokens = Math.min(inputTokens + body.max_tokens, budget.left);
  if (tokens < need) throw budgetExhausted(input.turn, `this agent has ${budget.left} tokens of its budget left, and the request alone is about ${inputTokens}`);
  if (budget.ledger && deps.ledger) {
    const req = { agentId: input.agentId, turn: input.turn, need, want: tokens, toolUses: budget.ledger.toolUses, ...(budget.ledger.token ? { token: budget.ledger.token } : {}) };
    // Calls in flight hold reservations of their upper bound; once charged (usually far less)
    // the rest is free again. Waiting for that is progress, not a refusal: nothing waiting holds any.
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      const r = await deps.ledger.reserve(budget.ledger.rootId, req);
      if (r.ok) {
        tokens = r.tokens;
        break;
      }
      if (!r.wait) throw budgetExhausted(input.turn, r.reason);
      await Context.current().sleep(delay);
    }
  }
  return { ...body, max_tokens: tokens - inputTokens };
}

/**
 * A call of an agent that holds a share of its tree's budget (src/shared/tree/tree-shares.ts): its
 * bound (input counted in full, plus `max_tokens`) must fit the share, or the call is not made
 * and the agent asks its root for more (`TreeShareShort`, with what it needs and wants). After
 * that ask (`final`) a call that fits its need goes on with `max_tokens` lowered to the share.
 * The failure is flow control, not trouble: BENIGN, so the worker logs it at debug, not as a
 * warning with its stack (a busy tree has many), and counts no activity error for it.
 */
function withinShare(input: ModelCallInput, body: MessagesRequest, left: number, share: { tokens: number; final?: true }, rules?: MediaRules): MessagesRequest {
  const inputTokens = estimateRequestTokens(body, rules);
  const need = inputTokens + 1;
  const want = Math.min(inputTokens + body.max_tokens, left);
  if (want < need) throw budgetExhausted(input.turn, `this agent has ${left} tokens of its budget left, and the request alone is about ${inputTokens}`);
  if (share.tokens < need || (share.tokens < want && !share.final && !input.keepAlive)) {
    throw ApplicationFailure.create({ message: `model call of turn ${input.turn} not made yet: this agent holds ${share.tokens} tokens of its tree's budget, and the call needs ${need} (up to ${want})`, type: SHARE_SHORT_FAILURE, nonRetryable: true, details: [{ need, want }], category: ApplicationFailureCategory.BENIGN });
  }
  return { ...body, max_tokens: Math.min(want, share.tokens) - inputTokens };
}

/** Charges a call's usage at the tree's root (idempotent by agent and turn). */
export async function charged(deps: { ledger?: LedgerClient }, input: ModelCallInput, result: ModelCallResult): Promise<ModelCallResult> {
  const ledger = input.budget?.ledger;
  if (ledger && deps.ledger) {
    await deps.ledger.charge(ledger.rootId, { agentId: input.agentId, turn: input.turn, model: result.model, usage: result.usage, toolUses: ledger.toolUses, ...(input.provider ? { provider: input.provider } : {}), ...(input.keepAlive ? { keepAlive: input.keepAlive } : {}), ...(ledger.token ? { token: ledger.token } : {}) });
  }
  return result;
}
