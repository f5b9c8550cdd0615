/**
 * A receiver's side of peer messages: which messages it takes (a message claiming an agent of
 * its tree must carry the tree's capability), and the structured messages the runtime acts on
 * for a teammate — its lead's `shutdown_request` (it ends once idle, its model is not called
 * again for it) and `plan_approval_response` (decides its pending plan approval, team-plan.ts).
 * Everything else is queued for the model like any message.
 */
import { patched } from '@temporalio/workflow';
import type { SendMessageArgs } from '../../shared/wire/messages';
import { PLAN_APPROVAL_RESPONSE, SHUTDOWN_REQUEST } from '../../shared/tree/team';
import type { ForkAgent } from './agent';
import { PEER_MESSAGES_PATCH } from './team-messages';
import { treeTokenOf } from './tree-authority';

/**
 * Why a message must be dropped, or undefined. A message with the tree's capability is from an
 * agent of the tree (its `from` and `fromName` were set by that agent's workflow); one that
 * claims an agent sender or carries structured data without it is not taken. Operators and
 * services (no `fromTree`, no capability) are taken as before.
 */
export function peerRefusal(agent: ForkAgent, m: SendMessageArgs): string | undefined {
  const token = treeTokenOf(agent);
  const who = (m.from ?? 'an unnamed sender').slice(0, 200);
  if (m.token !== undefined && m.token !== token) return `from ${who}: it carries a capability that is not tree ${agent.rootAgentId}'s: agents take messages only from agents of their own tree`;
  if (m.token !== undefined) return undefined;
  if (m.fromName !== undefined || m.data !== undefined) return `from ${who}: an agent's name or a structured message comes only with the capability of the agent's tree`;
  if (m.fromTree !== undefined && token !== undefined && patched(PEER_MESSAGES_PATCH)) return `from ${who}: it claims an agent of tree ${m.fromTree.slice(0, 200)} as its sender without the tree's capability`;
  return undefined;
}

/** A structured message the runtime acts on: true when it was taken here (not queued for the model). */
export function takeProtocolMessage(agent: ForkAgent, m: SendMessageArgs, decidePlan: (data: unknown) => boolean): boolean {
  const team = agent.input.team;
  if (!team || !m.data || m.token === undefined || m.from !== team.lead) return false;
  if (m.data.type === SHUTDOWN_REQUEST) {
    agent.team.requestShutdown();
    return true;
  }
  if (m.data.type === PLAN_APPROVAL_RESPONSE) return decidePlan(m.data);
  return false;
}
