/**
 * Reading a sub-agent's output file for its parent (src/shared/tree/agent-output.ts): the child's
 * workflow is asked — its `status` query and the newest pages of its transcript — so what the
 * parent reads comes from durable state, on any worker, while the child runs and after it
 * ended (a closed workflow answers queries until its retention ends). A child that does not
 * serve its transcript (skipTranscript) shows its head line only; one that cannot be asked at
 * all shows what its parent recorded of its result.
 */
import type { Client } from '@temporalio/client';
import { totalTokens, type MessageParam } from '../shared/messages-api/anthropic';
import { AGENT_OUTPUT_LIMITS, renderAgentOutput, type ReadAgentOutputInput, type ReadAgentOutputResult } from '../shared/tree/agent-output';
import { messagesQuery, statusQuery, transcriptPageQuery } from '../shared/wire/messages';

type Handle = ReturnType<Client['workflow']['getHandle']>;
type Run = { workflowId: string; runId?: string };

/** How long one query may take: a closed earlier run is replayed to answer, and the Read has 30 s in all. */
const QUERY_DEADLINE_MS = 8_000;
/** How long reading across runs may take in all before the latest run's own messages are shown instead. */
const ACROSS_RUNS_MS = 15_000;
/**
 * Earlier runs followed at most: the newest messages of an agent whose runs are short (a few
 * turns each) may lie in many runs, each a replay to ask; past this, the latest run's are shown.
 */
const RUNS_FOLLOWED_MAX = 8;

/** The budget of one read across runs: when it must end, and how many earlier runs it may still ask. */
interface ReadBudget {
  until: number;
  runs: number;
}

/**
 * Messages [from, to) of a run's conversation, following the prefix it holds by reference to
 * the run that holds it: an earlier run of the same agent (continue-as-new, a resume), whose
 * `messages` query serves what its `transcriptPage` would (only the latest run is asked that,
 * so a skipTranscript agent still refuses).
 */
async function messagesBetween(client: Client, run: Run, from: number, to: number, query: 'transcript' | 'messages', budget: ReadBudget): Promise<MessageParam[]> {
  const handle = client.workflow.getHandle(run.workflowId, run.runId);
  const out: MessageParam[] = [];
  const ask = (at: number, end: number) =>
    client.connection.withDeadline(Math.min(Date.now() + QUERY_DEADLINE_MS, budget.until), () => (query === 'transcript' ? handle.query(transcriptPageQuery, { from: at, to: end }) : handle.query(messagesQuery, { from: at, to: end })));
  for (let at = from; at < to; ) {
    const page = await ask(at, to);
    to = Math.min(to, page.total);
    if (page.prefix && at < page.prefix.count) {
      const end = Math.min(to, page.prefix.count);
      if (--budget.runs < 0) throw new Error(`more than ${RUNS_FOLLOWED_MAX} earlier runs hold messages [${at}, ${end})`);
      const earlier = await messagesBetween(client, page.prefix.run, at, end, 'messages', budget);
      // A gap would be shown as if nothing were missing: the caller falls back instead.
      if (earlier.length !== end - at) throw new Error(`${page.prefix.run.workflowId} served ${earlier.length} of messages [${at}, ${end})`);
      out.push(...earlier);
      at = end;
      continue;
    }
    // A page stops at its byte limit: read on from where it stopped, to the end.
    if (page.messages.length === 0) break;
    out.push(...page.messages);
    at += page.messages.length;
  }
  return out;
}

/**
 * The child's own newest messages and how many of its own came before them; undefined when
 * it does not serve its transcript. Its own messages start at `ownFrom` (after what it
 * inherited as a fork), which may lie in an earlier run of its chain: a child that continued
 * as new shows its whole own conversation. A chain begun before runs carried `ownFrom` starts
 * after the prefix the latest run holds by reference, as before. When an earlier run cannot be
 * read now (past its retention, slow to replay, or more than RUNS_FOLLOWED_MAX runs back), the
 * latest run's own messages are shown, with what came before them counted as not shown, rather
 * than no output at all.
 */
async function ownTail(client: Client, handle: Handle, ownFrom: number | undefined): Promise<{ messages: MessageParam[]; skipped: number } | undefined> {
  let probe;
  try {
    probe = await handle.query(transcriptPageQuery, { from: 0, to: 0 });
  } catch {
    return undefined;
  }
  const start = Math.min(ownFrom ?? probe.prefix?.count ?? 0, probe.total);
  const from = Math.max(start, probe.total - AGENT_OUTPUT_LIMITS.tailMessages);
  const latest = { workflowId: handle.workflowId };
  try {
    return { messages: await messagesBetween(client, latest, from, probe.total, 'transcript', { until: Date.now() + ACROSS_RUNS_MS, runs: RUNS_FOLLOWED_MAX }), skipped: from - start };
  } catch {
    // The latest run alone: no earlier run is asked, so the budget only bounds its own pages.
    const own = Math.max(from, probe.prefix?.count ?? 0);
    return { messages: await messagesBetween(client, latest, own, probe.total, 'transcript', { until: Date.now() + QUERY_DEADLINE_MS, runs: 0 }), skipped: own - start };
  }
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
        totalTokens: totalTokens(status.usage),
        ...(status.activity ? { doing: status.activity } : {}),
      };
      const tail = await ownTail(deps.client, handle, status.ownMessagesFrom);
      return { found: true, text: renderAgentOutput(header, tail?.messages ?? [], tail?.skipped ?? 0) };
    },
  };
}
