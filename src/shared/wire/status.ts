/** The shapes of `status` (query) and the workflow result: the public read contract. */
import type { Usage } from '../messages-api/anthropic';
import type { AgentColor, EffortLevel, PermissionMode } from '../agents/agents';
import type { WorktreeResult } from './activity-io';
import type { PrefixRef } from '../prefix/prefix';
import type { CacheBreak, CarriedCache } from '../prefix/cache-break';
import type { TreeLedger } from '../tree/tree-ledger';
import type { LedgerAgentView } from '../tree/tree-ledger-view';
import type { ContextStatus } from '../context/state';
import type { CounterfactualPart, ForkOrigin, RetryMark } from '../prefix/time-travel';
import type { McpServerStatus } from '../tools/mcp';
import type { FailoverState, FailoverStatus } from '../providers/failover';

/** Where an agent came from, and what it changed (src/shared/prefix/time-travel.ts). */
export interface Lineage {
  /** A fork from a point of another agent: that agent, the run holding the point, the turn. */
  origin?: ForkOrigin;
  /** A counterfactual fork: the parts of its parent's request it changed (each breaks the cache by design). */
  counterfactual?: { changed: CounterfactualPart[] };
  /** A replay: it went on from the point as the agent would have, without a directive of its own. */
  replay?: boolean;
  /** This run retried the agent from a turn, after it had ended `previous`. */
  retry?: RetryMark;
}

export type ForkState = 'running' | 'idle' | 'completed' | 'failed' | 'killed' | 'timeout' | 'awaiting_approval';
export type TerminalStatus = 'completed' | 'failed' | 'killed' | 'timeout';

/** Why a fork stopped (a completed fork may have stopped for several reasons). */
export type StopReason = 'end_turn' | 'max_turns' | 'budget_exhausted' | 'cancelled' | 'timeout' | 'error' | 'escape_audit_failed' | 'interrupted';

export interface RejectedSignal {
  signal: string;
  at: string;
  issues: string[];
}

export interface ForkStatus extends Lineage {
  agentId: string;
  state: ForkState;
  turns: number;
  toolUses: number;
  usage: Usage;
  cacheHitRatio: number;
  pendingMessages: number;
  lastText?: string;
  error?: string;
  forkLabel: string;
  querySource: string;
  /** Its display colour (a definition's `color`, or ForkInput.color); absent: none. */
  color?: AgentColor;
  /** The effort its requests carry (`output_config.effort`); absent: none is sent. */
  effort?: EffortLevel;
  parentAgentId?: string;
  rootAgentId: string;
  model: string;
  cacheKeyHash: string;
  /** False when the parent had no snapshot yet and the fork used its own system prompt and tools. */
  usedParentSnapshot: boolean;
  maxTurns: number;
  maxTurnsReached: boolean;
  /**
   * The latest cache break: a call that wrote cache while reading less than half of what it
   * should have (the parent's prefix on a fork's first turn, its own previous request later).
   * See src/shared/prefix/cache-break.ts.
   */
  cacheBreak?: CacheBreak;
  /** Cache breaks so far, over all of this agent's runs. */
  cacheBreaks: number;
  /**
   * Keep-alive calls (cacheWhileWaiting `keep-alive`) over all its runs, their usage (also in
   * `usage`) and estimated cost. Absent until the first.
   */
  keepAlive?: { calls: number; usage: Usage; costUsd: number };
  /** Tokens charged against `budget.maxTokens` so far (cache reads weighted 0.1). */
  budgetUsed: number;
  budgetMax: number;
  name?: string;
  depth: number;
  /** Its sub-agents by state. */
  children: { running: number; completed: number; failed: number; killed: number; timeout: number; total: number };
  /**
   * It and its sub-agents' subtrees: usage, estimated cost, agents counted. At a tree's root
   * with a ledger: every agent the tree ever ran, running, trimmed and resumed ones included;
   * elsewhere its finished sub-agents' results.
   */
  tree: { usage: Usage; costUsd: number; agents: number };
  /**
   * At a tree's root with a ledger: the tree's budget (its root's), tokens charged (cache reads
   * weighted 0.1), what is left, turns and tool calls; `waiting`: in a tree that lends budget
   * shares, agents waiting for a share now (absent: none).
   */
  treeBudget?: { max: number; charged: number; left: number; turns: number; toolUses: number; waiting?: number };
  /** At a tree's root with a ledger: every agent's usage, cost, turns, tool calls and budget. */
  perAgent?: LedgerAgentView[];
  /**
   * What contained its latest Bash call: `sandbox` (the OS sandbox), `classifier-only`
   * (the worker has no sandbox; the read-only classifier alone), `none` (a workspace fork
   * outside the sandbox). Absent before its first Bash call.
   */
  containment?: 'sandbox' | 'classifier-only' | 'none';
  /** Its permission mode (seed 001's: default, acceptEdits, plan, bubble, bypassPermissions). */
  permissionMode?: PermissionMode;
  /** Tool calls waiting for a decision (permissionMode bubble). */
  approvals: { requestId: string; tool: string; summary: string; requestedAt: string }[];
  /**
   * Its context window and how it is kept (src/shared/context/): the policy, the window and
   * threshold, the newest request's size, compactions with their boundaries, what summarising
   * cost and what it saved. Absent until the conversation is open.
   */
  context?: ContextStatus;
  /** What the fork is doing right now, e.g. `model turn 3` or `tool Grep`. */
  activity?: string;
  messages: number;
  /** Where its own messages start in `messages`, after what it inherited as a fork (0 for a spawned agent); absent while it is set up, or in a chain begun before runs carried it. */
  ownMessagesFrom?: number;
  rejectedSignals: RejectedSignal[];
  startedAt: string;
  /** Its MCP servers: ready or unavailable (and why), tools offered, the worker holding a stdio session, restarts. */
  mcpServers?: McpServerStatus[];
  /** What went wrong around its tools that the model was not told (a hook that failed, a session started again): the last 20. */
  toolNotices?: string[];
  /** Interruptions of its turns in this run (src/shared/tree/interrupt.ts): how many, and the latest. */
  interrupts?: { count: number; last?: { by: string; reason?: string; during: 'model call' | 'tool calls'; turn: number; at: string } };
  /**
   * For an agent whose provider has fallbacks (src/shared/providers/failover.ts): the provider and model
   * its next call goes to, the chain, switches so far and the last one, and what fallbacks served.
   */
  failover?: FailoverStatus;
  /**
   * Its usage per provider that served its calls (turns, keep-alives, compactions; a fallback
   * after a failover), most input first, over all its runs: tokens, and the cache-read share
   * (cache reads over all input; an OpenAI-compatible provider's `cached_tokens`). Absent in a
   * run recorded before it was counted.
   */
  providers?: ProviderUsage[];
}

/** One provider's part of an agent's usage (ForkStatus.providers). */
export interface ProviderUsage {
  provider: string;
  calls: number;
  usage: Usage;
  /** Cache reads ÷ all input tokens (plain, read, written), to four places; 0 without input. */
  cacheReadShare: number;
}

export interface ForkResult extends Lineage {
  agentId: string;
  status: TerminalStatus;
  /** The final assistant text, or the latest one for a killed/timed-out fork. */
  text: string;
  usage: Usage;
  turns: number;
  toolUses: number;
  durationMs: number;
  stopReason: StopReason;
  maxTurnsReached: boolean;
  forkLabel: string;
  error?: string;
  cacheBreak?: CacheBreak;
  cacheBreaks?: number;
  /** Keep-alive calls, their usage (also in `usage`) and estimated cost, when there were any. */
  keepAlive?: { calls: number; usage: Usage; costUsd: number };
  /** Files a memory agent wrote (canonical paths). */
  touched?: string[];
  /** A worktree agent's worktree: removed when unchanged, kept (with what changed) otherwise. */
  worktree?: WorktreeResult;
  /** This agent's usage plus its sub-agents' (all levels), and its estimated cost in USD. */
  treeUsage?: Usage;
  treeCostUsd?: number;
  /** At a tree's root with a ledger: the ledger itself, every agent's facts (a resumed root takes it over). */
  ledger?: TreeLedger;
  /** Usage charged against its own budget, and the children counter: what a resumed run takes over. */
  budgetUsage?: Usage;
  childCounter?: number;
  model?: string;
  /** Where its own messages start (see ForkStatus.ownMessagesFrom): a resumed run carries it. */
  ownMessagesFrom?: number;
  /** Its cache-break watch, which a resumed run takes over (see src/shared/prefix/cache-break.ts). */
  cache?: CarriedCache;
  /** Its failover state after a switch (src/shared/providers/failover.ts), which a resumed run takes over. */
  failover?: FailoverState;
  /** Its sub-agents and how each ended (a killed parent lists their partial results). */
  children?: ChildSummary[];
  /** Where its conversation ends: a message to a finished agent resumes from here. */
  conversation?: PrefixRef;
  /** Its context window and compactions, as `status.context` shows them. */
  context?: ContextStatus;
}

export interface ChildSummary {
  agentId: string;
  name?: string;
  description: string;
  state: string;
  text?: string;
  error?: string;
}

export function isTerminal(state: ForkState): state is TerminalStatus {
  return state === 'completed' || state === 'failed' || state === 'killed' || state === 'timeout';
}
