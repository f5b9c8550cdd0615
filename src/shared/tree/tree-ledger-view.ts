/**
 * The tree ledger as status and results show it: per-agent facts without the ledger's
 * bookkeeping (reservations, turn numbers), and the ledger without the tree's capability.
 */
import type { Usage } from '../messages-api/anthropic';
import type { TreeLedger } from './tree-ledger';

export function publicLedger(ledger: TreeLedger): TreeLedger {
  const { token: _secret, ...rest } = ledger;
  return rest;
}

export interface LedgerAgentView {
  agentId: string;
  parentId?: string;
  model: string;
  state: 'running' | 'ended';
  budget: number;
  charged: number;
  usage: Usage;
  costUsd: number;
  turns: number;
  toolUses: number;
  runs: number;
  /** Keep-alive calls charged (absent before the first). */
  keepAlives?: number;
  /** forkflow compaction calls charged (absent before the first). */
  compactions?: number;
  /** Its name in the tree, and a teammate's team. */
  name?: string;
  team?: string;
  /** Peer messages it sent and received (absent before the first). */
  messages?: { sent: number; received: number };
  /** In a tree that lends budget shares: tokens lent to it and not given back (what it holds, and what it spent but has not reported yet). */
  lent?: number;
}

export function ledgerView(ledger: TreeLedger): LedgerAgentView[] {
  return Object.values(ledger.nodes).map(({ agentId, parentId, model, state, budget, charged, usage, costUsd, turns, toolUses, runs, keepAlives, compactions, name, team, messages, lent }) => ({
    agentId,
    ...(parentId ? { parentId } : {}),
    model,
    state,
    budget,
    charged,
    usage,
    costUsd,
    turns,
    toolUses,
    runs,
    ...(keepAlives ? { keepAlives } : {}),
    ...(compactions ? { compactions } : {}),
    ...(name ? { name } : {}),
    ...(team ? { team } : {}),
    ...(messages ? { messages: { sent: messages.sent, received: messages.received } } : {}),
    ...(lent !== undefined && lent > charged ? { lent } : {}),
  }));
}
