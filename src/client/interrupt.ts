/**
 * Client side of "interrupt is not kill": interrupting an agent's turn (the `interrupt`
 * update) and moving a running sync sub-agent to the background (the `backgroundChild`
 * update, sent to its parent). Input is validated here first; the workflow's validator
 * refuses what it cannot act on, and its words come back as a ForkflowError.
 */
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { describeIssues } from '../shared/wire/fork-input-validation';
import {
  backgroundChildArgsSchema,
  backgroundChildUpdate,
  interruptArgsSchema,
  interruptUpdate,
  type BackgroundChildAnswer,
  type InterruptAnswer,
  type InterruptArgs,
} from '../shared/tree/interrupt';
import { AgentNotFoundError, ForkflowError, InvalidInputError } from './errors';

export type { BackgroundChildAnswer, InterruptAnswer, InterruptArgs } from '../shared/tree/interrupt';

async function update<T>(agentId: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new AgentNotFoundError(agentId);
    // The validator's words (nothing in flight, no such sub-agent), not the SDK's generic wrapper.
    if (err instanceof WorkflowUpdateFailedError && err.cause) throw new ForkflowError(`${agentId}: ${err.cause.message}`);
    throw err;
  }
}

/**
 * Interrupts the agent's turn in flight; resolves once the turn has stopped. Without a
 * message the agent then waits for one (it is `idle`); with one it goes on with it.
 */
export async function interruptAgent(client: Client, agentId: string, args: InterruptArgs = {}): Promise<InterruptAnswer> {
  const parsed = interruptArgsSchema.safeParse(args);
  if (!parsed.success) throw new InvalidInputError('interrupt', describeIssues(parsed.error));
  return update(agentId, () => client.workflow.getHandle(agentId).executeUpdate(interruptUpdate, { args: [parsed.data] }));
}

/**
 * Moves a running sync sub-agent to the background: its parent's Agent call stops waiting and
 * answers `async_launched`; the outcome reaches the parent later as a task notification.
 */
export async function backgroundAgent(client: Client, childId: string, opts: { by?: string } = {}): Promise<BackgroundChildAnswer> {
  const parsed = backgroundChildArgsSchema.safeParse({ child: childId, ...(opts.by ? { by: opts.by } : {}) });
  if (!parsed.success) throw new InvalidInputError('backgroundChild request', describeIssues(parsed.error));
  const described = await update(childId, () => client.workflow.getHandle(childId).describe());
  const parentId = described.parentExecution?.workflowId;
  if (!parentId) throw new ForkflowError(`${childId} is not a sub-agent (it has no parent workflow): nothing waits for it.`);
  return update(parentId, () => client.workflow.getHandle(parentId).executeUpdate(backgroundChildUpdate, { args: [parsed.data] }));
}
