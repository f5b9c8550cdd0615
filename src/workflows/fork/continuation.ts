/**
 * Long-lived agents continue as new before their history reaches Temporal's limits: at a
 * turn boundary, when the server suggests it, and only when nothing is in flight (no
 * running children — their completions are tied to this run — no pending approvals, no
 * unfinished handlers). The new run references this run's conversation (zero-copy) and
 * carries the agent's counters, inbox and children, so nothing is lost or counted twice.
 */
import { allHandlersFinished, continueAsNew, workflowInfo } from '@temporalio/workflow';
import type { ForkInputJson } from '../../shared/fork-input';
import { prefixRefOf } from '../conversation-queries';
import type { ForkAgent } from './agent';
import type { ForkWorkflowFn } from './signature';

export function shouldContinueAsNew(agent: ForkAgent): boolean {
  return workflowInfo().continueAsNewSuggested && agent.runningChildren.length === 0 && agent.approvals.length === 0 && allHandlersFinished();
}

export async function continueAsNewNow(agent: ForkAgent): Promise<never> {
  const { parent: _snapshot, parentRef: _ref, continuation: _previous, ...config } = agent.input;
  const next: ForkInputJson = {
    ...config,
    overrides: { ...config.overrides, agentId: agent.agentId },
    rootAgentId: agent.rootAgentId,
    continuation: { ref: prefixRefOf(agent), state: { ...agent.carry() } },
  };
  return continueAsNew<ForkWorkflowFn>(next);
}
