/**
 * The typed API backend services use: start forks (sync or fire-and-forget), message them,
 * read their status and transcript, cancel them, list them. A thin layer over the Temporal
 * client that speaks forkflow's public contract (workflow type, signal and query names).
 *
 * @module forkflow
 */
import type { Client, Connection } from '@temporalio/client';
import { type DataConverter } from '@temporalio/common';
import { connectTemporal, type ForkflowClientOptions } from './options';
import type { MessageParam } from '../shared/messages-api/anthropic';
import { TASK_QUEUE } from '../shared/wire/constants';
import type { CacheSafeParams } from '../shared/wire/cache-safe-params';
import * as forking from './forking';
import type { PrefixRef } from '../shared/prefix/prefix';
import type { SnapshotCompaction } from '../shared/context/snapshot';
import * as reading from './reading';
import { decideApproval, deliverMessage, resolveAgent, type TreeView } from './tree';
import type { TreeGraph } from './graph';
import type { AgentTimeline } from './timeline';
import { sendMessageSchema, type SendMessageArgs } from '../shared/wire/messages';
import type { ForkResult, ForkStatus } from '../shared/wire/status';
import { ForkflowError } from './errors';
import { ForkHandle } from './handle';
import type { AgentRow } from './rows';
import { OutageGuard } from './outage';
import type { StreamOptions } from './stream';
import type { StreamEvent } from '../shared/streams/stream-events';
import { PromptSchedules } from './prompt-schedule';
import { backgroundAgent, interruptAgent, type BackgroundChildAnswer, type InterruptAnswer, type InterruptArgs } from './interrupt';
import type { ForkParams } from './runner';
import type { PointOptions } from './time-travel';
import { retryAgent, type RetryOptions } from './retry';
import type { ForkByPoint, LineageStep } from './lineage';
import type { TurnPoint } from '../shared/prefix/time-travel';

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
export type { ForkInputJson } from '../shared/wire/fork-input';
export type { CacheSafeParams } from '../shared/wire/cache-safe-params';
export type { PrefixRef } from '../shared/prefix/prefix';
export type { ForkResult, ForkStatus } from '../shared/wire/status';
export { StreamEventError, type StreamOptions } from './stream';
export { StreamAssembler } from '../shared/streams/stream-assembly';
export { parseStreamEvent, streamEventSchema, type StreamEvent, type StreamEventOf, type StreamEventType } from '../shared/streams/stream-events';
export type { PointOptions } from './time-travel';
export type { RetryOptions } from './retry';
export type { ForkByPoint, LineageStep } from './lineage';
export type { ForkOrigin, TurnPoint } from '../shared/prefix/time-travel';
export type { ForkParams, ForkRunner } from './runner';
export type { ForkflowClientOptions } from './options';
export { ForkHandle } from './handle';

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
    const { temporal, connection, options } = await connectTemporal(opts);
    const client = new ForkflowClient(temporal, options);
    client.ownedConnection = connection;
    return client;
  }

  async close(): Promise<void> {
    await this.ownedConnection?.close();
  }

  /** Validates and starts a fork; returns its handle at once. A `from` point is resolved first (a bad one starts nothing). */
  async start(params: ForkParams, opts: { taskQueue?: string } = {}): Promise<ForkHandle> {
    const { agentId, runId } = await forking.startFork(this, params, opts);
    return new ForkHandle(this, agentId, runId);
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
    return reading.resultOf(this, agentId);
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
    return reading.callAgent(this, agentId, () => decideApproval(this.temporal, agentId, requestId, 'approve', opts));
  }

  deny(agentId: string, requestId: string, opts: { reason?: string; by?: string } = {}): Promise<'approved' | 'denied'> {
    return reading.callAgent(this, agentId, () => decideApproval(this.temporal, agentId, requestId, 'deny', opts));
  }

  /** Every agent of a tree with counts by state (visibility). */
  tree(rootId: string): Promise<TreeView> {
    return reading.treeView(this, rootId);
  }

  /**
   * A tree as a graph: every member and the forks from points of them, each with how it was
   * started (fork, named, general, teammate, from a past turn; remote) and its live counters
   * (the root's ledger, else its own status while open, else visibility).
   */
  graph(rootId: string): Promise<TreeGraph> {
    return reading.treeGraph(this, rootId);
  }

  /**
   * An agent's current run as spans (turns, model calls, tool calls, sub-agents, waits,
   * compactions, keep-alives; batched and failover calls marked) and marks (messages,
   * approvals), read from its history; only event summaries are decoded.
   */
  timeline(agentId: string, opts: { runId?: string } = {}): Promise<AgentTimeline> {
    return reading.agentTimeline(this, agentId, opts);
  }

  /** An agent's status each time it changes, until it closes (each look rides out an outage). */
  watch(agentId: string, opts: { intervalMs?: number; signal?: AbortSignal } = {}): AsyncGenerator<ForkStatus> {
    return reading.watchAgent(this, agentId, opts);
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
    return reading.streamAgent(this, agentId, opts);
  }

  status(agentId: string): Promise<ForkStatus> {
    return reading.statusOf(this, agentId);
  }

  /**
   * The agent's whole conversation, including a prefix it holds by reference (read from the
   * run that recorded it). The raw `transcript` query returns only the messages the run holds.
   */
  transcript(agentId: string): Promise<MessageParam[]> {
    return reading.transcriptOf(this, agentId);
  }

  /**
   * The agent's conversation as pages of messages (each under ~1 MiB, or one larger message),
   * oldest first: a conversation of any size, never held whole by one query. Refused (like
   * `transcript`) when the agent runs with skipTranscript. Each page's read rides out an
   * outage on its own.
   */
  transcriptPages(agentId: string): AsyncGenerator<MessageParam[]> {
    return reading.transcriptPagesOf(this, agentId);
  }

  /** A reference to an agent's conversation so far, for zero-copy forks (`forkFrom`). */
  prefixRefOf(agentId: string): Promise<PrefixRef> {
    return reading.prefixRefOf(this, agentId);
  }

  /**
   * Records a snapshot once in Temporal history (a `snapshotWorkflow` whose id is derived
   * from its content, so the same snapshot is recorded once however often it is forked) and
   * returns the reference forks start from. With `compact`, a snapshot too large for its forks'
   * window is compacted there once (one summary call), and the reference starts at the summary.
   */
  recordSnapshot(snapshot: CacheSafeParams, opts: { taskQueue?: string; compact?: SnapshotCompaction } = {}): Promise<PrefixRef> {
    return forking.recordSnapshot(this, snapshot, opts);
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
  forkMany(source: CacheSafeParams | ({ agentId: string } & PointOptions), forks: Omit<ForkParams, 'parent' | 'parentRef' | 'from'>[], opts: { taskQueue?: string } = {}): Promise<ForkHandle[]> {
    return forking.forkMany(this, source, forks, opts, (params, o) => this.start(params, o));
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
    return forking.turnPoint(this, agentId, opts);
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
    return forking.lineage(this, agentId);
  }

  /** The forks started from points of an agent (or of any of several), and theirs in turn (visibility; `depth` levels, default 5). */
  forksOf(agentIds: string | string[], opts: { depth?: number } = {}): Promise<ForkByPoint[]> {
    return forking.forksOf(this, agentIds, opts);
  }

  /**
   * The cache-safe snapshot of an agent's conversation: its system prompt, tools, model and
   * thinking config exactly as it sent them, and its transcript as its requests send it (from
   * its latest compaction boundary on, when it was compacted). Forks started from it share the
   * agent's cached prefix.
   */
  snapshotOf(agentId: string): Promise<CacheSafeParams> {
    return forking.snapshotOf(this, agentId);
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
    await reading.callAgent(this, agentId, (h) => h.cancel());
  }

  /**
   * Agents matching a visibility query (same language as the Web UI's search box). Forks run
   * with skipTranscript are left out unless `includeHidden` (Temporal's own UI still shows them).
   */
  list(opts: { query?: string; limit?: number; includeHidden?: boolean } = {}): Promise<AgentRow[]> {
    return reading.listAgents(this, opts);
  }

}
