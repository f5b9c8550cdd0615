/**
 * A `bubble` sub-agent's permission requests answered by its parent agent (seed 001: bubble
 * "surfaces permission requests to the parent"). In a tree with `subAgents.parentApprovals`,
 * a child waiting for approval also tells its parent's workflow (signal `permissionRequest`);
 * the parent's model reads the request at its next turn boundary and answers it with the
 * `AnswerApproval` tool, which sends the child the decision an operator could have sent
 * (signal `approvalDecision`, `by` the parent's id). An operator may still decide first.
 * Offered only in such trees, so other agents' tool definitions keep their bytes.
 */
import { z } from 'zod';
import type { ToolDefinition } from '../messages-api/anthropic';
import { schemaOnce } from '../base/schema-once';
import { treeTokenSchema } from './tree-ledger';

/** The tool's name (PascalCase verb-noun, as Claude Code's tools are). */
export const ANSWER_APPROVAL = 'AnswerApproval';

export const answerApprovalToolInput = schemaOnce('tree/parent-approvals#answerApprovalToolInput', () => z.strictObject({
  agent_id: z.string().min(1).max(400).describe('The sub-agent that asked (its agent id, or the name you gave it).'),
  request_id: z.string().min(1).max(200).optional().describe('The request id from its permission request (default: the latest it sent you).'),
  decision: z.enum(['approve', 'deny']).describe('approve: the call runs; deny: it does not, and the sub-agent reads your reason.'),
  reason: z.string().min(1).max(2000).optional().describe('Why (the sub-agent reads it with the decision).'),
}));
export type AnswerApprovalToolInput = z.infer<typeof answerApprovalToolInput>;

/** The definition the model sees (fixed bytes). */
export function answerApprovalTool(): ToolDefinition {
  const schema = z.toJSONSchema(answerApprovalToolInput, { target: 'draft-7' }) as Record<string, unknown>;
  delete schema.$schema;
  return {
    name: ANSWER_APPROVAL,
    description: 'Answer a permission request of one of your sub-agents (it waits, in bubble mode, before a change such as a file write): approve to let the call run, deny to refuse it.',
    input_schema: { type: 'object', ...schema },
  };
}

/** What a child sends its parent when one of its calls waits for a decision. */
export const permissionRequestSchema = schemaOnce('tree/parent-approvals#permissionRequestSchema', () => z.strictObject({
  childId: z.string().min(1).max(400),
  requestId: z.string().min(1).max(200),
  tool: z.string().min(1).max(200),
  /** A short rendering of the call (approvals.ts describeCall). */
  summary: z.string().min(1).max(1000),
  /** The tree's capability: only the child itself asks (its parent checks it, as for a child's report). */
  token: treeTokenSchema.optional(),
}));
export type PermissionRequest = z.infer<typeof permissionRequestSchema>;

/** How the request reads to the parent's model (queued as a message from the child). */
export function renderPermissionRequest(r: PermissionRequest, childName: string | undefined): string {
  const who = childName ? `"${childName}" (${r.childId})` : r.childId;
  return `[permission request from ${who}]\nYour sub-agent ${who} asks to run ${r.summary} (request ${r.requestId}) and waits. Answer with ${ANSWER_APPROVAL} (agent_id "${r.childId}", request_id "${r.requestId}", decision approve or deny); an operator may decide it first.`;
}
