/**
 * What one run of an agent hands the next (continue-as-new, a resume, a retry) and takes
 * over from the one before: `carryState` builds the CarriedState from the agent's parts,
 * `adoptState` writes a carried state back into them, and `CarriedRun` keeps what only the
 * adoption sets (turns before this run, where its own messages start, a wait or idle time to
 * go on with, the wall-clock deadline).
 *
 * It reads the agent through a narrow view (`CarryingAgent`), so agent.ts can use it without
 * an import circle. The order of `adoptState`'s writes is the order the agent always used.
 */
import { CARRIED_STATE_VERSION, type CarriedState } from '../../shared/wire/carried-state';
import type { ForkInput } from '../../shared/wire/fork-input';
import type { ForkStatus } from '../../shared/wire/status';
import type { TreeLedger } from '../../shared/tree/tree-ledger';
import type { CarriedWarmth } from '../../shared/prefix/cache-warmth';
import type { Tally } from './tally';
import type { Inbox } from './inbox';
import type { ChildTable } from './child-table';
import type { WorkArea } from './work-area';
import type { CacheWatch } from './cache-break';
import type { CacheWarmth } from './cache-warmth';
import type { ContextKeeper } from './context-keeper';
import type { LiveStream } from './live-stream';
import type { McpState } from './mcp-state';
import type { FailoverBook } from '../../shared/providers/failover';
import type { ShellTable } from './shell-table';
import type { TeamState } from './team-state';
import type { ShareBook } from './share-book';

/** What only adopting a carried state sets, read by the agent through its accessors. */
export class CarriedRun {
  /** Turns taken before this run started. */
  turnsBefore = 0;
  /** Where its own messages start, as an earlier run knew it. */
  ownFrom?: number;
  /** The previous run continued as new while waiting for its children: this run waits first (read once, by the turn loop). */
  private resumeWait = false;
  private resumeIdleMs?: number;
  /** Wall-clock limit as an instant (kept across continue-as-new). */
  private until?: number;

  get deadline(): number | undefined {
    return this.until;
  }

  /** Starts the wall-clock limit at `now`, unless a previous run of this agent started it already. */
  startClock(now: number, timeoutMs: number): void {
    this.until ??= now + timeoutMs;
  }

  /** True once, in a run whose predecessor continued as new while waiting for its children. */
  takeResumedWait(): boolean {
    const resumed = this.resumeWait;
    this.resumeWait = false;
    return resumed;
  }

  /** Once, in a run whose predecessor continued as new while idle: the idle time left (ms). */
  takeResumedIdle(): number | undefined {
    const left = this.resumeIdleMs;
    this.resumeIdleMs = undefined;
    return left;
  }

  /** Takes over the run-level parts of `state`; `resumed`: a resume (a new message), not a continue-as-new. */
  adoptRun(state: CarriedState, resumed: boolean): void {
    this.turnsBefore = state.turns;
    this.ownFrom = state.ownFrom;
    this.resumeWait = state.waitingForChildren === true && !resumed;
    if (state.idleMs !== undefined && !resumed) this.resumeIdleMs = state.idleMs;
  }

  /** The deadline a previous run set (an adoption overrides any). */
  adoptDeadline(deadline: number | undefined): void {
    this.until = deadline;
  }
}

/** The parts of an agent a carried state is made of (ForkAgent has them all). */
export interface CarryingAgent {
  readonly input: ForkInput;
  readonly carried: CarriedRun;
  readonly tally: Tally;
  readonly inbox: Inbox;
  readonly children: ChildTable;
  readonly workArea: WorkArea;
  readonly cache: CacheWatch;
  readonly warmth: CacheWarmth;
  readonly window: ContextKeeper;
  readonly live: LiveStream;
  readonly mcp: McpState;
  readonly failover: FailoverBook;
  readonly shells: ShellTable;
  readonly team: TeamState;
  readonly shares?: ShareBook;
  readonly lineage: Pick<ForkStatus, 'origin' | 'counterfactual' | 'replay' | 'retry'>;
  readonly ownFrom: number | undefined;
  readonly inTreeLedger: boolean;
  book?: TreeLedger;
  startedAt: string;
}

/** What a continuing run of this agent takes over. */
export function carryState(agent: CarryingAgent): CarriedState {
  const { tally } = agent;
  return {
    v: CARRIED_STATE_VERSION,
    turns: tally.turns,
    toolUses: tally.toolUses,
    usage: tally.usage,
    budgetUsage: tally.budgetUsage,
    lastText: tally.lastText,
    startedAt: agent.startedAt,
    deadline: agent.carried.deadline,
    inbox: [...agent.inbox.entries],
    inboxSeq: agent.inbox.nextSeq,
    children: [...agent.children.all],
    childCounter: agent.children.started,
    touched: [...agent.workArea.touched],
    maxTurnsReached: tally.maxTurnsReached,
    ...(agent.book ? { ledger: agent.book } : {}),
    spawned: agent.children.spawned,
    folded: agent.children.folded,
    cache: agent.cache.carry(),
    ...(tally.keepAlive ? { keepAlive: tally.keepAlive } : {}),
    ...(tally.providers ? { providers: tally.providers } : {}),
    ...withWarmth(agent.warmth.carry()),
    context: agent.window.carry(),
    ...carriedLineage(agent.lineage),
    streamOffset: agent.live.endOffset,
    ...(agent.live.polledAt !== undefined ? { streamPolledAt: agent.live.polledAt } : {}),
    ...withMcp(agent.mcp.carry()),
    ...withFailover(agent.failover.carry()),
    // Only agents that ever started a background shell task carry the part (earlier states stay as they were).
    ...(agent.shells.started > 0 ? { shells: { records: [...agent.shells.all], counter: agent.shells.started } } : {}),
    ...withTeam(agent.team.carry()),
    ...(agent.ownFrom !== undefined ? { ownFrom: agent.ownFrom } : {}),
    ...(agent.shares ? { share: agent.shares.carry() } : {}),
  };
}

/** Takes over a previous run's state (continue-as-new keeps the budget; a resume keeps it too unless a new one was granted). */
export function adoptState(agent: CarryingAgent, state: CarriedState, opts: { keepBudget: boolean }): void {
  const resumed = Boolean(agent.input.continuation?.message);
  agent.tally.adopt(state, opts);
  agent.carried.adoptRun(state, resumed);
  agent.startedAt = state.startedAt;
  agent.carried.adoptDeadline(state.deadline);
  agent.inbox.adopt(state.inbox, state.inboxSeq);
  agent.children.adopt(state.children, state.childCounter, state.spawned, state.folded);
  if (state.shells) agent.shells.adopt(state.shells.records, state.shells.counter);
  if (state.ledger && agent.inTreeLedger) agent.book = state.ledger;
  agent.workArea.recordWrites(state.touched);
  agent.cache.adopt(state.cache);
  agent.failover.adopt(state.failover);
  agent.window.adoptState(state.context);
  // A continue-as-new keeps its MCP sessions; a resumed agent (its sessions closed when it ended) opens them again.
  if (!resumed) agent.mcp.adopt(state.mcp);
  // Only a continue-as-new goes on with the same wait; a resumed agent starts a new conversation turn.
  if (!resumed) agent.warmth.adopt(state.warmth);
  // A resumed teammate is at work again: only its plan approval stays.
  agent.team.adopt(resumed ? { planApproved: state.team?.planApproved } : state.team);
}

/** What of its lineage a continuing run takes over (the origin is in its input). */
function carriedLineage(l: CarryingAgent['lineage']): Pick<CarriedState, 'lineage'> {
  const { origin: _inInput, ...rest } = l;
  return Object.keys(rest).length > 0 ? { lineage: rest } : {};
}

function withMcp(mcp: CarriedState['mcp']): Pick<CarriedState, 'mcp'> {
  return mcp ? { mcp } : {};
}

function withFailover(failover: CarriedState['failover']): Pick<CarriedState, 'failover'> {
  return failover ? { failover } : {};
}

function withTeam(team: CarriedState['team']): Pick<CarriedState, 'team'> {
  return team ? { team } : {};
}

function withWarmth(warmth: CarriedWarmth | undefined): Pick<CarriedState, 'warmth'> {
  return warmth ? { warmth } : {};
}
