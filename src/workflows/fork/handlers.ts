/**
 * Signal and query handlers of a fork. Registered before the first await, so nothing sent
 * at start is missed. Handlers validate their input and never throw out of a signal: a bad
 * payload is recorded in `status.rejectedSignals` and the fork carries on.
 */
import { setHandler } from '@temporalio/workflow';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import { sendMessageSchema, sendMessageSignal, statusQuery } from '../../shared/wire/messages';
import { statusOf } from './agent-status';
import { undecodableReason } from '../../shared/wire/undecodable';
import { registerConversationQueries } from '../conversation-queries';
import type { ForkAgent } from './agent';
import { dropSignal } from './tree-authority';
import { publishProgress } from './visibility';
import { peerRefusal, takeProtocolMessage } from './team-inbox';
import { decidePlan } from './team-plan';
import { takeTypedCommand } from './typed-commands';

export function registerHandlers(agent: ForkAgent): void {
  setHandler(sendMessageSignal, (raw: unknown) => {
    const undecodable = undecodableReason(raw);
    if (undecodable) return dropSignal(agent, 'sendMessage', [undecodable]);
    const parsed = sendMessageSchema.safeParse(raw);
    if (!parsed.success) return dropSignal(agent, 'sendMessage', describeIssues(parsed.error));
    // An agent's SendMessage names its tree: a model reaches only agents of its own tree.
    const { fromTree } = parsed.data;
    if (fromTree !== undefined && fromTree !== agent.rootAgentId) {
      return dropSignal(agent, 'sendMessage', [`from ${(parsed.data.from ?? 'an agent').slice(0, 200)} of tree ${fromTree.slice(0, 200)}: agents take messages only from agents of their own tree (${agent.rootAgentId})`]);
    }
    // A peer message must carry its tree's capability; a teammate's lead may end it or decide its plan.
    const refused = peerRefusal(agent, parsed.data);
    if (refused) return dropSignal(agent, 'sendMessage', [refused]);
    if (takeProtocolMessage(agent, parsed.data, (data) => decidePlan(agent, data))) return publishProgress(agent);
    // A command typed by a person or a service (`/<skill> args`) runs as that skill at the next boundary (typed-commands.ts).
    if (!takeTypedCommand(agent, parsed.data)) agent.enqueueMessage(parsed.data);
    publishProgress(agent);
  });

  setHandler(statusQuery, () => statusOf(agent));

  registerConversationQueries(agent, {
    transcriptRefusal: () => (agent.input.skipTranscript ? `Agent ${agent.agentId} runs with skipTranscript: its transcript is not served.` : undefined),
  });
}
