/**
 * The tree ledger inside workflows (src/shared/tree-ledger.ts holds the rules). A tree's root
 * keeps the ledger and serves it by update — admission of sub-agents, a reservation before
 * every model call in the tree and its charge after — so limits and budgets are counted by
 * one authority, exactly, with no visibility lag. Every other agent of the tree reaches it
 * through activities (admission here, reservations and charges inside the model activity)
 * and tells it when one of its children ended.
 *
 * Runs recorded before the ledger existed replay without it: the choice is made once per run
 * with `patched(TREE_LEDGER_PATCH)`, before any command it changes.
 */
import { CancellationScope, getExternalWorkflowHandle, patched, setHandler } from '@temporalio/workflow';
import { describeIssues } from '../../shared/fork-input';
import { admitAgentUpdate, agentEndedSignal, chargeTokensUpdate, reserveTokensUpdate } from '../../shared/messages';
import {
  admit,
  admitRequestSchema,
  agentEndedSchema,
  charge,
  chargeRequestSchema,
  ended,
  newLedger,
  withdraw,
  reserve,
  reserveRequestSchema,
  type AdmitRequest,
  type AdmitResult,
  type TreeLedger,
} from '../../shared/tree-ledger';
import { tree } from '../activities';
import type { ForkAgent } from './agent';

export const TREE_LEDGER_PATCH = 'forkflow-tree-ledger-1';
/** Runs recorded before an unstarted child was taken back from the ledger replay without it. */
export const WITHDRAW_PATCH = 'forkflow-tree-withdraw-1';

/** Whether this run takes part in a tree ledger: decided once, at its start. */
export function usesTreeLedger(agent: ForkAgent): boolean {
  const input = agent.input;
  const isRoot = agent.rootAgentId === agent.agentId && !input.parentAgentId;
  const wants = isRoot ? input.subAgents?.enabled === true : input.treeLedger === true;
  return wants && patched(TREE_LEDGER_PATCH);
}

/** The root's new ledger (a continuing run adopts the carried one instead). */
export function rootLedgerFor(agent: ForkAgent): TreeLedger {
  const config = agent.input.subAgents;
  return newLedger(
    { agentId: agent.agentId, model: agent.model, budget: agent.input.budget.maxTokens },
    { maxTreeRunning: config?.maxTreeRunning ?? 8, maxTreeSpawns: config?.maxTreeSpawns ?? 200 },
  );
}

function rejectWith(issues: string[]): never {
  throw new Error(`Invalid tree ledger request: ${issues.join('; ')}`);
}

/**
 * The root's handlers. Validators refuse malformed requests (the sender gets the reason, the
 * root is untouched); the handlers are synchronous, so continue-as-new never waits on them.
 */
export function registerLedgerHandlers(agent: ForkAgent): void {
  const book = () => agent.book!;
  setHandler(admitAgentUpdate, (req) => admit(book(), req), {
    validator: (raw: unknown) => {
      const p = admitRequestSchema.safeParse(raw);
      if (!p.success) rejectWith(describeIssues(p.error));
    },
  });
  setHandler(reserveTokensUpdate, (req) => reserve(book(), req), {
    validator: (raw: unknown) => {
      const p = reserveRequestSchema.safeParse(raw);
      if (!p.success) rejectWith(describeIssues(p.error));
    },
  });
  setHandler(chargeTokensUpdate, (req) => charge(book(), req), {
    validator: (raw: unknown) => {
      const p = chargeRequestSchema.safeParse(raw);
      if (!p.success) rejectWith(describeIssues(p.error));
    },
  });
  setHandler(agentEndedSignal, (raw: unknown) => {
    const p = agentEndedSchema.safeParse(raw);
    if (!p.success) return agent.rejectSignal('treeAgentEnded', describeIssues(p.error));
    if (p.data.started === false) withdraw(book(), p.data.agentId);
    else ended(book(), p.data.agentId);
  });
}

/** Asks the root to admit a child: locally at the root, by activity elsewhere. */
export async function admitChild(agent: ForkAgent, req: AdmitRequest): Promise<AdmitResult> {
  if (agent.book) return admit(agent.book, req);
  return tree.admitAgent.executeWithOptions({ summary: `admit ${req.agentId} at the tree's root` }, [{ rootId: agent.rootAgentId, request: req }]);
}

/** Tells the root a child ended (it stops counting as running). Never fails the caller. */
export async function childEnded(agent: ForkAgent, agentId: string): Promise<void> {
  if (!agent.inTreeLedger) return;
  if (agent.book) return ended(agent.book, agentId);
  try {
    await getExternalWorkflowHandle(agent.rootAgentId).signal(agentEndedSignal, { agentId });
  } catch {
    // The root is gone: so is the tree's count of running agents.
  }
}

/**
 * Takes back an admission whose child never started, even while this agent is being
 * cancelled (the reason it may not have started). Never fails the caller.
 */
export async function withdrawChild(agent: ForkAgent, agentId: string): Promise<void> {
  if (!agent.inTreeLedger || !patched(WITHDRAW_PATCH)) return;
  if (agent.book) return withdraw(agent.book, agentId);
  await CancellationScope.nonCancellable(async () => {
    try {
      await getExternalWorkflowHandle(agent.rootAgentId).signal(agentEndedSignal, { agentId, started: false });
    } catch {
      // The root is gone, and its ledger with it.
    }
  });
}
