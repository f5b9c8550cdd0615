/**
 * An agent's usage together with its finished children's subtrees, and the estimated cost:
 * what its status and its result report as the tree's totals. Reads a narrow view, so any
 * module may use it without importing the agent.
 */
import { addUsage, type Usage } from '../../shared/anthropic';
import { estimateCostUsd } from '../../shared/pricing';
import type { ChildRecord } from '../../shared/tree-input';

export interface TreeView {
  readonly model: string;
  readonly usage: Usage;
  readonly children: readonly ChildRecord[];
}

export function treeTotals(agent: TreeView): { usage: Usage; costUsd: number; agents: number } {
  let usage = agent.usage;
  let costUsd = estimateCostUsd(agent.model, agent.usage);
  for (const c of agent.children) {
    if (!c.result) continue;
    usage = addUsage(usage, c.result.treeUsage);
    costUsd += c.result.treeCostUsd;
  }
  return { usage, costUsd: Math.round(costUsd * 1_000_000) / 1_000_000, agents: 1 + agent.children.length };
}
