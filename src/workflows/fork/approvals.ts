/**
 * Durable approvals (`permissionMode` `default` and `bubble`): a writing tool call waits, in
 * workflow state, for a decision — an update (`decideApproval`, validated: rejected at once
 * when nothing is pending under that id) from an operator, the Web UI or a client, or a signal
 * (`approvalDecision`) from another workflow. Waiting survives worker and server restarts;
 * the timeout policy denies the call or fails the agent. A decision that arrives after its
 * request stopped waiting undecided (expired, or its turn interrupted) is queued to the agent
 * as a message (seed 001's orphaned permission response): the call is not run by it.
 */
import { condition, log, setHandler, sleep, type ApplicationFailure } from '@temporalio/workflow';
import type { ToolUseBlock } from '../../shared/messages-api/anthropic';
import { toMs } from '../../shared/base/duration';
import { FAILURE, failure, invalid } from '../../shared/wire/failures';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import { approvalDecisionSchema, approvalDecisionSignal, decideApprovalUpdate, type ApprovalDecision } from '../../shared/wire/messages';
import { clip } from '../../shared/base/text';
import type { PendingApproval } from '../../shared/tree/tree-input';
import { isoNow } from '../clock';
import type { ForkAgent } from './agent';
import { setState } from './visibility';
import { whileWaiting } from './keep-alive';
import { approvalDecided, approvalRequested } from '../metrics';
import { askParent, asksParent, registerPermissionRequests } from './parent-approvals';

function pendingIds(agent: ForkAgent): string {
  return agent.approvals.pending().map((a) => a.requestId).join(', ') || 'none';
}

/** A decision for a request that is not pending: rejected, never a workflow-task failure. */
function unknownRequest(agent: ForkAgent, requestId: string): ApplicationFailure {
  return failure(FAILURE.unknownApprovalRequest, `No pending approval "${requestId}". Pending: ${pendingIds(agent)}.`);
}

function pendingRequest(agent: ForkAgent, requestId: string): PendingApproval | undefined {
  return agent.approvals.find(requestId);
}

function apply(agent: ForkAgent, request: PendingApproval, d: ApprovalDecision): void {
  agent.approvals.decide(request, { outcome: d.decision === 'approve' ? 'approved' : 'denied', ...(d.by ? { by: d.by } : {}), ...(d.reason ? { reason: d.reason } : {}) });
}

/** A decision for a request that stopped waiting undecided: recorded, and queued to the agent as a message. */
function applyLate(agent: ForkAgent, request: PendingApproval, d: ApprovalDecision): { requestId: string; outcome: 'approved' | 'denied' } {
  apply(agent, request, d);
  const who = d.by ? ` by ${d.by}` : '';
  const why = d.reason ? ` Reason: ${d.reason}.` : '';
  const text =
    d.decision === 'approve'
      ? `[late permission decision${who}]\n${request.summary} (request ${request.requestId}) was approved${who} after it had stopped waiting, so it was not run.${why} If it is still needed, make the call again (it asks again).`
      : `[late permission decision${who}]\n${request.summary} (request ${request.requestId}) was denied${who} after it had stopped waiting; it was not run.${why} Do not retry it.`;
  agent.inbox.enqueue({ priority: 'next', kind: 'message', text, ...(d.by ? { from: d.by } : {}), summary: `late ${d.decision === 'approve' ? 'approval' : 'denial'} of ${request.tool}` });
  log.info('fork.approval_late', { agentId: agent.agentId, requestId: request.requestId, decision: d.decision });
  return { requestId: request.requestId, outcome: request.decision!.outcome };
}

export function registerApprovalHandlers(agent: ForkAgent): void {
  // As a parent: its bubble sub-agents' requests, for its model to answer (parent-approvals.ts).
  registerPermissionRequests(agent);
  setHandler(
    decideApprovalUpdate,
    async (d) => {
      // The validator ran in this same activation, so the request is still pending; should
      // that ever not hold, the update is rejected as data (ApplicationFailure), not a task failure.
      const request = pendingRequest(agent, d.requestId);
      if (!request) {
        // The validator let it through: a late decision, queued to the agent.
        const lapsed = agent.approvals.lapsed(d.requestId);
        if (!lapsed) throw unknownRequest(agent, d.requestId);
        return applyLate(agent, lapsed, d);
      }
      apply(agent, request, d);
      // Returns once the agent has acted on the decision. This also fixes the order of the
      // update's completion after the agent's own commands, the same on every replay (a
      // synchronous return left it to the SDK's activation batching).
      await condition(() => request.consumed === true);
      return { requestId: request.requestId, outcome: request.decision!.outcome };
    },
    {
      // Rejections here never reach history: the update is refused before it is accepted.
      validator: (raw: unknown) => {
        const parsed = approvalDecisionSchema.safeParse(raw);
        if (!parsed.success) {
          throw invalid(FAILURE.invalidApprovalDecision, 'Invalid decision', describeIssues(parsed.error));
        }
        const id = parsed.data.requestId;
        if (!pendingRequest(agent, id) && !agent.approvals.lapsed(id)) throw unknownRequest(agent, id);
      },
    },
  );
  setHandler(approvalDecisionSignal, (raw: unknown) => {
    const parsed = approvalDecisionSchema.safeParse(raw);
    if (!parsed.success) return agent.rejectSignal('approvalDecision', describeIssues(parsed.error));
    const request = pendingRequest(agent, parsed.data.requestId);
    if (!request) {
      const lapsed = agent.approvals.lapsed(parsed.data.requestId);
      if (lapsed) return void applyLate(agent, lapsed, parsed.data);
      return agent.rejectSignal('approvalDecision', [unknownRequest(agent, parsed.data.requestId).message]);
    }
    apply(agent, request, parsed.data);
  });
}

export type ApprovalOutcome = { approved: true } | { approved: false; message: string };

function describeCall(use: ToolUseBlock): string {
  const input = use.input as Record<string, unknown>;
  const target = typeof input.command === 'string' ? input.command : typeof input.file_path === 'string' ? input.file_path : JSON.stringify(input);
  return `${use.name}: ${clip(target, 200)}`;
}

/** Waits for a decision on one tool call (the request id is the tool_use id). */
export async function awaitApproval(agent: ForkAgent, use: ToolUseBlock): Promise<ApprovalOutcome> {
  const request: PendingApproval = { requestId: use.id, toolUseId: use.id, tool: use.name, summary: describeCall(use), requestedAt: isoNow() };
  agent.approvals.request(request);
  setState(agent, 'awaiting_approval');
  log.info('fork.approval_requested', { agentId: agent.agentId, requestId: request.requestId, call: request.summary });
  approvalRequested(use.name);
  // In a tree with subAgents.parentApprovals a bubble request goes up to the parent agent too.
  if (asksParent(agent)) await askParent(agent, request);
  // The timeout is a timer left to fire rather than one cancelled on decision: cancelling it
  // from an update's completion orders commands differently on replay (sdk-typescript#1966).
  let expired = false;
  sleep(toMs(agent.input.approval.timeout)).then(
    () => (expired = true),
    () => undefined, // the agent was cancelled: nothing to time out
  );
  try {
    await whileWaiting(agent, () => condition(() => request.decision !== undefined || expired));
  } catch (err) {
    approvalDecided(use.name, 'cancelled'); // the fork was cancelled (or its turn interrupted) while waiting
    if (agent.turnControl.stoppedBy(err)) {
      // An interrupted agent goes on: the request is no longer pending.
      agent.approvals.close(request);
      if (!agent.approvals.length) setState(agent, 'running');
    }
    throw err;
  }
  agent.approvals.close(request);
  const decided = request.decision !== undefined;
  approvalDecided(use.name, decided ? request.decision!.outcome : 'expired');
  if (!agent.approvals.length) setState(agent, 'running');
  if (!decided) {
    if (agent.input.approval.onTimeout === 'fail') {
      throw failure(FAILURE.approvalTimedOut, `No decision on ${request.summary} within ${String(agent.input.approval.timeout)}.`);
    }
    return { approved: false, message: `Not run: nobody approved ${request.summary} within ${String(agent.input.approval.timeout)}. Continue without it or report that it needs approval.` };
  }
  if (request.decision!.outcome === 'approved') return { approved: true };
  const who = request.decision!.by ? ` by ${request.decision!.by}` : '';
  return { approved: false, message: `Denied${who}: ${request.summary}.${request.decision!.reason ? ` Reason: ${request.decision!.reason}.` : ''} Do not retry it; continue without it.` };
}
