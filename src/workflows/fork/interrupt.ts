/**
 * Interrupt is not kill: the `interrupt` update (and its `interruptTurn` signal twin) stop the
 * agent's turn in flight, and the `backgroundChild` update stops a tool call waiting for a sync
 * sub-agent. Both are validated with zod and refused when there is nothing to act on, so a bad
 * or late request changes nothing and never fails a workflow task. The turn loop records what
 * an interruption left behind (turn-loop.ts); tool calls it stopped are answered here.
 */
import { condition, getExternalWorkflowHandle, isCancellation, setHandler } from '@temporalio/workflow';
import type { SendMessageInterruptingInput } from '../../shared/tree/agent-tools';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages-api/anthropic';
import { FAILURE, failure, invalid } from '../../shared/wire/failures';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import {
  backgroundChildArgsSchema,
  backgroundChildUpdate,
  interruptArgsSchema,
  interruptedCallText,
  interruptSignal,
  interruptUpdate,
  type BackgroundChildArgs,
  type InterruptAnswer,
  type InterruptArgs,
} from '../../shared/tree/interrupt';
import type { ChildRecord } from '../../shared/tree/tree-input';
import type { ForkAgent } from './agent';
import { errorResult, jsonResult } from './tool-results';
import { publishProgress } from './visibility';

const OPERATOR = 'operator';

/** Why nothing can be interrupted now, or undefined. */
function interruptRefusal(agent: ForkAgent): string | undefined {
  if (agent.turnControl.interruptible) return undefined;
  if (agent.turnControl.interruption) return `Agent ${agent.agentId} is already being interrupted.`;
  return `Agent ${agent.agentId} has no model or tool call in flight (it is ${agent.state}${agent.activity ? `: ${agent.activity}` : ''}): nothing to interrupt. Send it a message instead.`;
}

/** Stops the turn in flight; a message comes with priority `now`, so the agent goes on with it. */
function interrupt(agent: ForkAgent, args: InterruptArgs): InterruptAnswer & { seq: number } {
  const by = args.by ?? OPERATOR;
  if (args.message) agent.enqueueMessage({ message: args.message, from: by, summary: args.summary ?? 'interrupting message', priority: 'now' });
  const stopped = agent.turnControl.interrupt(by, args.reason);
  publishProgress(agent);
  return { agentId: agent.agentId, turn: stopped.turn, during: stopped.during, continues: args.message !== undefined, seq: stopped.seq };
}

/**
 * An interrupting message that found no turn to stop: queued first in line (priority `now`).
 * A sender (a parent's SendMessage with `interrupt`) cannot see whether its receiver's turn
 * just ended, so the message is queued rather than refused: it is not lost, and nothing is stopped.
 */
function lateMessage(agent: ForkAgent, args: InterruptArgs): void {
  agent.enqueueMessage({ message: args.message!, from: args.by ?? OPERATOR, summary: args.summary ?? 'interrupting message', priority: 'now' });
  publishProgress(agent);
}

/** The longest `by` an interrupt carries (its schema's bound). */
const BY_MAX = 200;
/** The longest interrupting message (the interrupt's and a queued message's bound). */
const MESSAGE_MAX = 200_000;

/** The running sub-agent of this agent an interrupting SendMessage reaches, or why it reaches none. */
function interruptTarget(agent: ForkAgent, input: SendMessageInterruptingInput): ChildRecord | string {
  if (typeof input.message !== 'string') return 'An interrupting message is text: send a structured message without interrupt.';
  if (input.message.length > MESSAGE_MAX) return `An interrupting message is at most ${MESSAGE_MAX} characters.`;
  const child = agent.children.find(input.to);
  if (!child) return `interrupt reaches only a sub-agent of yours, and "${input.to}" is not one: send the message without interrupt (it arrives at that agent's next turn boundary).`;
  if (child.state !== 'running') return `${child.agentId} has finished (${child.state}): there is no turn to interrupt. Send the message without interrupt to resume it.`;
  return child;
}

/**
 * SendMessage with `interrupt` (a tree with spawn controls): the caller stops its own running
 * sub-agent's turn and has it act on the message at once, by the `interruptTurn` signal, which
 * takes the message and the interruption together (so the message cannot start a turn the
 * interruption then stops). Between turns, the child queues the message first in line.
 */
export async function interruptingSend(agent: ForkAgent, use: ToolUseBlock, input: SendMessageInterruptingInput): Promise<ToolResultBlock> {
  const target = interruptTarget(agent, input);
  if (typeof target === 'string') return errorResult(use.id, target);
  const args: InterruptArgs = { by: agent.agentId.slice(0, BY_MAX), message: input.message as string, ...(input.summary ? { summary: input.summary } : {}) };
  try {
    await getExternalWorkflowHandle(target.agentId).signal(interruptSignal, args);
  } catch (err) {
    if (isCancellation(err)) throw err;
    return errorResult(use.id, `${target.agentId} could not be reached (it may have just ended): its report will say how it ended.`);
  }
  return jsonResult(use.id, {
    status: 'interrupting',
    agentId: target.agentId,
    note: 'Its turn in flight, if any, stops now and it goes on with your message at once; between turns it reads it first. Its own background sub-agents keep running.',
  });
}

/** The sync sub-agent a tool call of this agent waits for, or why it cannot be moved. */
function waitedChild(agent: ForkAgent, args: BackgroundChildArgs): ChildRecord | string {
  const record = agent.children.find(args.child);
  if (!record) return `Agent ${agent.agentId} has no sub-agent "${args.child}".`;
  if (record.state !== 'running') return `Sub-agent ${record.agentId} is ${record.state}: only a running one can move to the background.`;
  if (record.mode !== 'sync') return `Sub-agent ${record.agentId} already runs in the background (${record.mode}).`;
  if (!agent.turnControl.isWaitingFor(record.agentId)) return `No tool call of ${agent.agentId} is waiting for ${record.agentId} now.`;
  if (agent.turnControl.backgroundRequestedBy(record.agentId)) return `Sub-agent ${record.agentId} is already moving to the background.`;
  return record;
}

export function registerInterruptHandlers(agent: ForkAgent): void {
  setHandler(
    interruptUpdate,
    async (raw: InterruptArgs) => {
      // The validator ran in this activation: the turn is still in flight.
      const why = interruptRefusal(agent);
      if (why) throw failure(FAILURE.nothingToInterrupt, why);
      const { seq, ...answer } = interrupt(agent, interruptArgsSchema.parse(raw));
      // Answers once the turn has stopped (its scope ended), which also fixes the order of the
      // update's completion after the commands the interruption issued, on every replay.
      await condition(() => agent.turnControl.settled(seq));
      return answer;
    },
    {
      validator: (raw: unknown) => {
        const parsed = interruptArgsSchema.safeParse(raw);
        if (!parsed.success) throw invalid(FAILURE.invalidInterrupt, 'Invalid interrupt', describeIssues(parsed.error));
        const why = interruptRefusal(agent);
        if (why) throw failure(FAILURE.nothingToInterrupt, why);
      },
    },
  );
  setHandler(interruptSignal, (raw: unknown) => {
    const parsed = interruptArgsSchema.safeParse(raw);
    if (!parsed.success) return agent.rejectSignal('interruptTurn', describeIssues(parsed.error));
    const why = interruptRefusal(agent);
    if (why && parsed.data.message) return lateMessage(agent, parsed.data);
    if (why) return agent.rejectSignal('interruptTurn', [why]);
    interrupt(agent, parsed.data);
  });
  setHandler(
    backgroundChildUpdate,
    async (raw: BackgroundChildArgs) => {
      const args = backgroundChildArgsSchema.parse(raw);
      const record = waitedChild(agent, args);
      if (typeof record === 'string') throw failure(FAILURE.nothingToInterrupt, record);
      agent.turnControl.requestBackground(record.agentId, args.by ?? OPERATOR);
      // Answers once the tool call stopped waiting (moved, or the sub-agent ended first).
      await condition(() => !agent.turnControl.isWaitingFor(record.agentId));
      return { agentId: record.agentId, parentId: agent.agentId, moved: record.mode === 'background' };
    },
    {
      validator: (raw: unknown) => {
        const parsed = backgroundChildArgsSchema.safeParse(raw);
        if (!parsed.success) throw invalid(FAILURE.invalidInterrupt, 'Invalid backgroundChild request', describeIssues(parsed.error));
        const record = waitedChild(agent, parsed.data);
        if (typeof record === 'string') throw failure(FAILURE.nothingToInterrupt, record);
      },
    },
  );
}

/**
 * Runs one tool call of a round, unless the turn was interrupted: a call not begun is not run,
 * a call the interruption stopped is answered as interrupted (the tool_use keeps its result).
 */
export async function guardCall(agent: ForkAgent, use: ToolUseBlock, run: () => Promise<ToolResultBlock>): Promise<ToolResultBlock> {
  const before = agent.turnControl.interruption;
  if (before) return errorResult(use.id, interruptedCallText(before.by, false));
  try {
    return await run();
  } catch (err) {
    const by = agent.turnControl.stoppedBy(err) ? agent.turnControl.interrupter() : undefined;
    if (by) return errorResult(use.id, interruptedCallText(by, true));
    throw err;
  }
}
