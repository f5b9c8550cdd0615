/** Look-ups across an agent tree through Temporal visibility (eventually consistent). */
import type { Client } from '@temporalio/client';
import { WORKFLOW_TYPES } from '../shared/constants';

export function createTreeActivities(deps: { client: Client }) {
  return {
    /** Agents of a tree that are running now (for the per-tree concurrency limit). */
    async countRunningAgents(input: { rootId: string }): Promise<number> {
      const query = `WorkflowType = '${WORKFLOW_TYPES.fork}' AND ForkRootId = '${input.rootId.replace(/'/g, "\\'")}' AND ExecutionStatus = 'Running'`;
      const { count } = await deps.client.workflow.count(query);
      return count;
    },
  };
}
