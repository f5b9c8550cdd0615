/**
 * Retrying an agent that ended badly (failed, killed, timed out, out of budget, at its turn
 * limit, or terminated) from its last complete turn, or from a turn given: a new run of the same
 * agent id that continues from a reference to that point — its earlier turns are neither copied
 * nor paid again — with a new budget or limits. What the agent paid before is kept in its usage
 * (and in a root's tree ledger, which the run takes back to the retried turn: tree-ledger.ts
 * `retryRoot`). Everything is checked before anything starts.
 */
import type { Client } from '@temporalio/client';
import { startInputOf } from '../payloads/stored';
import { ZERO_USAGE } from '../shared/messages-api/anthropic';
import type { BudgetInput } from '../shared/tree/budget';
import { CARRIED_STATE_VERSION, type CarriedStateInput } from '../shared/wire/carried-state';
import { WORKFLOW_TYPES } from '../shared/wire/constants';
import type { Duration } from '../shared/base/duration';
import { type ForkInputJson } from '../shared/wire/fork-input';
import { validateForkInput } from '../shared/wire/fork-input-validation';
import { statusQuery } from '../shared/wire/messages';
import { SA } from '../shared/wire/search-attributes';
import type { ForkResult } from '../shared/wire/status';
import { resumable, type RetryableEnd, type TurnPoint } from '../shared/prefix/time-travel';
import { closedResult, runEndOf } from '../shared/prefix/time-travel-reader';
import { AgentNotFoundError, InvalidForkInputError, RetryRefusedError } from './errors';
import { startAttributes } from './lineage';
import { startMemo } from './rows';
import { carriedLineage } from './tree';
import { turnPointOf } from './time-travel';

export interface RetryOptions {
  /** Go on from the end of this turn (default: the last turn the agent completed). */
  fromTurn?: number;
  /** The retried run's budget, counted from the retry point (default: the agent's own, afresh). */
  budget?: BudgetInput;
  /** The agent's turn limit, counting all its turns (default: its own). */
  maxTurns?: number;
  /** A wall-clock limit for the retried run (default: the agent's own, from the retry on). */
  timeout?: Duration;
}

/** How the agent's latest run ended, as a retry sees it; undefined: it finished its task. */
function endOf(status: string, result: ForkResult | undefined): RetryableEnd | undefined {
  if (!result) return status === 'COMPLETED' || status === 'FAILED' ? undefined : 'terminated';
  if (result.status !== 'completed') return result.status;
  if (result.stopReason === 'budget_exhausted') return 'budget_exhausted';
  if (result.stopReason === 'max_turns') return 'max_turns';
  return undefined;
}

/** What the agent had done and paid, from its result, or (terminated: no result) from its status. */
async function totals(client: Client, agentId: string, result: ForkResult | undefined): Promise<Pick<ForkResult, 'turns' | 'usage' | 'toolUses' | 'childCounter' | 'ledger' | 'cache' | 'ownMessagesFrom'>> {
  if (result) return result;
  const s = await client.workflow.getHandle(agentId).query(statusQuery);
  return { turns: s.turns, usage: s.usage, toolUses: s.toolUses, childCounter: s.children.total, ...(s.ownMessagesFrom !== undefined ? { ownMessagesFrom: s.ownMessagesFrom } : {}) };
}

/** The point a retry goes on from: `fromTurn`'s, or the last complete turn's (the latest, unless it ended mid-round). */
async function retryPoint(client: Client, agentId: string, fromTurn: number | undefined, end: TurnPoint | undefined, turns: number): Promise<TurnPoint> {
  if (fromTurn !== undefined) {
    const point = await turnPointOf(client, agentId, { atTurn: fromTurn });
    if (!resumable(point.ref)) {
      throw new RetryRefusedError(agentId, `Turn ${fromTurn} of ${agentId} ended with ${point.ref.pendingToolUseIds.length > 0 ? 'tool calls whose results were never recorded' : "the agent's final answer"}: retry from an earlier turn${point.ref.pendingToolUseIds.length > 0 ? '' : ', or send it a message to go on'}.`);
    }
    return point;
  }
  const latest = end ?? (await turnPointOf(client, agentId));
  if (resumable(latest.ref)) return latest;
  if (latest.ref.pendingToolUseIds.length === 0) throw new RetryRefusedError(agentId, `${agentId} ended with its final answer at turn ${latest.turn}: send it a message to go on, or fork it from a turn.`);
  // Its last turn stopped in its tool round: the turn before is the last complete one.
  return turnPointOf(client, agentId, { atTurn: Math.max(0, turns - 1) });
}

export async function retryAgent(client: Client, agentId: string, opts: RetryOptions): Promise<{ runId: string; fromTurn: number }> {
  const handle = client.workflow.getHandle(agentId);
  let described;
  try {
    described = await handle.describe();
  } catch (err) {
    if ((err as Error).name === 'WorkflowNotFoundError') throw new AgentNotFoundError(agentId);
    throw err;
  }
  if (described.type !== WORKFLOW_TYPES.fork) throw new RetryRefusedError(agentId, `${agentId} is a ${described.type}, not an agent.`);
  const status = described.status.name;
  if (status === 'RUNNING') throw new RetryRefusedError(agentId, `${agentId} is still running: cancel it first (\`forkflow cancel ${agentId}\`), or fork it from a turn.`);
  const run = { workflowId: agentId, runId: described.runId };
  const result = status === 'COMPLETED' || status === 'FAILED' ? await closedResult(client, run) : undefined;
  const previous = endOf(status, result);
  if (!previous) throw new RetryRefusedError(agentId, `${agentId} completed its task: send it a message to go on (\`forkflow send\`), or fork it from a turn.`);

  const input = (await startInputOf(client, run)) as ForkInputJson | undefined;
  if (!input) throw new RetryRefusedError(agentId, `${agentId}: its start input is not in its history.`);
  const { parent: _snapshot, parentRef: _ref, continuation: _old, from: _point, counterfactual: _cf, replay: _replay, retry: _retry, ...config } = input;
  if (config.treeLedger) {
    throw new RetryRefusedError(agentId, `${agentId} is a sub-agent of tree ${config.rootAgentId ?? '?'}, whose root keeps the tree's ledger: retry the root, or fork ${agentId} from a turn.`);
  }
  const done = await totals(client, agentId, result);
  const endPoint = runEndOf(result);
  const point = await retryPoint(client, agentId, opts.fromTurn, endPoint ? { agentId, runId: run.runId, turn: endPoint.turns, ref: endPoint.ref, usage: endPoint.usage, toolUses: endPoint.toolUses } : undefined, done.turns);
  const maxTurns = opts.maxTurns ?? config.maxTurns;
  if (maxTurns !== undefined && point.turn >= maxTurns) throw new RetryRefusedError(agentId, `From turn ${point.turn} ${agentId} is at its turn limit (${maxTurns}): give a higher maxTurns (--max-turns).`);

  const state: CarriedStateInput = {
    v: CARRIED_STATE_VERSION,
    turns: point.turn,
    // The conversation's tool calls up to the point; usage keeps everything the agent paid for.
    toolUses: point.toolUses,
    usage: done.usage,
    // A new budget, counted from the retry point.
    budgetUsage: ZERO_USAGE,
    ...(done.ledger ? { ledger: done.ledger } : {}),
    startedAt: new Date().toISOString(),
    inbox: [],
    inboxSeq: 0,
    children: [],
    childCounter: done.childCounter ?? 0,
    touched: [],
    maxTurnsReached: false,
    // Breaks counted on; the first call is not judged against a request of a turn it may not follow.
    ...(done.cache ? { cache: { breaks: done.cache.breaks, ...(done.cache.latest ? { latest: done.cache.latest } : {}) } } : {}),
    // Its output file still starts after what it inherited as a fork.
    ...(done.ownMessagesFrom !== undefined ? { ownFrom: done.ownMessagesFrom } : {}),
    // A counterfactual or replay keeps saying so; the retry mark is this run's own (its input).
    ...carriedLineage(result ? { ...result, retry: undefined } : undefined),
  };
  const next: ForkInputJson = {
    ...config,
    ...(opts.budget ? { budget: opts.budget } : {}),
    ...(opts.maxTurns !== undefined ? { maxTurns: opts.maxTurns } : {}),
    ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}),
    overrides: { ...config.overrides, agentId },
    retry: { fromTurn: point.turn, previousRunId: run.runId, previous },
    continuation: { ref: point.ref, state: { ...state } },
  };
  const validated = validateForkInput(next);
  if (!validated.ok) throw new InvalidForkInputError(validated.issues);
  const v = validated.value;
  const started = await client.workflow.start(WORKFLOW_TYPES.fork, {
    workflowId: agentId,
    taskQueue: described.taskQueue,
    args: [next],
    staticSummary: `retry from turn ${point.turn} (after ${previous})`,
    typedSearchAttributes: [...startAttributes(agentId, v), ...(v.name ? [{ key: SA.name, value: v.name }] : [])],
    ...startMemo(v),
  });
  return { runId: started.firstExecutionRunId, fromTurn: point.turn };
}
