/**
 * Peer messages: SendMessage from any agent of a tree to any other, by name or id, and to a
 * whole team (`*`). The tree's root resolves the address and counts the message in its ledger
 * (src/shared/tree/team-ledger.ts; locally at the root, by a local activity elsewhere), then the
 * sender signals each receiver itself, in order. Every message carries the tree's capability,
 * so a receiver can tell a message of its own tree (whose `from` is true) from anything else.
 *
 * Exactly once: the route is idempotent by the tool call's id, and each signal is one command
 * of the sender's history (never sent again on replay); the receiver queues it in its inbox,
 * which continue-as-new carries, and hands it to its model at its next turn boundary.
 */
import { getExternalWorkflowHandle, isCancellation } from '@temporalio/workflow';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages-api/anthropic';
import type { SendMessageCallInput } from '../../shared/tree/agent-tools';
import { sendMessageSignal, type SendMessageArgs } from '../../shared/wire/messages';
import { routeMessage, type RouteRequest, type RouteResult, type RouteTarget } from '../../shared/tree/team-ledger';
import { clip } from '../../shared/base/text';
import { tree } from '../activities';
import type { ForkAgent } from './agent';
import { errorResult, jsonResult } from './tool-results';
import { withTreeToken } from './tree-authority';
import { routeByRoot } from './root-calls';

/**
 * Before this patch an agent signalled the id its model named (its own children by name), with
 * no capability and nothing counted; histories recorded then replay on that path.
 */
export const PEER_MESSAGES_PATCH = 'forkflow-peer-messages-1';

/** Asks the root where the message goes (and has it counted). */
async function route(agent: ForkAgent, req: RouteRequest): Promise<RouteResult> {
  if (agent.book) return routeMessage(agent.book, req);
  // In a tree that lends shares, by signal: no update slot at the root, whatever the number of workers.
  if (agent.shares && !agent.shares.untethered) return routeByRoot(agent, req);
  try {
    return await tree.routeMessage.executeWithOptions({ summary: `route a message to ${clip(req.to, 60)}` }, [{ rootId: agent.rootAgentId, request: req }]);
  } catch (err) {
    if (isCancellation(err)) throw err;
    const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    return { ok: false, reason: `The tree's root did not answer, so nothing was sent (${clip(why, 300)}). Try again.` };
  }
}

export type Delivery = { ok: true; targets: RouteTarget[]; sent: string[]; missed: string[] } | { ok: false; reason: string };

/** Routes a message at the root (counted once per `key`), then signals each receiver in order. */
export async function deliverPeer(agent: ForkAgent, key: string, input: SendMessageCallInput): Promise<Delivery> {
  const structured = typeof input.message !== 'string';
  const routed = await route(agent, { from: agent.agentId, to: input.to, key, structured, ...withTreeToken(agent) });
  if (!routed.ok) return routed;
  const payload: SendMessageArgs = {
    message: typeof input.message === 'string' ? input.message : JSON.stringify(input.message),
    ...(input.summary ? { summary: input.summary } : {}),
    from: agent.agentId,
    ...(routed.fromName ? { fromName: routed.fromName } : {}),
    fromTree: agent.rootAgentId,
    ...withTreeToken(agent),
    ...(typeof input.message === 'string' ? {} : { data: input.message }),
  };
  const sent: string[] = [];
  const missed: string[] = [];
  for (const target of routed.targets) {
    try {
      await getExternalWorkflowHandle(target.agentId).signal(sendMessageSignal, payload);
      sent.push(target.name ?? target.agentId);
    } catch (err) {
      if (isCancellation(err)) throw err;
      missed.push(target.name ?? target.agentId);
    }
  }
  return { ok: true, targets: routed.targets, sent, missed };
}

/** One SendMessage call as a peer message, answered as its tool result. */
export async function peerSend(agent: ForkAgent, use: ToolUseBlock, input: SendMessageCallInput): Promise<ToolResultBlock> {
  const d = await deliverPeer(agent, use.id, input);
  if (!d.ok) return errorResult(use.id, d.reason);
  if (d.sent.length === 0) return errorResult(use.id, `${d.missed.join(', ')} has ended: the message was not delivered.`);
  const one = d.targets.length === 1 ? d.targets[0]! : undefined;
  return jsonResult(use.id, {
    status: 'queued',
    ...(one ? { agentId: one.agentId, ...(one.name ? { name: one.name } : {}) } : { to: d.sent }),
    ...(d.missed.length ? { notDelivered: d.missed } : {}),
    note: 'It reads your message at its next turn boundary.',
  });
}
