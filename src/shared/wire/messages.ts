/**
 * Signal, query and update definitions shared by workflows, activities and clients.
 * The names are the public contract (other SDKs and the `temporal` CLI use them).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import type { MessageParam, SystemParam, ThinkingConfig, ToolDefinition } from '../messages-api/anthropic';
import type { PrefixRef, RunRef } from '../prefix/prefix';
import type { TurnPointAnswer, TurnPointArgs } from '../prefix/time-travel';
import type { ForkStatus } from './status';
import { childOutcomeSchema } from './carried-state';
import type { ChildOutcome } from '../tree/tree-input';
import type { StreamLiveAck, StreamLiveInput, StreamReadInput, StreamReadResult, StreamWatchedInput } from '../streams/stream-events';
import { treeTokenSchema } from '../tree/tree-ledger';
import type { AdmitRequest, AdmitResult, ChargeRequest, ReserveRequest, ReserveResult } from '../tree/tree-ledger-requests';
import { schemaOnce } from '../base/schema-once';
import { structuredMessageSchema } from '../tree/team';
import type { RouteRequest, RouteResult } from '../tree/team-ledger';
import type { PermissionRequest } from '../tree/parent-approvals';
import type { TreeAnswer, TreeRequest } from '../tree/tree-calls';
import type { ShareMessage } from '../tree/tree-shares';

export const sendMessageSchema = schemaOnce('wire/messages#sendMessageSchema', () => z.strictObject({
  message: z.string().min(1, 'message must not be empty').max(200_000),
  /** A few words for UIs and notifications. */
  summary: z.string().min(1).max(200).optional(),
  /** Who sent it: an agent id, a name or `operator`. */
  from: z.string().min(1).max(200).optional(),
  /** Inbox priority: `now` before `next` (the default for messages) before `later` (notifications). */
  priority: z.enum(['now', 'next', 'later']).optional(),
  /**
   * The sender's tree (its root agent id), set by an agent's SendMessage tool: an agent refuses
   * a message from another tree, so a model reaches only agents of its own. Operators and
   * services leave it out and reach any agent.
   */
  fromTree: z.string().min(1).max(1000).optional(),
  /**
   * The tree's capability (src/shared/tree/tree-ledger.ts), on a peer message of an agent: the
   * receiver drops a message that claims an agent of its tree as sender without it, so
   * `from` and `fromName` of an accepted agent message are true.
   */
  token: treeTokenSchema.optional(),
  /** The sending agent's name in its tree (from the root's ledger). */
  fromName: z.string().min(1).max(64).optional(),
  /** A structured message: the JSON object itself (`message` holds its JSON text). */
  data: structuredMessageSchema.optional(),
}));
export type SendMessageArgs = z.infer<typeof sendMessageSchema>;

/** Queue a message for the agent; it enters the conversation at the next turn boundary. */
export const sendMessageSignal = defineSignal<[SendMessageArgs]>('sendMessage');

/** The agent's state, counters, usage and lineage (`ForkStatus`): what `forkflow status` and the web view show. */
export const statusQuery = defineQuery<ForkStatus>('status');
/**
 * Internal: whether the agent's live stream has a subscriber now (a `streamRead` within the last
 * seconds by the asker's clock, or a workflow-streams poll): model calls send deltas only then.
 */
export const streamWatchedQuery = defineQuery<boolean, [StreamWatchedInput?]>('streamWatched');
/** A subscriber's read of the agent's stream (recorded and live events from a seq); nothing is recorded. */
export const streamReadQuery = defineQuery<StreamReadResult, [StreamReadInput]>('streamRead');
/** Internal: the model activity hands the workflow live events (deltas) to keep in memory for readers: off history, by design. */
export const streamLiveQuery = defineQuery<StreamLiveAck, [StreamLiveInput]>('streamLive');
/**
 * The messages this run holds, whole, as Anthropic message params. Refused over
 * TRANSCRIPT_QUERY_BYTES: read longer ones a page at a time with `transcriptPage`.
 */
export const transcriptQuery = defineQuery<MessageParam[]>('transcript');

/** The most the whole-`transcript` query answers with (canonical JSON bytes); query results stay under 1 MiB. */
export const TRANSCRIPT_QUERY_BYTES = 1 << 20;

/** Everything but the messages that a model request needs; fetched once per worker and cached. */
export interface RequestContext {
  model: string;
  system: SystemParam;
  tools: ToolDefinition[];
  thinking?: ThinkingConfig;
  toolChoice?: Record<string, unknown>;
  /** The provider's MCP connector definitions of the parent's request (`mcp_servers`), carried unchanged. */
  mcpServers?: Record<string, unknown>[];
  maxTokens: number;
  /** Hash of the cache-relevant parts (system + block policies, tools, model, thinking). */
  cacheKeyHash: string;
}

/** Internal: the request context of a run (read by the model activity). */
export const requestContextQuery = defineQuery<RequestContext>('requestContext');

export interface MessagesPage {
  from: number;
  messages: MessageParam[];
  total: number;
  /** Set when `from` lies in a prefix held by reference: read [0, count) from that run. */
  prefix?: { run: RunRef; count: number; digest: string };
}
/** A page's size when its answer goes inline: query results stay under 1 MiB. */
export const PAGE_BYTES = 1 << 20;
/**
 * A page's size for a reader whose converter offloads large payloads (external storage):
 * its answer is a reference, and each page read of a closed run costs a replay of it.
 */
export const STORED_PAGE_BYTES = 16 << 20;

export interface PageArgs {
  from: number;
  to: number;
  /** Page size in canonical JSON bytes: PAGE_BYTES by default, at most STORED_PAGE_BYTES. */
  maxBytes?: number;
}

/** The page size to ask for: larger only when this client's answers come back as references. */
export function pageBytesFor(client: { options: { loadedDataConverter: { externalStorage?: unknown } } }): number {
  return client.options.loadedDataConverter.externalStorage ? STORED_PAGE_BYTES : PAGE_BYTES;
}

/** Internal: messages [from, to) of a run's conversation (read by the model activity). */
export const messagesQuery = defineQuery<MessagesPage, [PageArgs]>('messages');

/**
 * The transcript a page at a time (`to` defaults to the end): the `messages` page, refused
 * when the run does not serve its transcript (skipTranscript). Clients follow `prefix` to the
 * run that holds it with `messages`.
 */
export const transcriptPageQuery = defineQuery<MessagesPage, [Omit<PageArgs, 'to'> & { to?: number }]>('transcriptPage');

/** A reference to this run's conversation so far: fork from it without copying it. */
export const prefixRefQuery = defineQuery<PrefixRef>('prefixRef');

/**
 * A reference to the agent's conversation at the end of a turn (`{ turn }`; absent: as it
 * stands), or the earlier run of its chain to ask instead (src/shared/prefix/time-travel.ts).
 */
export const turnPointQuery = defineQuery<TurnPointAnswer, [TurnPointArgs?]>('turnPoint');

export const approvalDecisionSchema = schemaOnce('wire/messages#approvalDecisionSchema', () => z.strictObject({
  requestId: z.string().min(1),
  decision: z.enum(['approve', 'deny']),
  reason: z.string().max(2000).optional(),
  /** Who decided: `operator`, a parent agent id, a user name. */
  by: z.string().min(1).max(200).optional(),
}));
export type ApprovalDecision = z.infer<typeof approvalDecisionSchema>;

/** Decide a pending tool approval (operators, the Web UI, `temporal workflow update`); rejected at once if not pending. */
export const decideApprovalUpdate = defineUpdate<{ requestId: string; outcome: 'approved' | 'denied' }, [ApprovalDecision]>('decideApproval');
/** The same decision as a signal, for senders that cannot wait for an update (other workflows). */
export const approvalDecisionSignal = defineSignal<[ApprovalDecision]>('approvalDecision');
/** Internal: a `bubble` child's request for its parent agent's decision (src/shared/tree/parent-approvals.ts), sent by the child; validated by the parent, queued to its model. */
export const permissionRequestSignal = defineSignal<[PermissionRequest]>('permissionRequest');

/**
 * Internal: the tree ledger (src/shared/tree/tree-ledger.ts), served by a tree's root. Sub-agents reach it
 * through activities (a workflow cannot send an update): admission before a child starts,
 * a reservation before each model call and its charge after. Each is idempotent.
 */
export const admitAgentUpdate = defineUpdate<AdmitResult, [AdmitRequest]>('treeAdmitAgent');
/** Internal: a reservation before a sub-agent's model call (see treeAdmitAgent). */
export const reserveTokensUpdate = defineUpdate<ReserveResult, [ReserveRequest]>('treeReserveTokens');
/** Internal: the charge after a sub-agent's model call, releasing its reservation. */
export const chargeTokensUpdate = defineUpdate<boolean, [ChargeRequest]>('treeChargeTokens');
/** Internal: a peer message's receivers, resolved (and the message counted) by the root's ledger (src/shared/tree/team-ledger.ts). */
export const routeMessageUpdate = defineUpdate<RouteResult, [RouteRequest]>('treeRouteMessage');
/**
 * Internal: in a tree that lends budget shares (src/shared/tree/tree-shares.ts), a member's spend
 * report, share ask or return, to its root. Signals both ways (this one and the two below): a
 * workflow sends them itself, and they take no slot of the ten updates in flight per workflow.
 */
export const treeShareSignal = defineSignal<[ShareMessage]>('treeShare');
/** Internal: in a tree that lends shares, a request to the root from an agent below it: an admission, a peer message's route (src/shared/tree/tree-calls.ts). */
export const treeRequestSignal = defineSignal<[TreeRequest]>('treeRequest');
/** Internal: in a tree that lends shares, the root's answers to an agent: share grants, refusals and recalls, admissions, routes. */
export const treeAnswerSignal = defineSignal<[TreeAnswer]>('treeAnswer');
/** Internal: a sub-agent ended (sent by its parent, which sees every way a child ends); `token`: the tree's capability. */
export const agentEndedSignal = defineSignal<[{ agentId: string; started?: false; token?: string }]>('treeAgentEnded');

/**
 * Internal: a sub-agent's outcome, sent by the sub-agent to its parent's workflow id as it ends. It
 * reaches whichever run of the parent is current, so a parent that continued as new while
 * the child ran still hears it (the run that started the child also sees the child's result).
 */
export const childOutcomeSignal = defineSignal<[ChildOutcomeReport]>('childOutcome');
export interface ChildOutcomeReport {
  agentId: string;
  outcome: ChildOutcome;
  /** The tree's capability (src/shared/tree/tree-ledger.ts `treeTokenSchema`): reports without it are dropped by trees that have one. */
  token?: string;
}
/**
 * What only a tree's own agents send, carrying its capability (`token`): these signals (the
 * budget shares' reports, asks, grants and recalls among them) and updates, and a
 * `sendMessage` with a `token` (a peer's). With encryption keys, the inbound guard
 * (src/payloads/inbound.ts) takes them only encrypted for the agent they reach, as
 * forkflow's workers write them: a capability read from history is of no use without the keys.
 */
export const TREE_MESSAGES: { signals: readonly string[]; updates: readonly string[]; tokenField: 'token' } = {
  signals: [agentEndedSignal.name, childOutcomeSignal.name, treeShareSignal.name, treeRequestSignal.name, treeAnswerSignal.name],
  updates: [admitAgentUpdate.name, reserveTokensUpdate.name, chargeTokensUpdate.name, routeMessageUpdate.name],
  tokenField: 'token',
};

export const childOutcomeReportSchema = schemaOnce('wire/messages#childOutcomeReportSchema', () => z.strictObject({ agentId: z.string().min(1).max(1000), outcome: childOutcomeSchema, token: treeTokenSchema.optional() }));
