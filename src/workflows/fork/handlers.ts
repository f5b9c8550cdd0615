/**
 * Signal and query handlers of a fork. Registered before the first await, so nothing sent
 * at start is missed. Handlers validate their input and never throw out of a signal: a bad
 * payload is recorded in `status.rejectedSignals` and the fork carries on.
 */
import { log, setHandler } from '@temporalio/workflow';
import { describeIssues } from '../../shared/fork-input';
import { messagesQuery, requestContextQuery, sendMessageSchema, sendMessageSignal, statusQuery, transcriptQuery } from '../../shared/messages';
import { canonicalJson, utf8Length } from '../../shared/hash';
import type { ForkAgent } from './agent';
import { publishProgress } from './visibility';

/** Keeps one `messages` page under ~1 MiB so query results stay far below gRPC limits. */
const PAGE_BYTES = 1 << 20;

export function registerHandlers(agent: ForkAgent): void {
  setHandler(sendMessageSignal, (raw: unknown) => {
    const parsed = sendMessageSchema.safeParse(raw);
    if (!parsed.success) {
      const issues = describeIssues(parsed.error);
      agent.rejectSignal('sendMessage', issues);
      log.warn('sendMessage rejected', { agentId: agent.agentId, issues });
      return;
    }
    agent.enqueue(parsed.data);
    publishProgress(agent);
  });

  setHandler(statusQuery, () => agent.status());

  setHandler(transcriptQuery, () => {
    if (agent.input.skipTranscript) throw new Error(`Agent ${agent.agentId} runs with skipTranscript: its transcript is not served.`);
    return agent.messages;
  });

  setHandler(requestContextQuery, () => agent.context);

  setHandler(messagesQuery, ({ from, to }) => {
    const end = Math.min(to, agent.messages.length);
    if (!Number.isInteger(from) || from < 0 || from > end) throw new Error(`messages: bad range [${from}, ${to}) of ${agent.messages.length}`);
    const page = [];
    let bytes = 0;
    for (let i = from; i < end; i++) {
      const m = agent.messages[i]!;
      bytes += utf8Length(canonicalJson(m));
      if (page.length > 0 && bytes > PAGE_BYTES) break;
      page.push(m);
    }
    return { from, messages: page, total: agent.messages.length };
  });
}
