/**
 * The tree ledger inside workflows (src/shared/tree/tree-ledger.ts holds the rules). A tree's root
 * keeps the ledger and serves it by update — admission of sub-agents, a reservation before
 * every model call in the tree and its charge after — so limits and budgets are counted by
 * one authority, exactly, with no visibility lag. Every other agent of the tree reaches it
 * through activities (admission here, reservations and charges inside the model activity)
 * and tells it when one of its children ended.
 *
 * Runs recorded before the ledger existed replay without it: the choice is made once per run
 * with `patched(TREE_LEDGER_PATCH)`, before any command it changes.
 */
import { CancellationScope, getExternalWorkflowHandle, log, patched, setHandler, uuid4 } from '@temporalio/workflow';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import { admitAgentUpdate, agentEndedSignal, chargeTokensUpdate, reserveTokensUpdate, routeMessageUpdate } from '../../shared/wire/messages';
import { routeMessage, routeRequestSchema } from '../../shared/tree/team-ledger';
import { undecodableReason } from '../../shared/wire/undecodable';
import { priceOf } from '../../shared/providers/agent-provider';
import { DEFAULT_PROVIDER } from '../../shared/providers/model-allowlist';
import { capabilityIssue, newLedger, type TreeLedger } from '../../shared/tree/tree-ledger';
import { admitRequestSchema, agentEndedSchema, chargeRequestSchema, reserveRequestSchema, type AdmitRequest, type AdmitResult } from '../../shared/tree/tree-ledger-requests';
import { charge, ended, withdraw, reserve } from '../../shared/tree/tree-ledger-rules';
import { endedShare, lendsShares, withdrawShare } from '../../shared/tree/tree-shares';
import { tree } from '../activities';
import type { ForkAgent } from './agent';
import { quietOnCancel } from './signal-cancel';
import { admitByRoot, admitHere, registerRequestHandler } from './root-calls';
import { deliver, lendSharesIfNew, registerShareHandlers } from './tree-shares';

export const TREE_LEDGER_PATCH = 'forkflow-tree-ledger-1';

/**
 * Before this patch a tree had no capability: its root accepted child reports and ledger
 * requests from anyone. With it, a new root draws one (`uuid4`, seeded by the SDK: the same on
 * replay) and every request must carry it. Decided once per tree, when its ledger is made.
 */
export const TREE_TOKEN_PATCH = 'forkflow-tree-capability-1';

/** Whether this run takes part in a tree ledger: decided once, at its start. */
export function usesTreeLedger(agent: ForkAgent): boolean {
  const input = agent.input;
  const isRoot = agent.rootAgentId === agent.agentId && !input.parentAgentId;
  const wants = isRoot ? input.subAgents?.enabled === true : input.treeLedger === true;
  return wants && patched(TREE_LEDGER_PATCH);
}

/** The root's new ledger (a continuing run adopts the carried one instead), with the tree's capability under the patch. */
export function rootLedgerFor(agent: ForkAgent): TreeLedger {
  const config = agent.input.subAgents;
  const book = newLedger(
    { agentId: agent.agentId, model: agent.model, budget: agent.input.budget.maxTokens, ...(agent.input.name ? { name: agent.input.name } : {}) },
    { maxTreeRunning: config?.maxTreeRunning ?? 8, maxTreeSpawns: config?.maxTreeSpawns ?? 200 },
    patched(TREE_TOKEN_PATCH) ? uuid4() : undefined,
  );
  // A new tree lends budget shares (src/shared/tree/tree-shares.ts); a tree started before keeps reserving per call.
  lendSharesIfNew(book);
  return book;
}

/**
 * A retried root (src/client/retry.ts) takes its ledger over from its result, which never shows
 * the capability: it draws a new one (its earlier run's children ended with that run). Called
 * once, at the start of such a run; a retry of a root recorded before capabilities stays without.
 */
export function renewTokenForRetry(agent: ForkAgent): void {
  const book = agent.book;
  if (!agent.input.retry || !book || book.token || book.rootId !== agent.agentId) return;
  if (patched(TREE_TOKEN_PATCH)) book.token = uuid4();
}

/**
 * The capability of this agent's tree: the root's (in its ledger), or the one its parent passed
 * down (`treeToken`). Undefined in trees started before capabilities.
 */
export function treeTokenOf(agent: ForkAgent): string | undefined {
  return agent.book ? agent.book.token : agent.input.treeToken;
}

/** `{ token }` for a request of this agent's tree, or nothing in a tree without one. */
export function withTreeToken(agent: ForkAgent): { token?: string } {
  const token = treeTokenOf(agent);
  return token ? { token } : {};
}

function rejectWith(issues: string[]): never {
  throw new Error(`Invalid tree ledger request: ${issues.join('; ')}`);
}

/** A validator: the request parses, and carries the tree's capability. */
function validatorOf(agent: ForkAgent, schema: { safeParse(raw: unknown): { success: true; data: { token?: string } } | { success: false; error: Parameters<typeof describeIssues>[0] } }, name: string) {
  return (raw: unknown): void => {
    const undecodable = undecodableReason(raw);
    if (undecodable) rejectWith([undecodable]);
    const p = schema.safeParse(raw);
    if (!p.success) rejectWith(describeIssues(p.error));
    const refused = capabilityIssue(agent.book!, p.data.token);
    if (refused) {
      log.warn(`${name} refused`, { agentId: agent.agentId, reason: refused });
      rejectWith([refused]);
    }
  };
}

/**
 * The root's handlers. Validators refuse malformed requests (the sender gets the reason, the
 * root is untouched); the handlers are synchronous, so continue-as-new never waits on them.
 */
export function registerLedgerHandlers(agent: ForkAgent): void {
  const book = () => agent.book!;
  setHandler(admitAgentUpdate, (req) => admitHere(book(), req), { validator: validatorOf(agent, admitRequestSchema, 'treeAdmitAgent') });
  setHandler(reserveTokensUpdate, (req) => reserve(book(), req), { validator: validatorOf(agent, reserveRequestSchema, 'treeReserveTokens') });
  // Each call at its serving provider's price for its model (src/shared/providers/agent-provider.ts `priceOf`).
  const catalogue = agent.input.subAgents?.providers;
  const prices = (provider: string | undefined, model: string) => priceOf(catalogue, provider ?? agent.input.subAgents?.provider ?? DEFAULT_PROVIDER, model);
  setHandler(chargeTokensUpdate, (req) => charge(book(), req, prices), { validator: validatorOf(agent, chargeRequestSchema, 'treeChargeTokens') });
  setHandler(routeMessageUpdate, (req) => routeMessage(book(), req), { validator: validatorOf(agent, routeRequestSchema, 'treeRouteMessage') });
  setHandler(agentEndedSignal, quietOnCancel('treeAgentEnded', (raw: unknown) => {
    const undecodable = undecodableReason(raw);
    if (undecodable) return dropSignal(agent, 'treeAgentEnded', [undecodable]);
    const p = agentEndedSchema.safeParse(raw);
    if (!p.success) return dropSignal(agent, 'treeAgentEnded', describeIssues(p.error));
    const refused = capabilityIssue(book(), p.data.token);
    if (refused) return dropSignal(agent, 'treeAgentEnded', [refused]);
    if (lendsShares(book())) return endedHere(agent, p.data.agentId, p.data.started !== false);
    if (p.data.started === false) withdraw(book(), p.data.agentId);
    else ended(book(), p.data.agentId);
  }));
  // A tree that lends shares takes its members' reports, asks and requests by signal.
  if (lendsShares(book())) {
    registerShareHandlers(agent);
    registerRequestHandler(agent);
  }
}

/** At the root: an agent ended (or, `started` false, never started); in a tree that lends shares, waiters it kept waiting may go on. */
async function endedHere(agent: ForkAgent, agentId: string, started: boolean): Promise<void> {
  const book = agent.book!;
  await deliver(agent, started ? endedShare(book, agentId) : withdrawShare(book, agentId));
}

/** A signal dropped: recorded in `status.rejectedSignals` and logged with its reason. */
export function dropSignal(agent: ForkAgent, signal: string, issues: string[]): void {
  agent.rejectSignal(signal, issues);
  log.warn(`${signal} dropped`, { agentId: agent.agentId, issues });
}

/** Asks the root to admit a child: locally at the root, by activity elsewhere. */
export async function admitChild(agent: ForkAgent, req: AdmitRequest): Promise<AdmitResult> {
  if (agent.book) return admitHere(agent.book, req);
  // In a tree that lends shares, by signal: no update slot at the root, whatever the number of workers.
  if (agent.shares && !agent.shares.untethered) return admitByRoot(agent, req, withTreeToken(agent).token);
  return tree.admitAgent.executeWithOptions({ summary: `admit ${req.agentId} at the tree's root` }, [{ rootId: agent.rootAgentId, request: { ...req, ...withTreeToken(agent) } }]);
}

/** Tells the root a child ended (it stops counting as running). Never fails the caller. */
export async function childEnded(agent: ForkAgent, agentId: string): Promise<void> {
  if (!agent.inTreeLedger) return;
  if (agent.book) return lendsShares(agent.book) ? endedHere(agent, agentId, true) : ended(agent.book, agentId);
  try {
    await getExternalWorkflowHandle(agent.rootAgentId).signal(agentEndedSignal, { agentId, ...withTreeToken(agent) });
  } catch {
    // The root is gone: so is the tree's count of running agents.
  }
}

/**
 * Takes back an admission whose child never started, even while this agent is being
 * cancelled (the reason it may not have started). Never fails the caller.
 */
export async function withdrawChild(agent: ForkAgent, agentId: string): Promise<void> {
  if (!agent.inTreeLedger) return;
  if (agent.book) return lendsShares(agent.book) ? endedHere(agent, agentId, false) : withdraw(agent.book, agentId);
  await CancellationScope.nonCancellable(async () => {
    try {
      await getExternalWorkflowHandle(agent.rootAgentId).signal(agentEndedSignal, { agentId, started: false, ...withTreeToken(agent) });
    } catch {
      // The root is gone, and its ledger with it.
    }
  });
}
