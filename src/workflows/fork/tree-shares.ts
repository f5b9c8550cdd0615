/**
 * Budget shares inside workflows (src/shared/tree/tree-shares.ts holds the rules): a tree whose root
 * started under TREE_SHARES_PATCH lends each agent a share of its budget, and the agent's
 * model calls charge that share locally — no root round trip per call. Here:
 *
 * - every agent's own side: the share it may pass to a call (`callShare`), the spend it records
 *   when a call ends (`spending`), its ask for more when a call does not fit (`askShare`), its
 *   answer to a recall, and the last report when its run ends (`endShares`);
 * - the root's side: its handlers for members' messages (`treeShare`), which answer grants,
 *   refusals and recalls by `treeAnswer` signals, and its own share, asked and reported by
 *   plain function calls on its ledger.
 *
 * Trees started before the patch keep the per-call protocol (reserve and charge updates), and
 * so does a run with no share (an agent resumed by a client, not by its parent).
 */
import { ActivityFailure, ApplicationFailure, condition, getExternalWorkflowHandle, isCancellation, log, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Usage } from '../../shared/messages-api/anthropic';
import type { ModelCallInput } from '../../shared/wire/activity-io';
import { tokensCharged } from '../../shared/tree/budget';
import { estimateRequestTokens } from '../../shared/messages-api/request-tokens';
import { type ForkInputJson } from '../../shared/wire/fork-input';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import { priceOf } from '../../shared/providers/agent-provider';
import { DEFAULT_PROVIDER } from '../../shared/providers/model-allowlist';
import { treeAnswerSignal, treeShareSignal } from '../../shared/wire/messages';
import type { TreeAnswer } from '../../shared/tree/tree-calls';
import { capabilityIssue, isMember, type TreeLedger } from '../../shared/tree/tree-ledger';
import type { PriceLookup } from '../../shared/tree/tree-ledger-rules';
import { lendsShares, SHARE_SHORT_FAILURE, shareMessageSchema, startLending, takeShareMessage, NO_SPEND, type ShareEffect, type ShareMessage } from '../../shared/tree/tree-shares';
import { treeAnswerSchema } from '../../shared/tree/tree-calls';
import { undecodableReason } from '../../shared/wire/undecodable';
import type { ForkAgent } from './agent';
import { quietOnCancel } from './signal-cancel';
import { ShareBook, type CarriedShare } from './share-book';

/** Trees whose root started before this patch reserve and charge every call at the root. */
export const TREE_SHARES_PATCH = 'forkflow-tree-shares-1';


/** A new root's ledger lends shares, under the patch (asked once, when the ledger is made). */
export function lendSharesIfNew(book: TreeLedger): void {
  if (patched(TREE_SHARES_PATCH)) startLending(book);
}

/**
 * This run's share book, decided at its start: the root's own when its ledger lends shares; a
 * sub-agent's when its admission lent one (its input's `treeShare`) or its previous run carried one.
 */
export function openShares(agent: ForkAgent, carried: CarriedShare | undefined): void {
  if (!agent.inTreeLedger) return;
  if (agent.book) {
    if (lendsShares(agent.book) && agent.book.rootId === agent.agentId) agent.shares = new ShareBook(true, 0, carried);
    return;
  }
  const lent = agent.input.treeShare;
  if (lent || carried) agent.shares = new ShareBook(false, lent?.tokens ?? 0, carried);
}

/** The share part of a model call's budget (undefined: no share, or its tree is gone). */
export function callShare(agent: ForkAgent): { tokens: number; final?: true } | undefined {
  const book = agent.shares;
  if (!book || book.untethered) return undefined;
  return { tokens: book.available, ...(book.final ? { final: true as const } : {}) };
}

/** What a call that does not fit its share needs, from its failure; undefined for any other failure. */
export function shareShortOf(err: unknown): { need: number; want: number } | undefined {
  if (!(err instanceof ActivityFailure) || !(err.cause instanceof ApplicationFailure) || err.cause.type !== SHARE_SHORT_FAILURE) return undefined;
  const d = err.cause.details?.[0] as { need?: unknown; want?: unknown } | undefined;
  return typeof d?.need === 'number' && typeof d.want === 'number' ? { need: d.need, want: d.want } : undefined;
}

/** Prices of the tree's calls, as its root's provider catalogue configures them. */
export function ledgerPrices(agent: ForkAgent): PriceLookup {
  const config = agent.input.subAgents;
  return (provider, model) => priceOf(config?.providers, provider ?? config?.provider ?? DEFAULT_PROVIDER, model);
}

/** Answers and sends in flight (a run ends or continues as new only once they are done). */
const sending = new WeakMap<ForkAgent, number>();

function track<T>(agent: ForkAgent, p: Promise<T>): Promise<T> {
  sending.set(agent, (sending.get(agent) ?? 0) + 1);
  return p.finally(() => sending.set(agent, (sending.get(agent) ?? 1) - 1));
}

/** Nothing of this agent's share is in flight: no call, no ask, no message being sent. */
export function sharesSettled(agent: ForkAgent): boolean {
  const book = agent.shares;
  return !book || (book.pending === 0 && !book.waiting && (sending.get(agent) ?? 0) === 0);
}

// ---- the root ----

/** Applies answers: the root's own at once, everyone else's by signal. A grant nobody can receive comes back. */
export async function deliver(agent: ForkAgent, effects: ShareEffect[]): Promise<void> {
  const sends: Promise<void>[] = [];
  for (const e of effects) {
    if (e.to === agent.agentId) sends.push(answerHere(agent, e.answer));
    else sends.push(track(agent, sendAnswer(agent, e)));
  }
  await Promise.all(sends);
}

async function sendAnswer(agent: ForkAgent, e: ShareEffect): Promise<void> {
  try {
    await getExternalWorkflowHandle(e.to).signal(treeAnswerSignal, { ...e.answer, ...tokenOf(agent) });
  } catch (err) {
    if (isCancellation(err)) throw err;
    // The agent's run closed: a grant it never got is the tree's again.
    const node = agent.book?.nodes[e.to];
    if (node && e.answer.kind === 'share' && 'tokens' in e.answer) {
      node.lent = Math.max(0, (node.lent ?? 0) - e.answer.tokens);
      await deliver(agent, takeShareMessage(agent.book!, { agentId: e.to, kind: 'return', returned: 0, spend: NO_SPEND }));
    }
  }
}

function tokenOf(agent: ForkAgent): { token?: string } {
  const token = agent.book?.token ?? agent.input.treeToken;
  return token ? { token } : {};
}

/** An answer to the root's own share: a grant or refusal of its ask, or a recall. */
async function answerHere(agent: ForkAgent, answer: ShareEffect['answer']): Promise<void> {
  const book = agent.shares;
  if (!book) return;
  if (answer.kind === 'recall') return answerRecall(agent);
  if (!book.answered(answer.id, 'tokens' in answer ? { tokens: answer.tokens } : { refused: answer.refused }) && 'tokens' in answer) {
    // A grant of an ask no longer open (the run that asked was stopped): given back at once.
    book.held += answer.tokens;
    await report(agent, 'return');
  }
}

/** The root takes a member's message (validated, with the tree's capability) and answers. */
export function registerShareHandlers(agent: ForkAgent): void {
  setHandler(treeShareSignal, quietOnCancel('treeShare', async (raw: unknown) => {
    const undecodable = undecodableReason(raw);
    if (undecodable) return agent.rejectSignal('treeShare', [undecodable]);
    const p = shareMessageSchema.safeParse(raw);
    if (!p.success) return agent.rejectSignal('treeShare', describeIssues(p.error));
    const refused = capabilityIssue(agent.book!, p.data.token);
    if (refused || !isMember(agent.book!, p.data.agentId)) {
      log.warn('treeShare dropped', { agentId: agent.agentId, from: p.data.agentId.slice(0, 200), reason: refused ?? 'not an agent of this tree' });
      return agent.rejectSignal('treeShare', [refused ?? `${p.data.agentId.slice(0, 200)} is not an agent of tree ${agent.agentId}`]);
    }
    await deliver(agent, takeShareMessage(agent.book!, p.data, ledgerPrices(agent)));
  }));
}

// ---- every agent ----

/** The tree's answers, at any agent of a tree that lends shares (share answers here; requests' answers in root-calls.ts). */
export function registerAnswerHandler(agent: ForkAgent, onRequestAnswer: (answer: TreeAnswer) => void): void {
  setHandler(treeAnswerSignal, quietOnCancel('treeAnswer', async (raw: unknown) => {
    const undecodable = undecodableReason(raw);
    if (undecodable) return agent.rejectSignal('treeAnswer', [undecodable]);
    const p = treeAnswerSchema.safeParse(raw);
    if (!p.success) return agent.rejectSignal('treeAnswer', describeIssues(p.error));
    const token = agent.book?.token ?? agent.input.treeToken;
    if (token !== undefined && p.data.token !== token) return agent.rejectSignal('treeAnswer', ['an answer without the capability of this agent\'s tree: only its root answers']);
    const answer = p.data;
    if (answer.kind === 'admit' || answer.kind === 'route') return onRequestAnswer(answer);
    await answerHere(agent, answer);
  }));
}

/**
 * Gives the share back once no call of this agent's is in flight and no ask of its is open
 * (a grant that crossed the recall is used for its call first), and always answers: the root
 * recalls an agent once until it hears from it.
 */
async function answerRecall(agent: ForkAgent): Promise<void> {
  const book = agent.shares!;
  book.recallAsked = true;
  await condition(() => (book.pending === 0 && !book.waiting) || !book.recallAsked);
  if (!book.recallAsked) return;
  book.recallAsked = false;
  await report(agent, 'return', false, true);
}

/**
 * Tells the root what this agent gives back (all it holds but what calls in flight may charge;
 * nothing when `keep`) and what it spent: a function call at the root, a signal elsewhere.
 */
async function report(agent: ForkAgent, kind: 'return' | 'end', keep = false, always = false): Promise<void> {
  const book = agent.shares!;
  const { returned, spend } = book.takeReturn(keep);
  const msg: ShareMessage = { agentId: agent.agentId, kind, returned, spend, ...tokenOf(agent) };
  if (book.local) return deliver(agent, takeShareMessage(agent.book!, msg, ledgerPrices(agent)));
  if (book.untethered || (!always && returned === 0 && spend.priced.length === 0 && spend.charged === 0)) return;
  await track(agent, toRoot(agent, msg));
}

/** A message to the root; false when the root is gone (its tree closed). */
async function toRoot(agent: ForkAgent, msg: ShareMessage): Promise<boolean> {
  try {
    await getExternalWorkflowHandle(agent.rootAgentId).signal(treeShareSignal, msg);
    return true;
  } catch (err) {
    if (isCancellation(err)) throw err;
    agent.shares!.untethered = true;
    return false;
  }
}

/**
 * Asks the root for a share that pays for a call of `need`..`want` tokens, giving back what
 * this agent holds, and waits for the answer (the root signals it: a grant when budget comes
 * back, nobody polls). Returns why the tree cannot pay, or undefined once it holds a share (or
 * its tree is gone, and its own budget alone bounds it).
 */
export async function askShare(agent: ForkAgent, need: number, want: number): Promise<string | undefined> {
  const book = agent.shares!;
  const { id, returned, spend } = book.open(`ask-${workflowInfo().runId.slice(0, 8)}`);
  const msg: ShareMessage = { agentId: agent.agentId, kind: 'ask', id, need, want, returned, spend, ...tokenOf(agent) };
  agent.doing(`waiting for a share of the tree's budget (${need} tokens at least)`);
  if (book.local) await deliver(agent, takeShareMessage(agent.book!, msg, ledgerPrices(agent)));
  else if (!(await toRoot(agent, msg))) {
    book.close();
    return undefined;
  }
  try {
    await condition(() => book.waiting?.outcome !== undefined);
  } catch (err) {
    // Stopped while waiting (cancelled, interrupted): the ask is closed, and its run's last
    // report tells the root it waits no more; a grant that still comes is given back at once.
    book.close();
    throw err;
  }
  const outcome = book.close();
  book.final = true;
  return 'refused' in outcome ? outcome.refused : undefined;
}

/**
 * Before a turn's call: when what the agent holds looks short of the call's bound (its next
 * request as estimated from the last one, plus `max_tokens`), it asks first, instead of
 * learning it from a call refused for it. The call still checks its exact bound.
 */
export async function topUpShare(agent: ForkAgent, ownLeft: number): Promise<void> {
  const book = agent.shares;
  if (!book || book.untethered) return;
  const next = nextRequestTokens(agent);
  if (next === undefined) return;
  const want = Math.min(next + agent.summary.maxTokens, ownLeft);
  if (book.available >= want || want <= next) return;
  await askShare(agent, next + 1, want);
}

/**
 * About what one call of a child could charge, for its first share: this agent's own next
 * request (a fork starts from it; a spawn starts smaller) and the child's `max_tokens`.
 */
export function callTokensFor(agent: ForkAgent, child: ForkInputJson): number {
  return (nextRequestTokens(agent, true) ?? 0) + (child.maxOutputTokens ?? agent.summary.maxTokens);
}

/**
 * The next request's size: from the last one the provider measured, or, before the first,
 * estimated from the context and messages this run holds (a fork holding its prefix by
 * reference has neither: its call says what it needs).
 */
function nextRequestTokens(agent: ForkAgent, again = false): number | undefined {
  const measured = again ? agent.window.expectedAgain(agent.messages, agent.base) : agent.window.expected(agent.messages, agent.base);
  if (measured !== undefined) return measured;
  const context = agent.context;
  if (!context || agent.base > 0) return undefined;
  return estimateRequestTokens({ system: context.system, tools: context.tools, messages: agent.messages });
}

/**
 * Runs one model call against the agent's share: what its input may charge is set aside while
 * it runs, and what it charged is recorded (and, at the root, entered in the ledger at once).
 */
export function spending<T>(agent: ForkAgent, input: Pick<ModelCallInput, 'budget'>, run: () => Promise<T>, served: (out: T) => Served): Promise<T> {
  const book = agent.shares;
  const passed = input.budget?.share?.tokens;
  // Not through an async step of its own: a run without a share schedules exactly as before.
  if (!book || passed === undefined) return run();
  return spendingShare(agent, book, passed, run, served);
}

type Served = { provider?: string; model: string; usage: Usage; kind: 'turn' | 'keepAlive' | 'compaction'; turn?: number };

async function spendingShare<T>(agent: ForkAgent, book: ShareBook, passed: number, run: () => Promise<T>, served: (out: T) => Served): Promise<T> {
  book.begin(passed);
  let out: T;
  try {
    out = await run();
  } catch (err) {
    book.end(passed);
    throw err;
  }
  const s = served(out);
  book.end(passed, { ...s, charged: tokensCharged(s.usage), toolUses: agent.toolUses });
  // The root's own spend enters its ledger at once (its status is live); what it holds stays with it.
  if (book.local) await report(agent, 'return', true);
  return out;
}

/** The run ends: once nothing is in flight, what it holds goes back with its last spend. */
export async function endShares(agent: ForkAgent): Promise<void> {
  const book = agent.shares;
  if (!book) return;
  await condition(() => sharesSettled(agent));
  await report(agent, 'end');
}
