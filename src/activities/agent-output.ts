/**
 * Reading a sub-agent's output file for its parent (src/shared/agent-output.ts): the child's
 * workflow is asked — its `status` query and the newest pages of its transcript — so what the
 * parent reads comes from durable state, on any worker, while the child runs and after it
 * ended (a closed workflow answers queries until its retention ends). A child that does not
 * serve its transcript (skipTranscript) shows its head line only; one that cannot be asked at
 * all shows what its parent recorded of its result.
 */
import type { Client } from '@temporalio/client';
import { totalInputTokens, type MessageParam } from '../shared/anthropic';
import { AGENT_OUTPUT_LIMITS, renderAgentOutput, type ReadAgentOutputInput, type ReadAgentOutputResult } from '../shared/agent-output';
import { statusQuery, transcriptPageQuery } from '../shared/messages';

type Handle = ReturnType<Client['workflow']['getHandle']>;

/**
 * The child's own newest messages (after a prefix it holds by reference, such as a fork's
 * inherited conversation) and how many of its own came before them; undefined when it does
 * not serve its transcript.
 */
async function ownTail(handle: Handle): Promise<{ messages: MessageParam[]; skipped: number } | undefined> {
  let probe;
  try {
    probe = await handle.query(transcriptPageQuery, { from: 0, to: 0 });
  } catch {
    return undefined;
  }
  const start = probe.prefix?.count ?? 0;
  const from = Math.max(start, probe.total - AGENT_OUTPUT_LIMITS.tailMessages);
  const messages: MessageParam[] = [];
  // A page stops at its byte limit: read on from where it stopped, to the end.
  for (let at = from; at < probe.total; ) {
    const page = await handle.query(transcriptPageQuery, { from: at, to: probe.total });
    if (page.messages.length === 0) break;
    messages.push(...page.messages);
    at += page.messages.length;
  }
  return { messages, skipped: from - start };
}

export function createAgentOutputActivities(deps: { client: Client }) {
  return {
    /** The text of a child's output file, as its parent's Read answers it. */
    async readAgentOutput(input: ReadAgentOutputInput): Promise<ReadAgentOutputResult> {
      const handle = deps.client.workflow.getHandle(input.agentId);
      let status;
      try {
        status = await handle.query(statusQuery);
      } catch {
        // Closed and past retention, or not answering: what the parent recorded, if it did.
        if (!input.recorded) return { found: false, text: '' };
        return { found: true, text: `Agent ${input.agentId}: ${input.recorded.status} (its own history is no longer available; this is its report)\n${input.recorded.text}\n` };
      }
      const header = {
        agentId: input.agentId,
        state: status.state,
        turns: status.turns,
        toolUses: status.toolUses,
        totalTokens: totalInputTokens(status.usage) + status.usage.outputTokens,
        ...(status.activity ? { doing: status.activity } : {}),
      };
      const tail = await ownTail(handle);
      return { found: true, text: renderAgentOutput(header, tail?.messages ?? [], tail?.skipped ?? 0) };
    },
  };
}
