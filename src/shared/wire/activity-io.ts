/**
 * Inputs and results of forkflow's activities. Inputs stay small and reference the
 * conversation instead of carrying it (ARCHITECTURE "History must grow linearly"): each
 * message is recorded in history once, as the result that produced it.
 */
import type { MessageParam, StopReason, ToolResultBlock, Usage } from '../messages-api/anthropic';
import type { BlockPosition, OpeningRecipe } from '../prefix/fork-messages';
import type { RequestFacts } from '../prefix/cache-break';
import type { ContextCallSpec, ProviderCompaction } from '../context/call';
import type { NetworkAllowance } from '../tools/network';
import type { RunRef } from '../prefix/prefix';
import type { EffortLevel } from '../agents/agents';

/**
 * Programs seed 000 drops from a read-only agent's shell because they can shell out or write
 * (awk's `system()` and pipes, tee's files), which an operator may allow back for one fork
 * (`shellPrograms`): the read-only classifier then allows the shapes it validates (awk
 * without system, getline or redirects; tee only to /dev/null).
 */
export const SHELL_OPT_IN_PROGRAMS = ['awk', 'tee'] as const;
export type ShellOptIn = (typeof SHELL_OPT_IN_PROGRAMS)[number];

export interface ModelCallInput {
  run: RunRef;
  agentId: string;
  /**
   * The provider this agent's calls go to (a name from the worker's FORKFLOW_PROVIDERS,
   * src/shared/providers/providers.ts). Absent: the worker's default Anthropic client, as before providers.
   */
  provider?: string;
  /**
   * The model to ask, when not the request context's: a fallback's (src/shared/providers/failover.ts).
   * Absent: the context's model, as before failover.
   */
  model?: string;
  /**
   * The call has a fallback: it gives up on an outage (529, 5xx, connection) after this many
   * attempts, as `ModelUnavailable`, and the workflow calls the next candidate. Absent: it
   * retries as always (overload without limit).
   */
  failoverAfter?: number;
  turn: number;
  /** The request covers messages [0, messageCount) of the run's conversation. */
  messageCount: number;
  /** Chained digest of those messages (src/shared/base/hash.ts `chainDigest`): proves a cached copy exact. */
  digest: string;
  /**
   * The newest messages inline when small (the turn boundary: tool results and queued
   * messages), so a worker holding the rest needs no query. Absent when large.
   */
  tail?: { from: number; messages: MessageParam[] };
  /**
   * A by-reference fork's first call: how its opening message (the fork rules and the
   * directive, message `from`) is built, so the worker builds it instead of asking the
   * workflow (src/shared/prefix/fork-messages.ts `openingFromRecipe`). Costs history the directive's
   * size, not the rules'. The digest proves the result, as it proves a tail.
   */
  openingRecipe?: OpeningRecipe & { from: number };
  /** Hash of the run's RequestContext; the worker caches contexts by it. */
  contextKey: string;
  sharedPrefixEnd?: BlockPosition;
  /** When the run holds its prefix by reference: where messages [0, count) live. */
  prefix?: { run: RunRef; count: number; digest: string };
  /** The run holding the full request context, when not `run` itself. */
  contextFrom?: RunRef;
  /** `max_tokens` when it differs from the context's. */
  maxTokens?: number;
  /**
   * Set for an agent of a tree with a ledger (src/shared/tree/tree-ledger.ts): the call may
   * charge at most `left` tokens of the agent's own budget, and reserves its upper bound at
   * the tree's root (`ledger`) before the request, charging the usage after it. The request's
   * `max_tokens` is lowered to what was granted; a call that cannot fit fails with
   * `BudgetExhausted` (non-retryable), and the agent stops with `budget_exhausted`.
   */
  budget?: {
    left: number;
    ledger?: { rootId: string; toolUses: number; /** The tree's capability, sent with each request. */ token?: string };
    /**
     * In a tree that lends budget shares (src/shared/tree/tree-shares.ts): the most this call may
     * charge of the share its agent holds, instead of a reservation at the root. A call whose
     * bound does not fit fails with `TreeShareShort` (its need and want as details) and the
     * agent asks its root for more; `final`: the root gave what the tree could, so a call
     * that fits its need goes on with `max_tokens` lowered to the share.
     */
    share?: { tokens: number; final?: true };
  };
  /**
   * The previous request's message count: the result's `request.prefixAt` then chains this
   * request's first that many messages, so the workflow can tell whether its prefix changed.
   */
  prefixAt?: number;
  /** `1h`: mark every cache breakpoint with the 1-hour TTL (cacheWhileWaiting `ttl-1h`). */
  cacheTtl?: '1h';
  /**
   * A keep-alive (cacheWhileWaiting `keep-alive`), the agent's n-th: the same request as the
   * call this input repeats, with `max_tokens` minimal. Only its usage matters; its reply
   * joins no conversation. In a tree it is charged at the root (by this number), not reserved.
   */
  keepAlive?: number;
  /** `batch`: deliver this call through the Message Batches API (half price, results within 24 h); absent: interactive. */
  delivery?: 'batch';
  /** Delivery `batch`: a call its batch did not answer fails (`BatchNotAnswered`) instead of going interactive. */
  batchFallback?: 'fail';
  /** `false`: this fork's live stream is off, the call publishes no deltas (absent: on). */
  stream?: false;
  /**
   * Someone watched the agent's stream when the call was scheduled (the workflow's own view):
   * the call streams from its first delta without asking. Absent: it asks once the call has
   * run a while (a short call's reply reaches late subscribers in its `turn-end`).
   */
  watched?: true;
  /** The run's first call, not known to be watched: ask the workflow at once, not after a second. */
  askWatched?: true;
  /**
   * The context window (src/shared/context/call.ts): where the request's messages start (a
   * compaction boundary), what it clears, the window it must fit, provider context edits and
   * beta headers, and the size above which forkflow compacts first. Absent in histories
   * recorded before context management: the whole conversation, no checks.
   */
  context?: ContextCallSpec;
  /** The agent's effort, sent as `output_config.effort` (ForkInput.effort). Absent: not sent, as before it existed. */
  effort?: EffortLevel;
}

export interface ModelCallResult {
  message: MessageParam & { role: 'assistant' };
  stopReason: StopReason | null;
  usage: Usage;
  model: string;
  requestId?: string;
  /**
   * What the request sent, for cache-break diagnosis (src/shared/prefix/cache-break.ts). Absent in
   * histories recorded before it existed, and when a retry reused an earlier attempt's request.
   */
  request?: RequestFacts;
  /** The provider compacted the conversation in this call (its reply opens with the compaction block). */
  compaction?: ProviderCompaction;
  /** The provider's context editing cleared this much from the request (absent: nothing). */
  cleared?: { toolUses: number; thinkingTurns: number; tokens: number };
  /**
   * The request's size in tokens as the activity measured it before sending (the shared
   * estimate, or `count_tokens` near a limit); absent when the call had no context checks.
   */
  requestTokens?: number;
  /**
   * The request's cache TTL in ms as the worker sees it, when that is not the provider's own
   * (a worker with `modelClockScale`: an emulator whose clock runs faster). Keep-alive timers
   * use it; absent, they use the provider's TTL.
   */
  ttlMs?: number;
}

/** Where a tool call may write; `within` is the AutoMem memory directory, pinned at start. */
export type WritePolicySpec = { kind: 'workspace' } | { kind: 'none' } | { kind: 'within'; dir: string; canonicalDir: string };

export interface ToolCallInput {
  run: RunRef;
  agentId: string;
  turn: number;
  toolUseId: string;
  name: string;
  /** The tool input when small; otherwise read from the conversation at `inputAt`. */
  input?: unknown;
  inputAt?: { messageIndex: number };
  workspaceRoot?: string;
  writePolicy: WritePolicySpec;
  /** A `memory: user` agent's memory (tenant and agent): the tool worker finds its directory under its own user-memory root. */
  userMemory?: { tenant: string; agent: string };
  /**
   * The fork's sandbox settings: `readPaths` its caller allowed; `network` the hosts its
   * calls may reach through the worker's proxy (`false`, the legacy opt-in, or absent: none).
   */
  sandbox?: { network?: false | NetworkAllowance; readPaths?: string[] };
  /** Refuse Bash rather than run it unsandboxed, even on a worker that allows that. */
  requireSandbox?: boolean;
  /** `bypassPermissions`, allowed by the fork's caller: Bash runs outside the OS sandbox (logged, containment `none`). */
  unsandboxed?: boolean;
  /** A worktree fork: the repository whose git directory its writing calls may write (commits). */
  worktreeRepo?: string;
  /** A sub-agent started with the Agent tool's `cwd`: the workspace its root must lie in, checked canonically. */
  confinedTo?: string;
  /** Programs its operator allowed back into a read-only agent's shell (seed 000; absent: awk and tee withheld). */
  shellPrograms?: ShellOptIn[];
}

export interface ToolCallResult {
  content: string;
  /** Read of an image or a PDF: the blocks the model is shown instead of `content` (the image or document, a line of text). */
  blocks?: ToolResultContentBlock[];
  isError: boolean;
  /** Canonical paths the call wrote (for audits). */
  touched?: string[];
  /** Bash only: what contained the command on the worker (`sandbox`, `classifier-only`, `none`). */
  containment?: 'sandbox' | 'classifier-only' | 'none';
}

/** A block of a tool result's content: text, an image, a document. */
export type ToolResultContentBlock = Exclude<NonNullable<ToolResultBlock['content']>, string>[number];

/** Tool inputs larger than this travel by reference. */
export const INLINE_TOOL_INPUT_BYTES = 2048;

/** A turn-boundary message up to this size rides along in the model activity's input. */
export const INLINE_TAIL_BYTES = 2048;

export interface MemoryScope {
  dir: string;
  /** The directory's canonical path when the fork started; writes are refused if it moves. */
  canonicalDir: string;
}

export interface PathEscapeReport {
  path: string;
  reason: string;
  detail: string;
}

export interface WorktreeRef {
  path: string;
  branch: string;
  baseCommit: string;
  repoRoot: string;
  /**
   * The host queue of the worker that created it (`<queue>@<host>`, when workers run with a
   * host id): the worktree exists on that host only, so the fork's tools go there.
   */
  taskQueue?: string;
}

export type WorktreeResult = { kind: 'removed' } | { kind: 'kept'; path: string; branch: string; changedFiles: string[]; commits: number };

/** A running sub-agent's progress as its `status` query answers (src/activities/child-progress.ts). */
export type ChildProgress =
  | { found: true; state: string; turns: number; toolUses: number; totalTokens: number; doing?: string; lastText: string }
  | { found: false };

/** A member of a teammate's team as its tree's ledger has it (src/activities/child-progress.ts), for the teammate's ListAgents. */
export interface TeamMemberFacts {
  agentId: string;
  name?: string;
  /** The team's lead (the parent of its teammates). */
  lead: boolean;
  state: 'running' | 'ended';
  turns: number;
  toolUses: number;
  totalTokens: number;
}

/** A running sub-agent's counters for its parent's ListAgents (src/activities/child-progress.ts): no text. */
export interface ChildCounters {
  turns: number;
  toolUses: number;
  totalTokens: number;
  doing?: string;
}

/** Input of `compactContext`: the conversation by reference, as a model call's, and the cut. */
export interface CompactionCallInput {
  /** The model call this compaction comes before (its reference: run, counts, digest, context). */
  call: ModelCallInput;
  /** Messages [call.context.from, keepFrom) are summarised; the rest is kept verbatim after the summary. */
  keepFrom: number;
  /** The agent's n-th compaction (over all its runs): charged once per number at a tree's root. */
  compaction: number;
  /** `max_tokens` of the summarising call. */
  maxTokens: number;
  /** Extra instructions for the summary (the policy's `instructions`). */
  instructions?: string;
}

export interface CompactionCallResult {
  /** The summary text (the reply's text blocks). */
  summary: string;
  usage: Usage;
  model: string;
  requestId?: string;
  /** Input tokens of the summarising request (what the summarised part, plus the request for it, took). */
  requestTokens: number;
}
