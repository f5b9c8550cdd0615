/**
 * The typed API backend services use: start forks (sync or fire-and-forget), message them,
 * read their status and transcript, cancel them, list them. A thin layer over the Temporal
 * client that speaks forkflow's public contract (workflow type, signal and query names).
 *
 * @module forkflow
 */
import { randomUUID } from 'node:crypto';
import { Client, WorkflowFailedError, type Connection, type WorkflowHandle } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { ApplicationFailure, WorkflowNotFoundError, type DataConverter } from '@temporalio/common';
import { forkflowDataConverter } from '../payloads/data-converter';
import type { MessageParam } from '../shared/messages-api/anthropic';
import { TASK_QUEUE, WORKFLOW_TYPES } from '../shared/wire/constants';
import { describeIssues, validateForkInput, validateSnapshot, type CacheSafeParams, type ForkInputJson } from '../shared/wire/fork-input';
import { cacheKeyComponents, messagePrefixHash } from '../shared/prefix/cache-key';
import { FAILURE, forkResultOf, isFailure, issuesOf } from '../shared/wire/failures';
import { hashJson } from '../shared/base/hash';
import type { PrefixRef } from '../shared/prefix/prefix';
import { snapshotCompactionFor, type SnapshotCompaction, type SnapshotRecord } from '../shared/context/snapshot';
import { viewMessages } from '../shared/context/view';
import { conversationPages, prefixRefFrom } from './conversation';
import { decideApproval, deliverMessage, resolveAgent, treeOf, watchStatus, type TreeView } from './tree';
import { graphOf, type TreeGraph } from './graph';
import { timelineOf, type AgentTimeline } from './timeline';
import { requestContextQuery, sendMessageSchema, statusQuery, type SendMessageArgs } from '../shared/wire/messages';
import type { ForkResult, ForkStatus } from '../shared/wire/status';
import { firstLine } from '../shared/base/text';
import { temporalSettings } from './settings';
import { AgentNotFoundError, ForkflowError, InvalidForkInputError, ResultAlreadyTakenError } from './errors';
import { isHidden, startMemo, toAgentRow, type AgentRow } from './rows';
import { connectRidingOutages, OutageGuard, type OutageOptions } from './outage';
import { streamEvents, type StreamOptions } from './stream';
import type { StreamEvent } from '../shared/streams/stream-events';
import { mergeHooks } from '../shared/tools/hooks';
import { PromptSchedules } from './prompt-schedule';
import { backgroundAgent, interruptAgent, type BackgroundChildAnswer, type InterruptAnswer, type InterruptArgs } from './interrupt';

export * from './errors';
/** The converter a service's own `new Client(...)` needs to read what forkflow's workers store. */
export { forkflowDataConverter } from '../payloads/data-converter';
export { DEFAULT_OUTAGE_DEADLINE_MS, OutageGuard, type OutageOptions, type OutageRetry } from './outage';
export * from './dream';
export { extractMemories, summarizeAgent, summarizeTree, type AgentSummary, type ForkingClient, type MemoryExtraction } from './forked-callers';
export type { BackgroundChildAnswer, InterruptAnswer, InterruptArgs } from './interrupt';
export { PromptSchedules, PromptScheduleExistsError, PromptScheduleNotFoundError, type PromptScheduleSpecInput, type PromptScheduleView } from './prompt-schedule';
// For services that build their own Temporal Client or Worker: the same converter, the same keys.
export { EncryptionKeyError, isEncryptionKeyError } from '../payloads/keys';
export { isStorageConfigError, StorageConfigError } from '../payloads/storage';
export { PayloadDecryptionError } from '../payloads/codec';
export type { AgentRow } from './rows';
export type { TreeView } from './tree';
export type { GraphNode, NodeCounters, StartEdge, StartKind, TreeGraph } from './graph';
export type { AgentTimeline, Lane, SpanCounts, SpanKind, SpanOutcome, TimelineMark, TimelineSpan } from './timeline';
export type { CacheSafeParams, ForkInputJson } from '../shared/wire/fork-input';
export type { PrefixRef } from '../shared/prefix/prefix';
export type { ForkResult, ForkStatus } from '../shared/wire/status';
export { StreamEventError, type StreamOptions } from './stream';
export { StreamAssembler } from '../shared/streams/stream-assembly';
export { parseStreamEvent, streamEventSchema, type StreamEvent, type StreamEventOf, type StreamEventType } from '../shared/streams/stream-events';

import type { ForkParams } from './runner';
import { inheritedBy, runsAs, startFrom, turnPointOf, type PointOptions } from './time-travel';
import { retryAgent, type RetryOptions } from './retry';
import { refuseParentMedia, refuseUnsaidCounterfactual } from './input-checks';
import { forksByPoint, lineageOf, startAttributes, type ForkByPoint, type LineageStep } from './lineage';
import { forkPointSchema, resumable, type TurnPoint } from '../shared/prefix/time-travel';
import { envSetting } from '../shared/wire/env-settings';
export type { PointOptions } from './time-travel';
export type { RetryOptions } from './retry';
export type { ForkByPoint, LineageStep } from './lineage';
export type { ForkOrigin, TurnPoint } from '../shared/prefix/time-travel';
export type { ForkParams, ForkRunner } from './runner';

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40) || 'fork';
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

/** A started fork. Its result can be taken once (`result()`); status and messages any time. */
export class ForkHandle {
  private taken = false;
  constructor(
    private readonly client: ForkflowClient,
    readonly agentId: string,
    readonly runId: string | undefined,
  ) {}

  get workflowId(): string {
    return this.agentId;
  }

  /** Waits for the result; rides out a Temporal outage (the handle stays good). */
  async result(): Promise<ForkResult> {
    if (this.taken) throw new ResultAlreadyTakenError(this.agentId);
    this.taken = true;
    return this.client.result(this.agentId);
  }

  status(): Promise<ForkStatus> {
    return this.client.status(this.agentId);
  }

  sendMessage(args: SendMessageArgs): Promise<'queued' | 'resumed'> {
    return this.client.sendMessage(this.agentId, args);
  }

  cancel(): Promise<void> {
    return this.client.cancel(this.agentId);
  }

  /** Interrupts its turn in flight (not a cancel); see `ForkflowClient.interrupt`. */
  interrupt(args: InterruptArgs = {}): Promise<InterruptAnswer> {
    return this.client.interrupt(this.agentId, args);
  }

  /** Its live events (text, thinking, tool calls…) until `done`; see `ForkflowClient.stream`. */
  stream(opts: StreamOptions = {}): AsyncGenerator<StreamEvent, void, undefined> {
    return this.client.stream(this.agentId, opts);
  }
}

export interface ForkflowClientOptions {
  taskQueue?: string;
  /**
   * Riding out a Temporal outage: `result()`, `status()`, `transcript()`, `list()`, `tree()`,
   * `watch()` and `connect()` retry while the server is unreachable, for up to
   * `outage.deadlineMs` (default 5 minutes), then throw one `TemporalUnavailableError`.
   * Calls that are not safe to repeat (start, send, cancel, approve) are not retried.
   */
  outage?: OutageOptions;
  /**
   * The model queue of the forks this client starts, unless a fork names its own: a queue
   * served by `forkflow worker --model-queue`, where the server keeps one request limit for
   * every worker. `connect()` defaults it to FORKFLOW_MODEL_QUEUE.
   */
  modelQueue?: string;
  /**
   * Tools every fork this client starts gets, after its own: routes to a service's queues,
   * MCP servers (a fork's own server of the same name wins) and hooks (a fork's own run first).
   * See README "Your own tools".
   */
  defaults?: Pick<ForkInputJson, 'routes' | 'mcpServers' | 'hooks'>;
}

/** A fork's input with the client's default tools added (its own first). */
function withToolDefaults(input: ForkInputJson, defaults: ForkflowClientOptions['defaults']): ForkInputJson {
  if (!defaults) return input;
  const routes = [...(input.routes ?? []), ...(defaults.routes ?? [])];
  const mcpServers = { ...defaults.mcpServers, ...input.mcpServers };
  const hooks = mergeHooks(input.hooks, defaults.hooks);
  return {
    ...input,
    ...(routes.length ? { routes } : {}),
    ...(Object.keys(mcpServers).length ? { mcpServers } : {}),
    ...(hooks ? { hooks } : {}),
  };
}

export class ForkflowClient {
  readonly taskQueue: string;
  readonly modelQueue?: string;
  readonly defaults?: ForkflowClientOptions['defaults'];
  /** Runs this client's repeatable calls through an outage (see `ForkflowClientOptions.outage`). */
  readonly outage: OutageGuard;
  private ownedConnection?: Connection;

  constructor(
    readonly temporal: Client,
    opts: ForkflowClientOptions = {},
  ) {
    this.taskQueue = opts.taskQueue ?? TASK_QUEUE;
    if (opts.modelQueue) this.modelQueue = opts.modelQueue;
    if (opts.defaults) this.defaults = opts.defaults;
    this.outage = new OutageGuard(temporal.connection, undefined, opts.outage);
  }

  /**
   * Connects with `@temporalio/envconfig` settings (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS,
   * API key) and forkflow's DataConverter (payload encryption when FORKFLOW_ENCRYPTION_KEYS or
   * FORKFLOW_ENCRYPTION_KEY_FILE is set; `opts.dataConverter` overrides it). A server that is
   * not up yet is waited for, like any outage (`opts.outage`). The task queue defaults to
   * FORKFLOW_TASK_QUEUE, as the worker's does.
   */
  static async connect(opts: ForkflowClientOptions & { address?: string; namespace?: string; dataConverter?: DataConverter } = {}): Promise<ForkflowClient> {
    const settings = temporalSettings(opts);
    // Before connecting: a malformed key list fails at once, not after an outage wait.
    const dataConverter = opts.dataConverter ?? forkflowDataConverter();
    const connection = await connectRidingOutages(settings.connectionOptions, opts.outage);
    // Forks started inside a traced request join its trace.
    const interceptors = { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
    // The task queue's default is the worker's (FORKFLOW_TASK_QUEUE), so a client and a worker
    // configured by the same environment meet on one queue.
    const taskQueue = opts.taskQueue ?? (envSetting(process.env, 'FORKFLOW_TASK_QUEUE') || undefined);
    const modelQueue = opts.modelQueue ?? (envSetting(process.env, 'FORKFLOW_MODEL_QUEUE') || undefined);
    const client = new ForkflowClient(new Client({ connection, namespace: settings.namespace, interceptors, dataConverter }), { ...opts, ...(taskQueue ? { taskQueue } : {}), ...(modelQueue ? { modelQueue } : {}) });
    client.ownedConnection = connection;
    return client;
  }

  async close(): Promise<void> {
    await this.ownedConnection?.close();
  }

  private handleOf(agentId: string): WorkflowHandle {
    return this.temporal.workflow.getHandle(agentId);
  }

  /** Validates and starts a fork; returns its handle at once. A `from` point is resolved first (a bad one starts nothing). */
  async start(params: ForkParams, opts: { taskQueue?: string } = {}): Promise<ForkHandle> {
    const { agentId: shorthand, ...input } = await this.resolveFrom(params);
    const agentId = shorthand ?? input.overrides?.agentId ?? `fork-${slug(input.forkLabel ?? 'fork')}-${randomUUID().slice(0, 8)}`;
    // The parent first: siblings' inputs then share their leading bytes, which external
    // storage keeps once (src/payloads/fs-driver.ts).
    const { parent, ...rest } = input;
    const withId: ForkInputJson = withToolDefaults({ ...(parent ? { parent } : {}), ...rest, ...(this.modelQueue && !rest.modelQueue ? { modelQueue: this.modelQueue } : {}), overrides: { ...input.overrides, agentId } }, this.defaults);
    const validated = validateForkInput(withId);
    if (!validated.ok) throw new InvalidForkInputError(validated.issues);
    const v = validated.value;
    refuseParentMedia(parent?.messages, v.contextWindow);
    if (v.replay && v.parentRef && !resumable(v.parentRef)) throw new InvalidForkInputError([`replay: the point ends with the agent's own ${v.parentRef.pendingToolUseIds.length > 0 ? 'tool calls, unanswered' : 'reply'}; a replay goes on from a point where the agent was about to call the model (an earlier turn), or fork with a directive`]);
    const handle = await this.temporal.workflow.start(WORKFLOW_TYPES.fork, {
      args: [withId],
      taskQueue: opts.taskQueue ?? this.taskQueue,
      workflowId: agentId,
      staticSummary: `${v.forkLabel}: ${firstLine(v.prompt, 120)}`,
      staticDetails: `**Directive**\n\n${v.prompt}`,
      typedSearchAttributes: startAttributes(agentId, v),
      ...startMemo(v),
    });
    return new ForkHandle(this, agentId, handle.firstExecutionRunId);
  }

  /** `sync` waits for and returns the result; `forget` returns a handle whose result can be taken once. */
  fork(params: ForkParams, opts: { mode: 'sync'; taskQueue?: string }): Promise<ForkResult>;
  fork(params: ForkParams, opts: { mode: 'forget'; taskQueue?: string }): Promise<ForkHandle>;
  async fork(params: ForkParams, opts: { mode: 'sync' | 'forget'; taskQueue?: string }): Promise<ForkResult | ForkHandle> {
    const handle = await this.start({ mode: opts.mode, ...params }, opts);
    return opts.mode === 'sync' ? handle.result() : handle;
  }

  /** Waits for an agent's result (any number of times, unlike a handle's); rides out a Temporal outage. */
  result(agentId: string): Promise<ForkResult> {
    return this.outage.longPoll('result', () => decodeResult(this.handleOf(agentId), agentId));
  }

  /**
   * Sends a message to an agent by id or name (`root` narrows a name to one tree). A running
   * or idle agent reads it at its next turn boundary; a finished one resumes from its
   * durable history with it. An unknown agent, or one past retention, is AgentNotFoundError.
   */
  async sendMessage(target: string, args: SendMessageArgs, opts: { root?: string } = {}): Promise<'queued' | 'resumed'> {
    const parsed = sendMessageSchema.safeParse(args);
    if (!parsed.success) throw new ForkflowError(`Invalid message: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
    const agentId = await resolveAgent(this.temporal, target, opts.root);
    return deliverMessage(this.temporal, agentId, parsed.data);
  }

  /**
   * Starts a top-level agent that may start sub-agents (Agent, SendMessage, TaskOutput,
   * TaskStop tools): the root of a tree.
   */
  startAgent(params: ForkParams, opts: { taskQueue?: string } = {}): Promise<ForkHandle> {
    return this.start({ querySource: 'agent:main', subAgents: {}, ...params }, opts);
  }

  approve(agentId: string, requestId: string, opts: { reason?: string; by?: string } = {}): Promise<'approved' | 'denied'> {
    return this.call(agentId, () => decideApproval(this.temporal, agentId, requestId, 'approve', opts));
  }

  deny(agentId: string, requestId: string, opts: { reason?: string; by?: string } = {}): Promise<'approved' | 'denied'> {
    return this.call(agentId, () => decideApproval(this.temporal, agentId, requestId, 'deny', opts));
  }

  /** Every agent of a tree with counts by state (visibility). */
  tree(rootId: string): Promise<TreeView> {
    return this.outage.read('tree', () => treeOf(this.temporal, rootId));
  }

  /**
   * A tree as a graph: every member and the forks from points of them, each with how it was
   * started (fork, named, general, teammate, from a past turn; remote) and its live counters
   * (the root's ledger, else its own status while open, else visibility).
   */
  graph(rootId: string): Promise<TreeGraph> {
    return this.outage.read('graph', () => graphOf(this.temporal, rootId));
  }

  /**
   * An agent's current run as spans (turns, model calls, tool calls, sub-agents, waits,
   * compactions, keep-alives; batched and failover calls marked) and marks (messages,
   * approvals), read from its history; only event summaries are decoded.
   */
  timeline(agentId: string, opts: { runId?: string } = {}): Promise<AgentTimeline> {
    return this.outage.read('timeline', () => timelineOf(this.temporal, agentId, opts));
  }

  /** An agent's status each time it changes, until it closes (each look rides out an outage). */
  watch(agentId: string, opts: { intervalMs?: number; signal?: AbortSignal } = {}): AsyncGenerator<ForkStatus> {
    return watchStatus(this.temporal, agentId, { ...opts, read: (what, fn) => this.read(agentId, what, () => fn()) });
  }

  /**
   * An agent's live events as they happen: `turn-start`, `text-delta`, `thinking-delta`,
   * `tool-input-delta`, `tool-use`, `tool-result`, `message`, `turn-end`, `attempt-abandoned`
   * (drop that turn's deltas of older attempts: a retried model call), and last `done`. Each is
   * parsed with zod; `seq` is ordered and monotonic per agent, so after a reconnect pass
   * `fromSeq: lastSeq + 1`. Read by query: watching adds nothing to the agent's history. A
   * closed agent's stream yields what its run recorded (tool calls, results, turn ends with
   * the reply, `done`), without its deltas.
   *
   * @example
   * for await (const e of forkflow.stream(id)) if (e.type === 'text-delta') process.stdout.write(e.text);
   */
  stream(agentId: string, opts: StreamOptions = {}): AsyncGenerator<StreamEvent, void, undefined> {
    return streamEvents(this.temporal, agentId, opts);
  }

  status(agentId: string): Promise<ForkStatus> {
    return this.read(agentId, 'status', (h) => h.query(statusQuery));
  }

  /**
   * The agent's whole conversation, including a prefix it holds by reference (read from the
   * run that recorded it). The raw `transcript` query returns only the messages the run holds.
   */
  async transcript(agentId: string): Promise<MessageParam[]> {
    const messages: MessageParam[] = [];
    for await (const page of this.transcriptPages(agentId)) messages.push(...page);
    return messages;
  }

  /**
   * The agent's conversation as pages of messages (each under ~1 MiB, or one larger message),
   * oldest first: a conversation of any size, never held whole by one query. Refused (like
   * `transcript`) when the agent runs with skipTranscript. Each page's read rides out an
   * outage on its own.
   */
  transcriptPages(agentId: string): AsyncGenerator<MessageParam[]> {
    return conversationPages(this.temporal, { workflowId: agentId }, { query: 'transcript', each: (read) => this.read(agentId, 'transcript', read) });
  }

  /** A reference to an agent's conversation so far, for zero-copy forks (`forkFrom`). */
  prefixRefOf(agentId: string): Promise<PrefixRef> {
    return this.read(agentId, 'prefixRef', prefixRefFrom);
  }

  /**
   * Records a snapshot once in Temporal history (a `snapshotWorkflow` whose id is derived
   * from its content, so the same snapshot is recorded once however often it is forked) and
   * returns the reference forks start from. With `compact`, a snapshot too large for its forks'
   * window is compacted there once (one summary call), and the reference starts at the summary.
   */
  async recordSnapshot(snapshot: CacheSafeParams, opts: { taskQueue?: string; compact?: SnapshotCompaction } = {}): Promise<PrefixRef> {
    const validated = validateSnapshot(snapshot);
    if (!validated.ok) throw new InvalidForkInputError(validated.issues.map((i) => `parent.${i}`));
    refuseParentMedia(snapshot.messages, opts.compact?.window);
    const { requestHashes: _hashes, ...content } = snapshot;
    const workflowId = `forkflow-snapshot-${hashJson(opts.compact ? { content, compact: opts.compact } : content).slice(0, 32)}`;
    type Recorder = (s: CacheSafeParams, o?: { compact?: SnapshotCompaction }) => Promise<SnapshotRecord>;
    const existing = this.temporal.workflow.getHandle<Recorder>(workflowId);
    const referenceOf = ({ compaction: _cost, ...ref }: SnapshotRecord): PrefixRef => ref;
    try {
      if ((await existing.describe()).status.name === 'COMPLETED') return referenceOf(await existing.result());
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    const handle = await this.temporal.workflow.start<Recorder>(WORKFLOW_TYPES.snapshot, {
      args: opts.compact ? [snapshot, { compact: opts.compact }] : [snapshot],
      taskQueue: opts.taskQueue ?? this.taskQueue,
      workflowId,
      workflowIdConflictPolicy: 'USE_EXISTING',
      staticSummary: `snapshot: ${snapshot.messages.length} messages for ${snapshot.model}${opts.compact ? ', compacted for a window of ' + opts.compact.window + ' tokens' : ''}`,
    });
    return referenceOf(await handle.result());
  }

  /**
   * Starts several sibling forks from one parent snapshot, or from an agent (running or not) as
   * it stands or at the end of a past turn (`atTurn`, any run of its chain), with the prefix
   * recorded once: each fork's history holds a reference, not a copy, and records where it came
   * from (`origin`). Siblings started after the first one's response began read the shared
   * prefix from the provider's cache; a fork from turn k reads what the agent's own turn k + 1
   * wrote there. A snapshot over the forks' compaction threshold (their `contextManagement` and
   * `contextWindow`: the first fork's) is compacted once where it is recorded, and every sibling
   * starts from the summary; a fork of a compacted agent starts from its compaction boundary.
   */
  async forkMany(source: CacheSafeParams | ({ agentId: string } & PointOptions), forks: Omit<ForkParams, 'parent' | 'parentRef' | 'from'>[], opts: { taskQueue?: string } = {}): Promise<ForkHandle[]> {
    // Refused before anything starts (a fork refused by its workflow would still show in listings and lineage).
    if (!('agentId' in source)) for (const f of forks) refuseUnsaidCounterfactual(f, source.model);
    const start = 'agentId' in source ? await this.pointStart(source.agentId, source) : { at: { parentRef: await this.recordSnapshot(source, { ...opts, ...snapshotCompactionFor(source, forks[0]) }) }, runsAs: {} };
    if ('agentId' in source) for (const f of forks) refuseUnsaidCounterfactual(f, start.at.parentRef?.context.model);
    return Promise.all(forks.map((f) => this.start({ ...inheritedBy(f, start.runsAs), ...f, ...start.at }, opts)));
  }

  /**
   * What a fork from a point of an agent's past starts at (the point's reference and origin),
   * and how the agent ran that its prefix does not carry (its effort; see inheritedBy).
   */
  private async pointStart(agentId: string, opts: PointOptions): Promise<{ at: Pick<ForkParams, 'parentRef' | 'origin'>; runsAs: Pick<ForkParams, 'effort'> }> {
    const point = await this.turnPoint(agentId, opts);
    return { at: startFrom(point), runsAs: await this.outage.read('runsAs', () => runsAs(this.temporal, point)) };
  }

  /**
   * One zero-copy fork of an agent, running or finished: from its conversation as it stands, or
   * from the end of turn `atTurn` (`runId`: of that run's chain). With `counterfactual: true`
   * it may change the system prompt, tools, model or thinking (its status says which); with
   * `replay: true` it adds no directive and goes on as the agent would have.
   *
   * @example
   * const fork = await forkflow.forkFrom('agent-7', { prompt: 'Try the other fix.' }, { atTurn: 6 });
   */
  async forkFrom(agentId: string, params: Omit<ForkParams, 'parent' | 'parentRef' | 'from'>, opts: { taskQueue?: string } & PointOptions = {}): Promise<ForkHandle> {
    const { taskQueue, ...point } = opts;
    const [handle] = await this.forkMany({ agentId, ...point }, [{ parentAgentId: agentId, ...params }], taskQueue ? { taskQueue } : {});
    return handle!;
  }

  /**
   * Where an agent's conversation stood at the end of a turn (absent: as it stands), from any
   * run of its chain: the reference forks start from, and what the agent had spent up to it.
   * A negative turn, a turn past the end or a run of another agent is an InvalidForkPointError.
   */
  turnPoint(agentId: string, opts: PointOptions = {}): Promise<TurnPoint> {
    return this.outage.read('turnPoint', () => turnPointOf(this.temporal, agentId, opts));
  }

  /**
   * Continues an agent that ended `failed`, `killed`, `timeout`, `budget_exhausted` or at its
   * turn limit from its last complete turn (or `fromTurn`), as a new run of the same agent id
   * with a new budget or limits. Its turns before the point are not paid again: the new run
   * holds a reference to them, and its first request is the one the agent made (or would have
   * made) next, so it reads the provider's cache where that is warm. Usage stays exact (what
   * the agent paid before is kept); a tree's root keeps its ledger.
   */
  async retry(agentId: string, opts: RetryOptions = {}): Promise<ForkHandle> {
    const started = await retryAgent(this.temporal, agentId, opts);
    return new ForkHandle(this, agentId, started.runId);
  }

  /** Where an agent came from, back to the original: itself first, then each agent it was forked from (or started by). */
  lineage(agentId: string): Promise<LineageStep[]> {
    return this.outage.read('lineage', () => lineageOf(this.temporal, agentId));
  }

  /** The forks started from points of an agent (or of any of several), and theirs in turn (visibility; `depth` levels, default 5). */
  forksOf(agentIds: string | string[], opts: { depth?: number } = {}): Promise<ForkByPoint[]> {
    return this.outage.read('forksOf', () => forksByPoint(this.temporal, agentIds, opts));
  }

  /** `from` (a point named by agent and turn) as the reference and origin it resolves to, before anything starts. */
  private async resolveFrom(params: ForkParams): Promise<ForkParams> {
    if (!params.from || params.parent || params.parentRef) return params;
    const { from, ...rest } = params;
    const parsed = forkPointSchema.safeParse(from);
    if (!parsed.success) throw new InvalidForkInputError(describeIssues(parsed.error).map((i) => `from.${i}`));
    const start = await this.pointStart(parsed.data.agentId, { ...(parsed.data.turn !== undefined ? { atTurn: parsed.data.turn } : {}), ...(parsed.data.runId ? { runId: parsed.data.runId } : {}) });
    return { ...inheritedBy(rest, start.runsAs), ...rest, ...start.at };
  }

  /**
   * The cache-safe snapshot of an agent's conversation: its system prompt, tools, model and
   * thinking config exactly as it sent them, and its transcript as its requests send it (from
   * its latest compaction boundary on, when it was compacted). Forks started from it share the
   * agent's cached prefix.
   */
  async snapshotOf(agentId: string): Promise<CacheSafeParams> {
    const [context, transcript, ref] = await Promise.all([this.read(agentId, 'requestContext', (h) => h.query(requestContextQuery)), this.transcript(agentId), this.prefixRefOf(agentId)]);
    // A compacted agent's requests start at its latest boundary: that is what it sends, and what a fork shares.
    const messages = viewMessages(transcript, ref.window);
    const snapshot: CacheSafeParams = { system: context.system, tools: context.tools, model: context.model, messages, maxTokens: context.maxTokens };
    snapshot.requestHashes = { ...cacheKeyComponents({ ...context }), prefix: messagePrefixHash(messages) };
    if (context.thinking) snapshot.thinking = context.thinking;
    if (context.toolChoice) snapshot.toolChoice = context.toolChoice as CacheSafeParams['toolChoice'];
    if (context.mcpServers) snapshot.mcpServers = context.mcpServers;
    return snapshot;
  }

  /**
   * Interrupts the agent's turn in flight: its model call and tool calls stop (unfinished ones
   * are recorded as interrupted), its background sub-agents keep running, and it waits for
   * its next message — or, given `message`, goes on with it at once. Resolves once the turn
   * has stopped; an agent with nothing in flight (idle, finished) refuses with a ForkflowError.
   *
   * @example
   * await forkflow.interrupt('agent-7', { reason: 'wrong file', message: 'Edit src/b.ts instead.' });
   */
  interrupt(agentId: string, args: InterruptArgs = {}): Promise<InterruptAnswer> {
    return interruptAgent(this.temporal, agentId, args);
  }

  /**
   * Moves a running sync sub-agent to the background now: its parent's Agent call stops
   * waiting (answering `async_launched`) and the outcome arrives later as a task notification.
   */
  background(childId: string, opts: { by?: string } = {}): Promise<BackgroundChildAnswer> {
    return backgroundAgent(this.temporal, childId, opts);
  }

  /** Cron or interval Schedules that send a prompt to an agent (src/client/prompt-schedule.ts). */
  get schedules(): PromptSchedules {
    return new PromptSchedules(this.temporal, this.taskQueue);
  }

  /** Cancels the agent (and, through Temporal, its subtree); it ends `killed` with its partial result. */
  async cancel(agentId: string): Promise<void> {
    await this.call(agentId, (h) => h.cancel());
  }

  /**
   * Agents matching a visibility query (same language as the Web UI's search box). Forks run
   * with skipTranscript are left out unless `includeHidden` (Temporal's own UI still shows them).
   */
  list(opts: { query?: string; limit?: number; includeHidden?: boolean } = {}): Promise<AgentRow[]> {
    const base = `WorkflowType = '${WORKFLOW_TYPES.fork}'`;
    const query = opts.query ? `${base} AND (${opts.query})` : base;
    return this.outage.read('list', async () => {
      const rows: AgentRow[] = [];
      for await (const info of this.temporal.workflow.list({ query })) {
        if (!opts.includeHidden && isHidden(info)) continue;
        rows.push(toAgentRow(info));
        if (rows.length >= (opts.limit ?? 100)) break;
      }
      return rows;
    });
  }

  /** `call` for reads that are safe to repeat: they ride out a Temporal outage. */
  private read<T>(agentId: string, operation: string, fn: (h: WorkflowHandle) => Promise<T>): Promise<T> {
    return this.outage.read(operation, () => this.call(agentId, fn));
  }

  private async call<T>(agentId: string, fn: (h: WorkflowHandle) => Promise<T>): Promise<T> {
    try {
      return await fn(this.handleOf(agentId));
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new AgentNotFoundError(agentId);
      throw err;
    }
  }
}
