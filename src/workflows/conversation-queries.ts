/**
 * The queries through which a run serves its conversation to activities, clients and other
 * runs' forks: `messages` (paged, prefix-aware), `requestContext`, `transcript` (whole, up to
 * 1 MiB), `transcriptPage` (paged), `prefixRef`, and for agents `turnPoint` (where a past turn
 * ended: src/shared/prefix/time-travel.ts). Shared by forkWorkflow and snapshotWorkflow. Queries never change state.
 */
import { setHandler, workflowInfo } from '@temporalio/workflow';
import { toolUsesOf, type MessageParam } from '../shared/messages-api/anthropic';
import { cacheKeyComponents } from '../shared/prefix/cache-key';
import { canonicalJson, hashJson, utf8Length } from '../shared/base/hash';
import { messagesQuery, PAGE_BYTES, prefixRefQuery, requestContextQuery, STORED_PAGE_BYTES, TRANSCRIPT_QUERY_BYTES, transcriptPageQuery, transcriptQuery, turnPointQuery, type MessagesPage, type RequestContext } from '../shared/wire/messages';
import type { Usage } from '../shared/messages-api/anthropic';
import type { ContextSummary, PrefixRef, RequestHashes, RunRef } from '../shared/prefix/prefix';
import { turnPointArgsSchema, type TurnCall, type TurnPointAnswer } from '../shared/prefix/time-travel';

/** What a run holds of its conversation. */
export interface ConversationHolder {
  /** Global index of messages[0] (the length of a prefix held by reference). */
  readonly base: number;
  readonly messages: MessageParam[];
  readonly digest: string;
  readonly prefixRef?: PrefixRef;
  readonly context?: RequestContext;
  readonly summary: ContextSummary;
  /** Where the run's requests start and what they clear, when its context was managed (src/shared/context/). */
  readonly cut?: PrefixRef['window'];
}

/**
 * A page is at most `maxBytes` (default PAGE_BYTES, ~1 MiB, so inline query results stay far
 * below gRPC limits; readers with external storage ask for up to STORED_PAGE_BYTES). A
 * single larger message is a page of its own: it exists only with external payload storage
 * (the server refuses a payload over 2 MB), which turns that answer into a reference too.
 */
function pageLimit(maxBytes: unknown): number {
  return typeof maxBytes === 'number' && Number.isFinite(maxBytes) && maxBytes > 0 ? Math.min(maxBytes, STORED_PAGE_BYTES) : PAGE_BYTES;
}

export function messagesPage(h: ConversationHolder, from: number, to: number, maxBytes?: number): MessagesPage {
  const limit = pageLimit(maxBytes);
  const total = h.base + h.messages.length;
  const end = Math.min(to, total);
  if (!Number.isInteger(from) || from < 0 || from > end) throw new Error(`messages: bad range [${from}, ${to}) of ${total}`);
  if (from < h.base && h.prefixRef) {
    const { run, count, digest } = h.prefixRef;
    return { from, messages: [], total, prefix: { run, count, digest } };
  }
  const page: MessageParam[] = [];
  let bytes = 0;
  for (let i = from; i < end; i++) {
    const m = h.messages[i - h.base]!;
    bytes += utf8Length(canonicalJson(m));
    if (page.length > 0 && bytes > limit) break;
    page.push(m);
  }
  return { from, messages: page, total };
}

/** The canonical JSON size of `messages`, counted until it passes `limit`. */
function bytesUpTo(messages: MessageParam[], limit: number): number {
  let bytes = 0;
  for (const m of messages) {
    bytes += utf8Length(canonicalJson(m));
    if (bytes > limit) break;
  }
  return bytes;
}

/** The hash naming a request's message prefix: its chained digest, and its cut when the context was managed (the cut is part of what it sends). */
function prefixHash(digest: string, cut: PrefixRef['window']): string {
  return cut ? hashJson([digest, cut]) : digest;
}

/**
 * Component hashes of this run's own requests, when it holds everything needed. The message
 * prefix is named by its chained digest, which the run keeps as it goes: a fork by reference
 * compares this value with itself (both sides come from the reference), so any faithful hash
 * of the messages serves, and hashing the whole conversation again would cost every run's end
 * and every replay of it (a query on a closed run) seconds for a conversation of megabytes.
 * A run that holds its context but not its prefix (a counterfactual fork) hashes its own context.
 */
function requestHashesOf(h: ConversationHolder): RequestHashes | undefined {
  if (!h.context) return h.prefixRef?.requestHashes;
  if (h.base > 0) return { ...cacheKeyComponents(h.context), prefix: h.prefixRef?.requestHashes?.prefix ?? h.digest };
  return { ...cacheKeyComponents(h.context), prefix: prefixHash(h.digest, h.cut) };
}

export function prefixRefOf(h: ConversationHolder): PrefixRef {
  const info = workflowInfo();
  const last = h.messages[h.messages.length - 1];
  const hashes = requestHashesOf(h);
  return {
    run: { workflowId: info.workflowId, runId: info.runId },
    count: h.base + h.messages.length,
    digest: h.digest,
    ...(last ? { lastRole: last.role } : h.prefixRef?.lastRole ? { lastRole: h.prefixRef.lastRole } : {}),
    pendingToolUseIds: last ? toolUsesOf(last).map((u) => u.id) : (h.prefixRef?.pendingToolUseIds ?? []),
    context: h.summary,
    ...(hashes ? { requestHashes: hashes } : {}),
    ...(h.cut ? { window: h.cut } : {}),
  };
}

/** A run of an agent: it also knows its turns (src/workflows/fork/agent.ts). */
export interface TurnHolder extends ConversationHolder {
  readonly agentId: string;
  readonly turns: number;
  /** Turns taken by the runs before this one. */
  readonly turnsAtRunStart: number;
  readonly usage: Usage;
  readonly toolUses: number;
  /** The run before this one in the agent's chain (continue-as-new, a resume, a retry). */
  readonly previousRun?: RunRef;
  /** What this run recorded of its model call of `turn`. */
  turnCall(turn: number): TurnCall | undefined;
}

function isTurnHolder(h: ConversationHolder): h is TurnHolder {
  return typeof (h as Partial<TurnHolder>).turnCall === 'function';
}

/** The reference to messages [0, count) of this run's conversation, `digest` being theirs, sent from `cut`. */
function refAt(h: ConversationHolder, count: number, digest: string, cut: PrefixRef['window']): PrefixRef {
  const info = workflowInfo();
  const last = count > h.base ? h.messages[count - h.base - 1] : undefined;
  const hashes = requestHashesOf(h);
  return {
    run: { workflowId: info.workflowId, runId: info.runId },
    count,
    digest,
    ...(last ? { lastRole: last.role } : h.prefixRef?.lastRole ? { lastRole: h.prefixRef.lastRole } : {}),
    pendingToolUseIds: last ? toolUsesOf(last).map((u) => u.id) : (h.prefixRef?.pendingToolUseIds ?? []),
    context: h.summary,
    ...(hashes ? { requestHashes: { ...hashes, prefix: prefixHash(digest, cut) } } : {}),
    ...(cut ? { window: cut } : {}),
  };
}

/**
 * Where turn `turn` of the agent ended, as this run knows it: the conversation its call of
 * turn + 1 covered, or for its latest turn the conversation as it stands (src/shared/prefix/time-travel.ts).
 * A turn before this run is answered by naming the run before it.
 */
export function turnPointOf(h: TurnHolder, raw: unknown): TurnPointAnswer {
  const args = turnPointArgsSchema.safeParse(raw);
  if (!args.success) return { kind: 'invalid', reason: `turnPoint takes { turn?: integer ≥ 0 }: ${args.error.issues.map((i) => i.message).join('; ')}` };
  const turn = args.data?.turn ?? h.turns;
  if (turn > h.turns) return { kind: 'past_end', turns: h.turns };
  if (turn < h.turnsAtRunStart) {
    if (!h.previousRun) return { kind: 'invalid', reason: `turn ${turn} lies before this run, which names no earlier run` };
    return { kind: 'earlier', run: h.previousRun, turn };
  }
  const call = h.turnCall(turn + 1);
  const info = workflowInfo();
  // Every turn this run took was recorded as its call was made (replays record it again).
  if (!call && turn < h.turns) return { kind: 'invalid', reason: `turn ${turn + 1}'s call is not on record in this run` };
  if (call) return { kind: 'point', point: { agentId: h.agentId, runId: info.runId, turn, ref: refAt(h, call.count, call.digest, call.window), usage: call.usage, toolUses: call.toolUses } };
  return { kind: 'point', point: { agentId: h.agentId, runId: info.runId, turn, ref: prefixRefOf(h), usage: h.usage, toolUses: h.toolUses } };
}

/** The summary a run gives of the context it holds (other runs reference it by `from`). */
export function contextSummaryOf(context: RequestContext): ContextSummary {
  const info = workflowInfo();
  return {
    from: { workflowId: info.workflowId, runId: info.runId },
    contextKey: hashJson(context),
    model: context.model,
    cacheKeyHash: context.cacheKeyHash,
    toolNames: context.tools.map((t) => t.name),
    maxTokens: context.maxTokens,
  };
}

export function registerConversationQueries(h: ConversationHolder, opts: { transcriptRefusal?: () => string | undefined } = {}): void {
  setHandler(messagesQuery, ({ from, to, maxBytes }) => messagesPage(h, from, to, maxBytes));
  setHandler(requestContextQuery, () => {
    if (!h.context) throw new Error(`this run holds its context by reference: query requestContext on ${h.summary.from.workflowId}`);
    return h.context;
  });
  const refuse = () => {
    const refusal = opts.transcriptRefusal?.();
    if (refusal) throw new Error(refusal);
  };
  // Messages this run holds; a prefix held by reference lives in the run named by prefixRef.
  setHandler(transcriptQuery, () => {
    refuse();
    const bytes = bytesUpTo(h.messages, TRANSCRIPT_QUERY_BYTES);
    if (bytes > TRANSCRIPT_QUERY_BYTES) {
      throw new Error(`transcript: the ${h.messages.length} messages this run holds are over ${TRANSCRIPT_QUERY_BYTES} bytes; read them a page at a time with the transcriptPage query ({ from, to }), as ForkflowClient.transcript and \`forkflow transcript\` do`);
    }
    return h.messages;
  });
  setHandler(transcriptPageQuery, ({ from, to, maxBytes }) => {
    refuse();
    return messagesPage(h, from, to ?? Number.MAX_SAFE_INTEGER, maxBytes);
  });
  setHandler(prefixRefQuery, () => prefixRefOf(h));
  if (isTurnHolder(h)) setHandler(turnPointQuery, (args) => turnPointOf(h, args));
}
