/**
 * A fork's state inside its workflow: the conversation (append-only), counters, usage, the
 * inbox, and the status it reports. JSON-safe by construction (arrays and plain objects only),
 * so it can cross continue-as-new unchanged.
 *
 * The agent exists from the workflow's first line, so its handlers can be registered before
 * any await; its conversation is opened later (`open`), once a worktree fork has its
 * worktree — the opening names the worktree's path.
 *
 * This file keeps its identity, state and the sub-objects it owns. The open conversation
 * (messages, base, context, digest, append) is the class it extends (agent-conversation.ts);
 * what a run carries to the next and takes over from the one before is agent-carry.ts.
 */
import { patched, workflowInfo } from '@temporalio/workflow';
import { type TextBlock, type Usage } from '../../shared/messages-api/anthropic';
import { DEFAULTS } from '../../shared/wire/constants';
import type { ForkInput } from '../../shared/wire/fork-input';
import type { MemoryScope, WorktreeRef } from '../../shared/wire/activity-io';
import type { CarriedState } from '../../shared/wire/carried-state';
import type { ChildRecord } from '../../shared/tree/tree-input';
import type { PrefixRef, RunRef } from '../../shared/prefix/prefix';
import type { SendMessageArgs } from '../../shared/wire/messages';
import type { ForkState, ForkStatus, RejectedSignal, StopReason } from '../../shared/wire/status';
import type { CacheBreak } from '../../shared/prefix/cache-break';
import { estimateCostUsd } from '../../shared/providers/pricing';
import type { TreeLedger } from '../../shared/tree/tree-ledger';
import { ledgerTotals } from '../../shared/tree/tree-ledger-rules';
import { isoNow } from '../clock';
import { treeTotals } from './tree-totals';
import { ApprovalBook } from './approval-book';
import { Inbox, renderQueuedMessage } from './inbox';
import { ShellTable } from './shell-table';
import { WorkArea } from './work-area';
import { Tally } from './tally';
import { ChildTable } from './child-table';
import type { ForkSetup } from './setup';
import { CacheWatch } from './cache-break';
import { CacheWarmth } from './cache-warmth';
import type { LiveStream } from './live-stream';
import { ToolTable } from '../../shared/tools/table';
import { ContextKeeper } from './context-keeper';
import { resolveWindow, windowRefusal } from '../../shared/context/windows';
import { FAILURE, failure } from '../../shared/wire/failures';
import type { TurnCall } from '../../shared/prefix/time-travel';
import { TurnIndex } from './turn-index';
import { McpState } from './mcp-state';
import { TurnControl } from './turn-control';
import { FailoverBook } from '../../shared/providers/failover';
import { failoverChainOf, priceOn } from './failover-routes';
import { TeamState } from './team-state';
import type { ShareBook } from './share-book';
import { adoptState, CarriedRun, carryState } from './agent-carry';
import { AgentConversation } from './agent-conversation';

/** Before this patch `default` asked nothing (it was `acceptEdits`); asked only by agents in `default`. */
export const DEFAULT_MODE_ASKS_PATCH = 'forkflow-default-mode-asks-1';

/** The agent; its open conversation (messages, base, context, digest…) is the part it extends (agent-conversation.ts). */
export class ForkAgent extends AgentConversation {
  readonly agentId: string;
  readonly rootAgentId: string;
  state: ForkState = 'running';
  stopReason?: StopReason;
  /** Cache breaks on any turn (owned by cache-break.ts). */
  readonly cache = new CacheWatch();
  /** Every tool it may call: where each runs and what it is (src/shared/tools/table.ts); rebuilt by {@link buildToolTable}. */
  toolTable = new ToolTable();
  /** Its MCP servers: records taken at start, sessions, restarts (owned by mcp-state.ts, driven by mcp-servers.ts and mcp-call.ts). */
  readonly mcp = new McpState();
  /** What went wrong around its tools that the model was not told (a hook that failed open, a server's list that changed): the last few, for status. */
  readonly toolNotices: string[] = [];
  /** Turns, tool calls, usage and budget (owned by tally.ts). */
  readonly tally = new Tally();
  /** Where its model calls go while its provider is out (written by failover.ts only). */
  readonly failover = new FailoverBook();
  /** Where each of this run's turns began (owned by turn-index.ts, fed by the turn loop). */
  readonly turnIndex = new TurnIndex();
  /** Where it came from and what it changed (a fork from a point, a counterfactual, a retry); set once, after set-up. */
  lineage: Pick<ForkStatus, 'origin' | 'counterfactual' | 'replay' | 'retry'> = {};
  /** What keeps its prompt cache warm while it waits (owned by cache-warmth.ts). */
  readonly warmth: CacheWarmth;
  /** Its context window: policy, compaction boundaries, what they cost and saved (owned by context-keeper.ts). */
  readonly window: ContextKeeper;
  /** Worktree, memory directory and written paths (owned by work-area.ts, set by isolation.ts). */
  readonly workArea = new WorkArea();
  /** Messages and task notifications waiting for the next turn boundary (owned by inbox.ts). */
  readonly inbox = new Inbox();
  /** Sub-agents on record and their live handles (owned by child-table.ts, driven by children.ts). */
  readonly children = new ChildTable();
  /** Background shell tasks on record and their watches (owned by shell-table.ts, driven by shell-tasks.ts). */
  readonly shells = new ShellTable();
  /** A teammate's team state: shutdown asked, plan approved (owned by team-inbox.ts). */
  readonly team = new TeamState();
  /** Tool calls waiting for a decision (owned by approval-book.ts, driven by approvals.ts). */
  readonly approvals = new ApprovalBook();
  /** The turn part in flight, its interruption, sync sub-agents to move to the background (owned by turn-control.ts, driven by interrupt.ts). */
  readonly turnControl = new TurnControl();
  /** This run reserves and charges its model calls at the tree's root (tree-authority.ts decides, once). */
  inTreeLedger = false;
  /** The tree ledger, held by a tree's root only (written by tree-authority.ts's handlers). */
  book?: TreeLedger;
  /** Its share of the tree's budget, in a tree that lends shares (owned by share-book.ts, driven by tree-shares.ts). */
  shares?: ShareBook;
  /** What it is doing right now (`model turn 3`, `tool Grep`…), for status; set through {@link doing}. */
  private current?: string;
  /** Why it failed, for status and its result; set through {@link fail}. */
  private failure?: string;
  /** What only adopting a previous run's state sets: turns before, a wait to go on with, the deadline (owned by agent-carry.ts). */
  readonly carried = new CarriedRun();
  readonly rejectedSignals: RejectedSignal[] = [];
  /** Its live stream; set by forkWorkflow before the first await (it needs the carried offset). */
  live!: LiveStream;
  startedAt = isoNow();


  /**
   * `default` asks before a change (src/shared/tools/permissions.ts). Decided once, when the run
   * starts: runs recorded before (and running when this shipped) treat `default` as
   * `acceptEdits`, and carry that on as `acceptEdits` when they continue as new (continuation.ts).
   */
  readonly defaultAsks: boolean;

  constructor(readonly input: ForkInput) {
    super();
    this.defaultAsks = input.permissionMode === 'default' && patched(DEFAULT_MODE_ASKS_PATCH);
    this.agentId = input.overrides?.agentId ?? workflowInfo().workflowId;
    this.rootAgentId = input.rootAgentId ?? this.agentId;
    this.warmth = new CacheWarmth(input.cacheWhileWaiting ?? 'off');
    this.window = new ContextKeeper(input.contextManagement);
  }

  /** The tool table from its routes and its MCP servers' recorded lists (after they are opened). */
  buildToolTable(): void {
    this.toolTable = new ToolTable(this.input.routes ?? [], { records: this.mcp.all, overrides: (server) => this.input.mcpServers?.[server]?.traits });
  }

  /** Reports something about its tools in its status (bounded: the last TOOL_NOTICES_KEPT). */
  notice(text: string): void {
    this.toolNotices.push(text.length > 500 ? `${text.slice(0, 497)}...` : text);
    if (this.toolNotices.length > TOOL_NOTICES_KEPT) this.toolNotices.shift();
  }

  /**
   * Opens the conversation: the request context and the opening messages of `setup`. The
   * model is known from here, so is its window (a `contextWindow` it cannot have fails the fork).
   */
  open(setup: ForkSetup): void {
    const override = this.input.contextWindow;
    const refusal = override === undefined ? undefined : windowRefusal(setup.summary.model, override);
    if (refusal) throw failure(FAILURE.invalidForkInput, refusal);
    this.window.configure(resolveWindow(setup.summary.model, override));
    this.window.adoptCut(setup.prefixRef?.window);
    this.openConversation(setup);
  }

  /** Where a fork of this agent starts its requests (a compaction boundary), for PrefixRef `window`. */
  get cut(): PrefixRef['window'] {
    return this.window.cut();
  }

  /**
   * The model this agent calls. Known from the input before the conversation is open, so the
   * status of an agent still being set up names it too.
   */
  get model(): string {
    const i = this.input;
    return this.openedModel ?? i.model ?? i.parent?.model ?? i.parentRef?.context.model ?? i.continuation?.ref.context.model ?? DEFAULTS.model;
  }

  /** Where this agent's tools act: its worktree, else the workspace root it was given. */
  get worktree(): WorktreeRef | undefined {
    return this.workArea.worktree;
  }
  /** The memory directory, pinned at start (autoMem filter). */
  get memory(): MemoryScope | undefined {
    return this.workArea.memory;
  }
  /** Canonical paths this agent's tool calls wrote (audited at the end of a memory fork). */
  get touched(): readonly string[] {
    return this.workArea.touched;
  }

  get workspaceRoot(): string | undefined {
    return this.worktree?.path ?? this.input.workspace?.root;
  }

  /**
   * The task queue its tools go to, when not the workflow's own: the host that holds its
   * worktree, else the workspace's queue it was given. Undefined: any worker of its queue.
   */
  get toolQueue(): string | undefined {
    return this.worktree?.taskQueue ?? this.input.workspace?.taskQueue;
  }

  get turns(): number {
    return this.tally.turns;
  }
  get toolUses(): number {
    return this.tally.toolUses;
  }
  get usage(): Usage {
    return this.tally.usage;
  }
  /** Usage charged against the budget (equals `usage` unless this run resumed a finished agent). */
  get budgetUsage(): Usage {
    return this.tally.budgetUsage;
  }
  get lastText(): string | undefined {
    return this.tally.lastText;
  }
  get maxTurnsReached(): boolean {
    return this.tally.maxTurnsReached;
  }

  /** A message from a person or another agent (default priority `next`). */
  enqueueMessage(message: SendMessageArgs): void {
    this.inbox.enqueue({ priority: message.priority ?? 'next', kind: 'message', text: renderQueuedMessage(message), from: message.from, summary: message.summary });
  }

  rejectSignal(signal: string, issues: string[]): void {
    this.rejectedSignals.push({ signal, at: isoNow(), issues });
    if (this.rejectedSignals.length > DEFAULTS.rejectedSignalsKept) this.rejectedSignals.shift();
  }

  /** Takes every queued message as text blocks, in delivery order. */
  drainInbox(): TextBlock[] {
    const taken = this.inbox.take();
    for (const m of taken) this.live.message(this.turns + 1, m);
    return taken.map((m) => ({ type: 'text', text: m.text }));
  }

  get runningChildren(): ChildRecord[] {
    return this.children.running;
  }

  get activity(): string | undefined {
    return this.current;
  }

  /** Records what the agent is doing now (`undefined`: nothing in particular). */
  doing(activity: string | undefined): void {
    this.current = activity;
  }

  get error(): string | undefined {
    return this.failure;
  }

  /** Records why the agent failed (the last reason wins: an audit failure overrides a provider error). */
  fail(message: string): void {
    this.failure = message;
  }

  get deadline(): number | undefined {
    return this.carried.deadline;
  }

  /** Starts the wall-clock limit at `now`, unless a previous run of this agent started it already. */
  startClock(now: number, timeoutMs: number): void {
    this.carried.startClock(now, timeoutMs);
  }

  /** True once, in a run whose predecessor continued as new while waiting for its children. */
  takeResumedWait(): boolean {
    return this.carried.takeResumedWait();
  }

  /** Keep-alive calls with their estimated cost, for status and the result (nothing before the first). */
  keepAliveFields(): Pick<ForkStatus, 'keepAlive'> {
    const k = this.tally.keepAlive;
    return k ? { keepAlive: { ...k, costUsd: estimateCostUsd(this.model, k.usage) } } : {};
  }

  /** Once, in a run whose predecessor continued as new while idle: the idle time left (ms). */
  takeResumedIdle(): number | undefined {
    return this.carried.takeResumedIdle();
  }

  /** The latest cache break, if any. */
  get cacheBreak(): CacheBreak | undefined {
    return this.cache.latest;
  }

  /** What a continuing run of this agent takes over (agent-carry.ts). */
  carry(): CarriedState {
    return carryState(this);
  }

  /**
   * Where its own messages start in its conversation: after what it inherited as a fork (0 for
   * a spawned agent). Set by its first run, carried by every later one; absent while it is set
   * up, and in a chain that began before runs carried it.
   */
  get ownFrom(): number | undefined {
    return this.openedOwnFrom ?? this.carried.ownFrom;
  }

  /** What this run recorded of its model call of `turn` (the `turnPoint` query). */
  turnCall(turn: number): TurnCall | undefined {
    return this.turnIndex.at(turn);
  }

  /** The run before this one in the agent's chain (continue-as-new, a resume, a retry). */
  get previousRun(): RunRef | undefined {
    const run = this.input.continuation?.ref.run;
    return run && run.workflowId === workflowInfo().workflowId ? run : undefined;
  }

  /** Turns taken by earlier runs of this agent (the per-run turn limit of continuation.ts counts from here). */
  get turnsAtRunStart(): number {
    return this.carried.turnsBefore;
  }

  /** Takes over a previous run's state (continue-as-new keeps the budget; a resume keeps it too unless a new one was granted; agent-carry.ts). */
  adopt(state: CarriedState, opts: { keepBudget: boolean }): void {
    adoptState(this, state, opts);
  }

  /**
   * This agent's usage with its children's subtrees, and the estimated cost: at a tree's root
   * the ledger (every agent the tree ran, running ones included), elsewhere its own usage and
   * its finished children's results.
   */
  treeTotals(): ReturnType<typeof treeTotals> {
    if (this.book) {
      const t = ledgerTotals(this.book);
      return { usage: t.usage, costUsd: t.costUsd, agents: t.agents };
    }
    const primary = failoverChainOf(this)[0]!;
    const price = priceOn(this, primary.provider, primary.model);
    return treeTotals({ model: this.model, usage: this.usage, children: this.children.all, folded: this.children.folded, fallbacks: this.failover.state.fallbackCalls, ...(price ? { price } : {}) });
  }

  /** Blocks re-sent after the cached prefix at every boundary (criticalSystemReminder). */
  reminderBlocks(): TextBlock[] {
    const reminder = this.input.overrides?.criticalSystemReminder;
    return reminder ? [{ type: 'text', text: `<system-reminder>\n${reminder}\n</system-reminder>` }] : [];
  }

}

/** Tool notices kept for status. */
const TOOL_NOTICES_KEPT = 20;
