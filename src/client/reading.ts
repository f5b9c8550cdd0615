/**
 * The ForkflowClient's reads of agents and trees (result, status, transcript, prefix
 * reference, tree, graph, timeline, watch, stream, list): each safe to repeat, so each rides
 * out a Temporal outage through the client's OutageGuard. The class delegates here in one line.
 */
import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import type { MessageParam } from '../shared/messages-api/anthropic';
import { WORKFLOW_TYPES } from '../shared/wire/constants';
import { FAILURE, forkResultOf, isFailure, issuesOf } from '../shared/wire/failures';
import type { PrefixRef } from '../shared/prefix/prefix';
import { statusQuery } from '../shared/wire/messages';
import type { ForkResult, ForkStatus } from '../shared/wire/status';
import type { StreamEvent } from '../shared/streams/stream-events';
import { conversationPages, prefixRefFrom } from './conversation';
import { treeOf, watchStatus, type TreeView } from './tree';
import { graphOf, type TreeGraph } from './graph';
import { timelineOf, type AgentTimeline } from './timeline';
import { AgentNotFoundError, ForkflowError, InvalidForkInputError } from './errors';
import { isHidden, toAgentRow, type AgentRow } from './rows';
import type { OutageGuard } from './outage';
import { streamEvents, type StreamOptions } from './stream';

/** What the reads use of a client: its Temporal client and its outage guard. */
export interface ReadingClient {
  readonly temporal: Client;
  readonly outage: OutageGuard;
}

/** Runs `fn` on the agent's workflow handle; an unknown agent is AgentNotFoundError. */
export async function callAgent<T>(c: ReadingClient, agentId: string, fn: (h: WorkflowHandle) => Promise<T>): Promise<T> {
  try {
    return await fn(c.temporal.workflow.getHandle(agentId));
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new AgentNotFoundError(agentId);
    throw err;
  }
}

/** `callAgent` for reads that are safe to repeat: they ride out a Temporal outage. */
export function readAgent<T>(c: ReadingClient, agentId: string, operation: string, fn: (h: WorkflowHandle) => Promise<T>): Promise<T> {
  return c.outage.read(operation, () => callAgent(c, agentId, fn));
}

/** Maps Temporal's outcome of a fork run to forkflow's result (a failed fork is a result too). */
async function decodeResult(handle: WorkflowHandle, agentId: string): Promise<ForkResult> {
  try {
    return (await handle.result()) as ForkResult;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new AgentNotFoundError(agentId);
    if (err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure) {
      const failed = forkResultOf(err.cause);
      if (failed) return failed;
      if (isFailure(err.cause, FAILURE.invalidForkInput)) throw new InvalidForkInputError(issuesOf(err.cause));
      throw new ForkflowError(`Agent ${agentId} failed: ${err.cause.message}`);
    }
    if (err instanceof WorkflowFailedError) throw new ForkflowError(`Agent ${agentId} did not complete: ${err.cause?.message ?? err.message}`);
    throw err;
  }
}

export function resultOf(c: ReadingClient, agentId: string): Promise<ForkResult> {
  return c.outage.longPoll('result', () => decodeResult(c.temporal.workflow.getHandle(agentId), agentId));
}

export function treeView(c: ReadingClient, rootId: string): Promise<TreeView> {
  return c.outage.read('tree', () => treeOf(c.temporal, rootId));
}

export function treeGraph(c: ReadingClient, rootId: string): Promise<TreeGraph> {
  return c.outage.read('graph', () => graphOf(c.temporal, rootId));
}

export function agentTimeline(c: ReadingClient, agentId: string, opts: { runId?: string }): Promise<AgentTimeline> {
  return c.outage.read('timeline', () => timelineOf(c.temporal, agentId, opts));
}

export function watchAgent(c: ReadingClient, agentId: string, opts: { intervalMs?: number; signal?: AbortSignal }): AsyncGenerator<ForkStatus> {
  return watchStatus(c.temporal, agentId, { ...opts, read: (what, fn) => readAgent(c, agentId, what, () => fn()) });
}

export function streamAgent(c: ReadingClient, agentId: string, opts: StreamOptions): AsyncGenerator<StreamEvent, void, undefined> {
  return streamEvents(c.temporal, agentId, opts);
}

export function statusOf(c: ReadingClient, agentId: string): Promise<ForkStatus> {
  return readAgent(c, agentId, 'status', (h) => h.query(statusQuery));
}

/** The whole conversation, gathered from its pages. */
export async function transcriptOf(c: ReadingClient, agentId: string): Promise<MessageParam[]> {
  const messages: MessageParam[] = [];
  for await (const page of transcriptPagesOf(c, agentId)) messages.push(...page);
  return messages;
}

export function transcriptPagesOf(c: ReadingClient, agentId: string): AsyncGenerator<MessageParam[]> {
  return conversationPages(c.temporal, { workflowId: agentId }, { query: 'transcript', each: (read) => readAgent(c, agentId, 'transcript', read) });
}

export function prefixRefOf(c: ReadingClient, agentId: string): Promise<PrefixRef> {
  return readAgent(c, agentId, 'prefixRef', prefixRefFrom);
}

export function listAgents(c: ReadingClient, opts: { query?: string; limit?: number; includeHidden?: boolean }): Promise<AgentRow[]> {
  const base = `WorkflowType = '${WORKFLOW_TYPES.fork}'`;
  const query = opts.query ? `${base} AND (${opts.query})` : base;
  return c.outage.read('list', async () => {
    const rows: AgentRow[] = [];
    for await (const info of c.temporal.workflow.list({ query })) {
      if (!opts.includeHidden && isHidden(info)) continue;
      rows.push(toAgentRow(info));
      if (rows.length >= (opts.limit ?? 100)) break;
    }
    return rows;
  });
}
