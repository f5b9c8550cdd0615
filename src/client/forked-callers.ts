/**
 * Model-written summaries of running agents (seed 001's `agentSummary`, S1-130) and memories
 * extracted from a session (its `extractMemories`, S1-127): runForkedAgent's callers as a
 * service calls them. Each is one zero-copy fork of the agent's conversation (`forkFrom`),
 * hidden from listings (skipTranscript), that leaves the agent itself untouched.
 */
import type { ForkStatus, ForkResult } from '../shared/wire/status';
import { AGENT_SUMMARY_LABEL, AGENT_SUMMARY_QUERY_SOURCE, agentSummaryDirective } from '../shared/agents/agent-summary';
import { MEMORY_EXTRACTION_LABEL, MEMORY_EXTRACTION_MAX_TURNS, MEMORY_EXTRACTION_QUERY_SOURCE, memoryExtractionDirective } from '../shared/dream/memory-extraction';
import type { Usage } from '../shared/messages-api/anthropic';
import { ForkflowError } from './errors';
import type { ForkParams } from './runner';
import type { TreeView } from './tree';

/** What these callers need of a forkflow client (narrow, so this module does not import the client's index). */
export interface ForkingClient {
  forkFrom(agentId: string, params: Omit<ForkParams, 'parent' | 'parentRef' | 'from'>): Promise<{ agentId: string; result(): Promise<ForkResult> }>;
  tree(rootId: string): Promise<TreeView>;
}

/** One agent's summary, and what the fork that wrote it cost. */
export interface AgentSummary {
  agentId: string;
  summary: string;
  /** The summary fork's own id (hidden from listings; its status and usage stay readable). */
  forkId: string;
  usage: Usage;
}

/**
 * A model-written summary of what `agentId` is doing now: a fork of its conversation as it
 * stands (mid-turn too), no tools, one turn. It reads the agent's cached prefix.
 *
 * @throws {ForkflowError} when the fork does not complete with a text.
 * @example
 * const { summary } = await summarizeAgent(forkflow, 'lead.reviewer-2'); // 'Reading src/auth.ts for …'
 */
export async function summarizeAgent(client: ForkingClient, agentId: string): Promise<AgentSummary> {
  const fork = await client.forkFrom(agentId, {
    prompt: agentSummaryDirective(),
    forkLabel: AGENT_SUMMARY_LABEL,
    querySource: AGENT_SUMMARY_QUERY_SOURCE,
    maxTurns: 1,
    skipTranscript: true,
    // The agent's exact tools stay in the request (its cache); calls to them are refused.
    toolAccess: { mode: 'allow_list', tools: [] },
    mode: 'sync',
  });
  const result = await fork.result();
  if (result.status !== 'completed' || !result.text.trim()) throw new ForkflowError(`The summary of ${agentId} did not complete (${result.status}${result.error ? `: ${result.error}` : ''}).`);
  return { agentId, summary: result.text.trim(), forkId: fork.agentId, usage: result.usage };
}

/** The states a summary is asked of: an agent at work (a finished one has its result instead). */
const AT_WORK: ReadonlySet<string> = new Set<ForkStatus['state']>(['running', 'awaiting_approval']);

/**
 * Summaries of every agent of a tree that is at work now (visibility's view; at most
 * `concurrency` forks at once). An agent that ends before its summary is asked is left out;
 * one whose summary fails has `error` instead.
 */
export async function summarizeTree(client: ForkingClient, rootId: string, opts: { concurrency?: number } = {}): Promise<(AgentSummary | { agentId: string; error: string })[]> {
  const working = (await client.tree(rootId)).agents.filter((a) => a.state !== undefined && AT_WORK.has(a.state)).map((a) => a.agentId);
  const out: (AgentSummary | { agentId: string; error: string })[] = [];
  const queue = [...working];
  const worker = async (): Promise<void> => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      out.push(await summarizeAgent(client, id).catch((err: unknown) => ({ agentId: id, error: err instanceof Error ? err.message : String(err) })));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency ?? 4, working.length)) }, worker));
  return working.flatMap((id) => out.filter((s) => s.agentId === id));
}

/** What an extraction did: its outcome, the files it wrote and its report. */
export interface MemoryExtraction {
  agentId: string;
  forkId: string;
  status: ForkResult['status'];
  /** The paths it wrote (all inside the memory directory, or the audit failed it). */
  written: string[];
  report: string;
  error?: string;
  usage: Usage;
}

/**
 * Extracts memories from an agent's session into `memoryDir` (absolute, existing, on the
 * worker of the agent's workspace): a fork of its conversation under the autoMem filter, so it
 * may write only there and every written path is audited. Call it when a session ends, or on
 * a schedule; the agent itself is untouched.
 *
 * @example
 * const { written } = await extractMemories(forkflow, 'support-42', { memoryDir: '/srv/memory/support' });
 */
export async function extractMemories(client: ForkingClient, agentId: string, opts: { memoryDir: string; instructions?: string; maxTurns?: number }): Promise<MemoryExtraction> {
  const fork = await client.forkFrom(agentId, {
    prompt: memoryExtractionDirective(opts.memoryDir, opts.instructions),
    forkLabel: MEMORY_EXTRACTION_LABEL,
    querySource: MEMORY_EXTRACTION_QUERY_SOURCE,
    maxTurns: opts.maxTurns ?? MEMORY_EXTRACTION_MAX_TURNS,
    skipTranscript: true,
    toolFilter: { kind: 'autoMem', memoryDir: opts.memoryDir },
    mode: 'sync',
  });
  const result = await fork.result();
  return {
    agentId,
    forkId: fork.agentId,
    status: result.status,
    written: result.touched ?? [],
    report: result.text,
    ...(result.error ? { error: result.error } : {}),
    usage: result.usage,
  };
}
