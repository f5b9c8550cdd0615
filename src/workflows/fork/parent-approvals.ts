/**
 * The workflow side of src/shared/tree/parent-approvals.ts: a `bubble` child tells its parent that a
 * call waits (askParent), the parent queues the request to its model, moving a sync child it
 * waits on to the background so that its model can answer at all (registerPermissionRequests),
 * and the parent's AnswerApproval call sends the child its decision (answerApprovalCall).
 * Nothing here fails an agent: a parent that is gone leaves the request to operators.
 */
import { getExternalWorkflowHandle, isCancellation, log, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages-api/anthropic';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import { approvalDecisionSignal, permissionRequestSignal } from '../../shared/wire/messages';
import { answerApprovalToolInput, permissionRequestSchema, renderPermissionRequest } from '../../shared/tree/parent-approvals';
import type { PendingApproval } from '../../shared/tree/tree-input';
import { undecodableReason } from '../../shared/wire/undecodable';
import type { ForkAgent } from './agent';
import { errorResult, jsonResult } from './tool-results';
import { dropSignal, treeTokenOf, withTreeToken } from './tree-authority';
import { publishProgress } from './visibility';

/** Per parent: the latest request each child sent (AnswerApproval's default). Not state: a request made before a continue-as-new is answered by its id. */
const latest = new WeakMap<ForkAgent, Map<string, string>>();

/** Whether this agent's requests go to its parent agent too (set by a parent with `subAgents.parentApprovals`). */
export function asksParent(agent: ForkAgent): boolean {
  return agent.input.permissionMode === 'bubble' && agent.input.approval.toParent === true && agent.input.parentAgentId !== undefined && workflowInfo().parent !== undefined;
}

/** Tells the parent agent that `request` waits; a parent that cannot be told leaves it to operators. */
export async function askParent(agent: ForkAgent, request: PendingApproval): Promise<void> {
  const parent = workflowInfo().parent!;
  try {
    await getExternalWorkflowHandle(parent.workflowId).signal(permissionRequestSignal, { childId: agent.agentId, requestId: request.requestId, tool: request.tool, summary: request.summary, ...withTreeToken(agent) });
  } catch (err) {
    if (isCancellation(err)) throw err;
    agent.notice(`Its permission request ${request.requestId} could not reach its parent (${err instanceof Error ? err.message : String(err)}): only an operator can decide it.`);
  }
}

/** The parent's handler: a running child's request, queued to the model (registered with the other handlers, before any await). */
export function registerPermissionRequests(agent: ForkAgent): void {
  setHandler(permissionRequestSignal, (raw: unknown) => {
    const undecodable = undecodableReason(raw);
    if (undecodable) return dropSignal(agent, 'permissionRequest', [undecodable]);
    const parsed = permissionRequestSchema.safeParse(raw);
    if (!parsed.success) return dropSignal(agent, 'permissionRequest', describeIssues(parsed.error));
    const token = treeTokenOf(agent);
    if (token !== undefined && parsed.data.token !== token) return dropSignal(agent, 'permissionRequest', [`from ${parsed.data.childId.slice(0, 200)} without the capability of tree ${agent.rootAgentId}`]);
    const child = agent.children.find(parsed.data.childId);
    if (!child || child.agentId !== parsed.data.childId || child.state !== 'running') return dropSignal(agent, 'permissionRequest', [`${parsed.data.childId.slice(0, 200)} is not a running sub-agent of ${agent.agentId}`]);
    agent.inbox.enqueue({ priority: 'next', kind: 'message', text: renderPermissionRequest(parsed.data, child.name), from: child.agentId, summary: `permission request: ${parsed.data.tool}` });
    const requests = latest.get(agent) ?? new Map<string, string>();
    latest.set(agent, requests.set(child.agentId, parsed.data.requestId));
    log.info('fork.permission_request_to_parent', { agentId: agent.agentId, childId: child.agentId, requestId: parsed.data.requestId });
    // The model reads it only between turns: a tool call waiting for this very child stops waiting.
    // (Not where background tasks are disabled: there only an operator can decide it while the parent waits.)
    if (agent.turnControl.isWaitingFor(child.agentId) && agent.input.backgroundTasks !== false) agent.turnControl.requestBackground(child.agentId, 'its permission request');
    publishProgress(agent);
  });
}

/** AnswerApproval: sends one's own running sub-agent the decision on its request. */
export async function answerApprovalCall(agent: ForkAgent, use: ToolUseBlock): Promise<ToolResultBlock> {
  const parsed = answerApprovalToolInput.safeParse(use.input);
  if (!parsed.success) return errorResult(use.id, `Invalid AnswerApproval call: ${describeIssues(parsed.error).join('; ')}`);
  const { agent_id, decision, reason } = parsed.data;
  const child = agent.children.find(agent_id);
  if (!child) return errorResult(use.id, `No sub-agent "${agent_id}" of yours: answer only your own sub-agents' permission requests.`);
  if (child.state !== 'running') return errorResult(use.id, `${child.agentId} is ${child.state}: nothing of it waits for a decision.`);
  const request_id = parsed.data.request_id ?? latest.get(agent)?.get(child.agentId);
  if (request_id === undefined) return errorResult(use.id, `${child.agentId} has sent you no permission request: give the request_id from its request.`);
  try {
    await getExternalWorkflowHandle(child.agentId).signal(approvalDecisionSignal, { requestId: request_id, decision, by: agent.agentId, ...(reason ? { reason } : {}) });
  } catch (err) {
    if (isCancellation(err)) throw err;
    return errorResult(use.id, `Your answer did not reach ${child.agentId}: it has ended.`);
  }
  return jsonResult(use.id, { status: 'sent', agentId: child.agentId, request_id, decision, note: 'It acts on your answer if the request still waits; an answer to a request that stopped waiting reaches it as a message.' });
}
