/**
 * An agent's usage together with its finished children's subtrees, and the estimated cost:
 * what its status and its result report as the tree's totals. Children no longer on record
 * (trimmed, or resumed and running again) count through `folded`, so nothing a finished
 * child spent is lost. Reads a narrow view, so any module may use it without importing the agent.
 */
import { addUsage, subtractUsage, type Usage } from '../../shared/messages-api/anthropic';
import type { FoldedUsage } from '../../shared/wire/carried-state';
import { estimateCostUsd, type Price } from '../../shared/providers/pricing';
import type { ChildRecord } from '../../shared/tree/tree-input';

export interface TreeView {
  readonly model: string;
  readonly usage: Usage;
  readonly children: readonly ChildRecord[];
  readonly folded: FoldedUsage;
  /** Calls fallback providers served (src/shared/providers/failover.ts): their usage is in `usage`, priced apart. */
  readonly fallbacks?: { usage: Usage; costUsd: number };
  /** Its model's price as its provider entry configures it (absent: the built-in table). */
  readonly price?: Price;
}

export function treeTotals(agent: TreeView): { usage: Usage; costUsd: number; agents: number } {
  let usage = addUsage(agent.usage, agent.folded.usage);
  // What fallbacks served is charged at their prices, the rest at the agent's model's.
  const own = agent.fallbacks && agent.fallbacks.costUsd + agent.fallbacks.usage.inputTokens + agent.fallbacks.usage.outputTokens > 0 ? estimateCostUsd(agent.model, subtractUsage(agent.usage, agent.fallbacks.usage), agent.price) + agent.fallbacks.costUsd : estimateCostUsd(agent.model, agent.usage, agent.price);
  let costUsd = own + agent.folded.costUsd;
  for (const c of agent.children) {
    if (!c.result) continue;
    usage = addUsage(usage, c.result.treeUsage);
    costUsd += c.result.treeCostUsd;
  }
  return { usage, costUsd: Math.round(costUsd * 1_000_000) / 1_000_000, agents: 1 + agent.children.length + agent.folded.agents };
}
