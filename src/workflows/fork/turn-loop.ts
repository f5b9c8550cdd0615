/**
 * The turn loop, split into steps: a model step, a tool round, and the turn boundary where
 * queued messages enter the conversation. Each turn ends in a discriminated outcome; stop
 * conditions are small predicates checked before every model call.
 */
import { ActivityFailure, ApplicationFailure, condition } from '@temporalio/workflow';
import { toolUsesOf, type ContentBlock, type ToolResultBlock, type ToolUseBlock, textOf, ZERO_USAGE } from '../../shared/messages-api/anthropic';
import { interruptedCallText, interruptionNote } from '../../shared/tree/interrupt';
import type { ModelCallInput, ModelCallResult } from '../../shared/wire/activity-io';
import type { StopReason } from '../../shared/wire/status';
import { batchModel, model, modelQueueOf } from '../activities';
import type { ForkAgent } from './agent';
import { budgetExhausted, remainingTokens } from '../../shared/tree/budget';
import { BUDGET_EXHAUSTED_FAILURE } from '../../shared/tree/tree-ledger';
import { workflowNow } from '../clock';
import { continueAsNewNow, continueWhileWaiting, shouldContinueAsNew, wantsToContinueWhileWaiting } from './continuation';
import { runToolRound } from './tool-round';
import { whileWaiting } from './keep-alive';
import { publishProgress } from './visibility';
import { modelCallInput } from './call-input';
import { callWithFailover } from './failover';
import { countOnProvider } from './provider-usage';
import { compactAfterRefusal, contextAfterCall, contextRefusal, manageContext } from './compaction';
import { errorResult } from './tool-results';
import { settleCommands } from './typed-commands';
import { askShare, shareShortOf, spending, topUpShare } from './tree-shares';

export type TurnOutcome =
  | { kind: 'run_again' } // tools ran (or messages arrived): call the model again
  | { kind: 'final' } //     the model finished and nothing is queued
  | { kind: 'stop'; reason: StopReason }
  | { kind: 'interrupted' }; // an interruption stopped it and nothing is queued: wait for the next message

type StopCondition = (agent: ForkAgent) => StopReason | undefined;

/** Checked before each model call; the first that fires ends the loop normally. */
export const stopConditions: StopCondition[] = [
  (a) => (a.turns >= a.input.maxTurns ? 'max_turns' : undefined),
  (a) => (budgetExhausted(a.budgetUsage, { turns: a.turns, toolCalls: a.toolUses }, a.input.budget) ? 'budget_exhausted' : undefined),
];

/** A model call the budget could not pay for (the activity refused before asking the model). */
function isBudgetRefusal(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === BUDGET_EXHAUSTED_FAILURE;
}

function withCut(cut: ForkAgent['cut']): { window?: NonNullable<ForkAgent['cut']> } {
  return cut ? { window: cut } : {};
}

/**
 * One model call; `undefined` when the budget (the agent's or its tree's) cannot pay for it.
 * The context is managed first (a forkflow compaction when the request would pass its
 * threshold); a request refused as too long is answered by a compaction and made once more.
 */
async function modelStep(agent: ForkAgent): Promise<ModelCallResult | undefined> {
  const turn = agent.turns + 1;
  await manageContext(agent, turn);
  agent.doing(`model turn ${turn}`);
  publishProgress(agent);
  // In a tree that lends budget shares, a share that looks short of this call is topped up first
  // (a refusal of the estimate is not final: the call's exact need is asked for again).
  if (agent.shares) {
    await topUpShare(agent, remainingTokens(agent.budgetUsage, agent.input.budget));
    agent.doing(`model turn ${turn}`);
  }
  let input: ModelCallInput;
  let startedAt: number;
  let result: ModelCallResult;
  // `again`: the call is made once more after a compaction (a share's ask does not count).
  for (let again = false; ; ) {
    // Where this turn began (after any compaction): a fork from the end of the previous turn starts from here (turnPoint query).
    agent.turnIndex.called(turn, { count: agent.messageCount, digest: agent.digest, usage: agent.usage, toolUses: agent.toolUses, ...withCut(agent.cut) });
    input = modelCallInput(agent, turn, { compactAbove: !again });
    startedAt = workflowNow();
    try {
      // One fairness key per tree: on a server with fairness on, a tree of 200 agents shares
      // the model queue with a tree of 2 instead of queueing it behind its backlog.
      // A provider with fallbacks: an unavailable one moves the call down its chain (failover.ts).
      // In a tree that lends budget shares the call charges the share this agent holds (tree-shares.ts).
      const proxy = input.delivery === 'batch' ? batchModel : model;
      ({ result, input } = await spending(
        agent,
        input,
        () => callWithFailover(agent, turn, input, (sent, summary) => proxy.callModel.executeWithOptions({ summary, priority: { fairnessKey: agent.rootAgentId }, ...modelQueueOf(agent.input) }, [sent])),
        (out) => ({ ...(out.input.provider ? { provider: out.input.provider } : {}), model: out.result.model, usage: out.result.usage, kind: 'turn', turn }),
      ));
      break;
    } catch (err) {
      if (isBudgetRefusal(err)) {
        agent.doing(undefined);
        return undefined;
      }
      // Its share cannot pay for the call: ask the root for more (it answers when budget comes back), then call again.
      const short = shareShortOf(err);
      if (short) {
        const refused = await askShare(agent, short.need, short.want);
        agent.doing(refused === undefined ? `model turn ${turn}` : undefined);
        if (refused !== undefined) return undefined;
        continue;
      }
      const refusal = contextRefusal(err);
      if (!refusal || again || !(await compactAfterRefusal(agent, turn, { reason: refusal, err }))) throw err;
      agent.doing(`model turn ${turn}`);
      again = true;
    }
  }
  const at = agent.messageCount;
  agent.tally.recordModelCall(result.usage, result.message);
  countOnProvider(agent, input, result.usage);
  agent.warmth.called(input, startedAt, result);
  agent.cache.check({ agentId: agent.agentId, forkLabel: agent.input.forkLabel }, agent.setup, turn, result, startedAt);
  contextAfterCall(agent, turn, at, input.messageCount, result);
  agent.append(result.message);
  for (const use of toolUsesOf(result.message)) agent.live.toolUse(turn, use);
  agent.live.turnEnd(turn, result.stopReason, result.usage, textOf(result.message));
  agent.doing(undefined);
  return result;
}

/** Tool results to stream subscribers (previews: the transcript has them whole). */
function publishToolResults(agent: ForkAgent, uses: ToolUseBlock[], results: ToolResultBlock[]): void {
  const names = new Map(uses.map((u) => [u.id, u.name]));
  for (const r of results) {
    const text = typeof r.content === 'string' ? r.content : (r.content ?? []).map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
    agent.live.toolResult(agent.turns, { toolUseId: r.tool_use_id, name: names.get(r.tool_use_id), isError: r.is_error === true, text });
  }
}

/** The turn boundary: tool results first, then queued messages, then the reminder. */
export function boundaryBlocks(agent: ForkAgent, results: ContentBlock[]): ContentBlock[] {
  return [...results, ...agent.drainInbox(), ...agent.reminderBlocks()];
}

/**
 * Waits for a report (or a message) from background sub-agents. A long wait may outgrow the
 * run's history (a tree's root records its tree's reservations and charges meanwhile): then
 * the run continues as new and the next one goes on waiting (continuation.ts).
 */
async function waitForChildren(agent: ForkAgent): Promise<void> {
  // Background shell tasks are waited for like sub-agents (their notifications are news too).
  const news = () => agent.inbox.length > 0 || (agent.runningChildren.length === 0 && agent.shells.running.length === 0);
  const shells = agent.shells.running.length;
  agent.doing(`waiting for ${agent.runningChildren.length} sub-agent(s)${shells > 0 ? ` and ${shells} background task(s)` : ''}`);
  publishProgress(agent);
  await whileWaiting(agent, () => condition(() => news() || wantsToContinueWhileWaiting(agent)));
  if (!news()) {
    await continueWhileWaiting(agent);
    await whileWaiting(agent, () => condition(news));
  }
  agent.doing(undefined);
}

/**
 * Records where an interruption stopped the turn: the tool results it has (every tool_use keeps
 * one) and a note saying so, in one user turn. A message that came with it (or was queued) is
 * delivered with them and the agent goes on; otherwise it waits for the next one.
 */
function interruptedTurn(agent: ForkAgent, results: ToolResultBlock[]): TurnOutcome {
  const stopped = agent.turnControl.take()!;
  agent.doing(undefined);
  // Stream subscribers drop the deltas of a reply that will never be recorded.
  if (stopped.during === 'model call') agent.live.turnEnd(stopped.turn, 'interrupted', ZERO_USAGE);
  const note = { type: 'text' as const, text: interruptionNote(stopped.by, stopped.during, stopped.reason) };
  const goOn = agent.inbox.length > 0;
  agent.append({ role: 'user', content: goOn ? boundaryBlocks(agent, [...results, note]) : [...results, note] });
  publishProgress(agent);
  return goOn ? { kind: 'run_again' } : { kind: 'interrupted' };
}

export async function runTurn(agent: ForkAgent): Promise<TurnOutcome> {
  // A run that continued as new while waiting for its children goes on waiting (no model call: its final reply is on record).
  if (!agent.takeResumedWait()) {
    for (const condition of stopConditions) {
      const reason = condition(agent);
      if (reason) return { kind: 'stop', reason };
    }
    // The model call and the tool round each run in a scope an interruption cancels (turn-control.ts).
    const control = agent.turnControl;
    const step = await control.run('model call', agent.turns + 1, () => modelStep(agent));
    if (!step.done) {
      await settleCommands(agent);
      return interruptedTurn(agent, []);
    }
    const reply = step.value;
    if (!reply) return { kind: 'stop', reason: 'budget_exhausted' };
    const uses = toolUsesOf(reply.message);
    if (uses.length > 0) {
      const round = await control.run('tool calls', agent.turns, () => runToolRound(agent, uses, agent.messageCount - 1));
      const stoppedBy = control.interruption?.by ?? 'operator';
      const results = round.done ? round.value : uses.map((u) => errorResult(u.id, interruptedCallText(stoppedBy, true)));
      publishToolResults(agent, uses, results);
      // Commands typed meanwhile run before the inbox is delivered (typed-commands.ts; none: nothing is awaited).
      await settleCommands(agent);
      if (control.interruption) return interruptedTurn(agent, results);
      agent.append({ role: 'user', content: boundaryBlocks(agent, results) });
      publishProgress(agent);
      return { kind: 'run_again' };
    }
    // A reply that was complete before an interruption could stop it ends its turn as usual.
    control.take();
  }
  // Background sub-agents still at work: their reports are what this agent waits for.
  if (agent.inbox.length === 0 && (agent.runningChildren.length > 0 || agent.shells.running.length > 0)) await waitForChildren(agent);
  await settleCommands(agent);
  if (agent.inbox.length > 0) {
    agent.append({ role: 'user', content: boundaryBlocks(agent, []) });
    return { kind: 'run_again' };
  }
  return { kind: 'final' };
}

/**
 * Hands queued messages to a fork that finished its answer and was woken: they become the
 * next user turn, so the next request ends with them (never with the fork's own reply,
 * which the API would read as a prefill to continue).
 */
export function deliverWakingMessages(agent: ForkAgent): void {
  if (agent.inbox.length > 0) agent.append({ role: 'user', content: boundaryBlocks(agent, []) });
}

/** Runs turns until the model finishes or a stop condition fires. */
export async function runTurns(agent: ForkAgent): Promise<StopReason> {
  for (;;) {
    if (shouldContinueAsNew(agent)) await continueAsNewNow(agent);
    const outcome = await runTurn(agent);
    if (outcome.kind === 'final') return 'end_turn';
    if (outcome.kind === 'stop') return outcome.reason;
    if (outcome.kind === 'interrupted') return 'interrupted';
  }
}
