/**
 * A teammate in plan mode (Agent `mode: "plan"`, seed 001's plan_mode_required) asks its lead
 * before it acts: its first tool call that is not read-only is sent to the lead as a structured
 * `plan_approval_request` (request_id, tool, input) and waits, in workflow state, for the lead's
 * `plan_approval_response` (approve, feedback). Approved: the call runs and plan mode is over
 * (carried across continue-as-new). Refused, or no answer within the agent's approval timeout:
 * the call is not run and the model reads why. Read-only calls never wait.
 */
import { condition } from '@temporalio/workflow';
import type { ToolUseBlock } from '../../shared/messages-api/anthropic';
import { toMs } from '../../shared/base/duration';
import { canonicalJson } from '../../shared/base/hash';
import { LEAD } from '../../shared/tree/team-ledger';
import { PLAN_APPROVAL_REQUEST, planApprovalResponseSchema } from '../../shared/tree/team';
import { clip } from '../../shared/base/text';
import type { ToolTraits } from '../../shared/tools/table';
import type { ForkAgent } from './agent';
import { whileWaiting } from './keep-alive';
import { deliverPeer } from './team-messages';
import { setState } from './visibility';

/** The request waiting for the lead's answer (at most one: a tool round's writing calls run one at a time). Not state: it lives inside one tool round. */
const waiting = new WeakMap<ForkAgent, { requestId: string; answer?: { approve: boolean; feedback?: string } }>();

/** Whether this call must wait for the lead's approval first. */
export function needsPlanApproval(agent: ForkAgent, tool: ToolTraits | undefined): boolean {
  return agent.input.team?.planApproval === true && !agent.team.planApproved && tool?.readOnly !== true;
}

/** The lead's `plan_approval_response` (handlers.ts): true when it answered the request waiting here. */
export function decidePlan(agent: ForkAgent, data: unknown): boolean {
  const parsed = planApprovalResponseSchema.safeParse(data);
  const pending = waiting.get(agent);
  if (!parsed.success || !pending || pending.answer || parsed.data.request_id !== pending.requestId) return false;
  pending.answer = { approve: parsed.data.approve, ...(parsed.data.feedback ? { feedback: parsed.data.feedback } : {}) };
  return true;
}

/** Asks the lead and waits; undefined when approved, else the reason the call is not run. */
export async function askLead(agent: ForkAgent, use: ToolUseBlock): Promise<string | undefined> {
  const request = { type: PLAN_APPROVAL_REQUEST, request_id: use.id, tool: use.name, input: clip(canonicalJson(use.input), 2000) };
  const pending: { requestId: string; answer?: { approve: boolean; feedback?: string } } = { requestId: use.id };
  waiting.set(agent, pending);
  try {
    const sent = await deliverPeer(agent, `${use.id}#plan`, { to: LEAD, message: request });
    if (!sent.ok || sent.sent.length === 0) return `Not run: you are in plan mode and your plan approval request could not reach your lead (${sent.ok ? 'it has ended' : sent.reason}).`;
    setState(agent, 'awaiting_approval');
    agent.doing(`waiting for its lead to approve ${use.name}`);
    const answered = await whileWaiting(agent, () => condition(() => pending.answer !== undefined, toMs(agent.input.approval.timeout)));
    agent.doing(undefined);
    setState(agent, 'running');
    if (!answered || !pending.answer) return 'Not run: your lead did not answer your plan approval request in time. Keep to reading and planning, or ask your lead by SendMessage.';
    if (!pending.answer.approve) return `Not run: your lead did not approve it${pending.answer.feedback ? `: ${pending.answer.feedback}` : '.'} Revise your plan.`;
    agent.team.approvePlan();
    return undefined;
  } finally {
    waiting.delete(agent);
  }
}
