/**
 * How a sub-agent's start and outcome read to the model that started it: `async_launched`
 * (what runs, where its output is, how to wait) and a finished child's outcome view (status,
 * content, usage, totals, how to continue it). Each later field sits behind the patch that
 * added it: tool results are in recorded conversations, so recorded runs keep their bytes.
 */
import { patched } from '@temporalio/workflow';
import type { ChildRecord } from '../../shared/tree/tree-input';
import type { ForkAgent } from './agent';
import { launchedOutputFields, outcomeTotals } from './agent-output';

/**
 * Before this patch `completed` had no SendMessage hint, and `async_launched` no `prompt` or
 * (for a fork) `messages_inherited` (seeds 001 and 002 show them); the tool results are in
 * the conversation, so recorded runs keep their bytes.
 */
export const LAUNCH_VIEWS_PATCH = 'forkflow-launch-views-1';

/**
 * A child's outcome as a tool result. Its wall-clock duration and total tokens only under
 * OUTCOME_TOTALS_PATCH (agent-output.ts; seed 001's `completed` has them): recorded runs keep their bytes.
 */
export function outcomeView(record: ChildRecord) {
  const o = record.result;
  if (!o) return { status: 'running', agentId: record.agentId, ...(record.name ? { name: record.name } : {}) };
  const hint = o.status === 'completed' && patched(LAUNCH_VIEWS_PATCH) ? { note: `To continue this agent from its own history, SendMessage to "${record.name ?? record.agentId}".` } : {};
  return { status: o.status, agentId: record.agentId, ...(record.name ? { name: record.name } : {}), content: o.text, ...(o.error ? { error: o.error } : {}), usage: o.treeUsage, toolUses: o.toolUses, ...outcomeTotals(o), ...(o.worktree ? { worktree: o.worktree } : {}), ...hint };
}

/** With teams on, how the caller and its running child reach each other (the child's prompt opens with the other half). */
function launchComms(agent: ForkAgent, record: ChildRecord): string {
  if (agent.input.subAgents?.teams !== true) return '';
  return ` While it runs, SendMessage to "${record.name ?? record.agentId}" reaches it at its next turn boundary, and it can SendMessage you.`;
}

/**
 * Before this patch `async_launched` did not say what the child runs on or that it runs (seed
 * 002's spawn response: provider, model, state); its bytes are in recorded conversations.
 */
export const LAUNCH_PLACE_PATCH = 'forkflow-launch-model-1';

/** What a launched child runs on, for its `async_launched`. */
export interface LaunchedOn {
  provider: string;
  model: string;
}

/**
 * `inherited`: for a fork, how many of the caller's messages it starts from; `on`: the provider
 * and model it runs on (seed 002), shown with its state under LAUNCH_PLACE_PATCH.
 */
export function launched(agent: ForkAgent, record: ChildRecord, note?: string, inherited?: number, on?: LaunchedOn) {
  const more = patched(LAUNCH_VIEWS_PATCH);
  const place = on && patched(LAUNCH_PLACE_PATCH) ? { state: 'running', provider: on.provider, model: on.model } : {};
  const file = launchedOutputFields(agent, record);
  const read = file.outputFile ? ' Read outputFile for its output so far.' : '';
  const comms = launchComms(agent, record);
  return {
    status: 'async_launched',
    agentId: record.agentId,
    ...(record.name ? { name: record.name } : {}),
    description: record.description,
    ...place,
    ...(more ? { prompt: record.agentInput.prompt } : {}),
    ...(more && inherited !== undefined ? { messages_inherited: inherited } : {}),
    ...file,
    output: `Its report arrives as a task notification.${read}${comms} To wait for it now: TaskOutput with task_id "${record.agentId}" (or \`forkflow result ${record.agentId}\`).`,
    ...(note ? { note } : {}),
  };
}
