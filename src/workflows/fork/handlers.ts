/**
 * Signal and query handlers of a fork. Registered before the first await, so nothing sent
 * at start is missed. Handlers validate their input and never throw out of a signal: a bad
 * payload is recorded in `status.rejectedSignals` and the fork carries on.
 */
import { log, setHandler } from '@temporalio/workflow';
import { describeIssues } from '../../shared/fork-input';
import { sendMessageSchema, sendMessageSignal, statusQuery } from '../../shared/messages';
import { registerConversationQueries } from '../conversation-queries';
import type { ForkAgent } from './agent';
import { publishProgress } from './visibility';

export function registerHandlers(agent: ForkAgent): void {
  setHandler(sendMessageSignal, (raw: unknown) => {
    const parsed = sendMessageSchema.safeParse(raw);
    if (!parsed.success) {
      const issues = describeIssues(parsed.error);
      agent.rejectSignal('sendMessage', issues);
      log.warn('sendMessage rejected', { agentId: agent.agentId, issues });
      return;
    }
    agent.enqueueMessage(parsed.data);
    publishProgress(agent);
  });

  setHandler(statusQuery, () => agent.status());

  registerConversationQueries(agent, {
    transcriptRefusal: () => (agent.input.skipTranscript ? `Agent ${agent.agentId} runs with skipTranscript: its transcript is not served.` : undefined),
  });
}
