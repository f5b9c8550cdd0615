/**
 * Time travel, the part workflows, activities and clients share: naming a point of an agent's
 * past ("the end of turn k"), the fork-input fields that record where a fork came from, and
 * finding the run of a continue-as-new chain that can answer for a turn.
 *
 * A turn's point is where the agent's own request of the next turn began: the point of turn k
 * is the conversation its model call of turn k + 1 covered (so a fork from it sends those bytes
 * first, and reads the provider's cache that request wrote). The latest turn has no next call
 * yet: its point is the conversation as it stands, which may end with a reply whose `tool_use`
 * blocks are not answered yet (kept unchanged, answered by the fork's placeholders: the seed's
 * cache-key rule). Turn 0 is the agent's opening, before its first call.
 *
 * Each run answers for its own turns (the `turnPoint` query, src/workflows/conversation-queries.ts)
 * and names the run before it for earlier ones; `resolveTurnPoint` walks a chain back to the run
 * that holds the turn, reading only each run's first event on the way.
 */
import { z } from 'zod';
import type { Usage } from '../messages-api/anthropic';
import type { PrefixRef, RequestHashes, RunRef } from './prefix';
import { schemaOnce } from '../base/schema-once';

/** Where a fork came from: the agent, the run that held the point, and the turn (lineage). */
export const forkOriginSchema = schemaOnce('prefix/time-travel#forkOriginSchema', () => z.strictObject({
  agentId: z.string().min(1).max(200),
  runId: z.string().min(1).max(200),
  turn: z.number().int().min(0),
}));
export type ForkOrigin = z.infer<typeof forkOriginSchema>;

/** A point of an agent's past named by id and turn (the workflow resolves it: for SDKs without forkflow's client). */
export const forkPointSchema = schemaOnce('prefix/time-travel#forkPointSchema', () => z.strictObject({
  agentId: z.string().min(1).max(200).describe('The agent whose past the fork starts from.'),
  turn: z.number().int().min(0).max(1_000_000).optional().describe("The turn whose end the fork starts from (0: the agent's opening); absent: the conversation as it stands."),
  runId: z.string().min(1).max(200).optional().describe('Look only at the chain up to this run of the agent (default: its latest run).'),
}));
export type ForkPoint = z.infer<typeof forkPointSchema>;

/** How a retried agent had ended. */
export const RETRYABLE_ENDS = ['failed', 'killed', 'timeout', 'budget_exhausted', 'max_turns', 'terminated'] as const;
export type RetryableEnd = (typeof RETRYABLE_ENDS)[number];

/** Set on the run that retries an agent from a turn (`retry`): where it went on from, and after what. */
export const retryMarkSchema = schemaOnce('prefix/time-travel#retryMarkSchema', () => z.strictObject({
  fromTurn: z.number().int().min(0),
  /** The run in which the agent had ended. */
  previousRunId: z.string().min(1).max(200),
  previous: z.enum(RETRYABLE_ENDS),
}));
export type RetryMark = z.infer<typeof retryMarkSchema>;

/** What a counterfactual fork may change, each breaking the prompt cache by design. */
export const COUNTERFACTUAL_PARTS = ['system', 'tools', 'model', 'thinking'] as const;
export type CounterfactualPart = (typeof COUNTERFACTUAL_PARTS)[number];

/** The parts whose hashes differ between the parent's request and the fork's. */
export function changedParts(parent: Omit<RequestHashes, 'prefix'>, fork: Omit<RequestHashes, 'prefix'>): CounterfactualPart[] {
  return COUNTERFACTUAL_PARTS.filter((p) => parent[p] !== fork[p]);
}

/** What a run records of each model call it made, by turn (src/workflows/fork/turn-index.ts). */
export interface TurnCall {
  /** The call covered messages [0, count) of the conversation… */
  count: number;
  /** …whose chained digest is this. */
  digest: string;
  /** The agent's usage and tool calls before the call (all runs). */
  usage: Usage;
  toolUses: number;
  /** Where that request began and what it cleared, when the agent's context was managed (src/shared/context/): a fork from the point sends the same cut. */
  window?: PrefixRef['window'];
}

export const turnPointArgsSchema = schemaOnce('prefix/time-travel#turnPointArgsSchema', () => z.strictObject({ turn: z.number().int().min(0).optional() }).optional());
export type TurnPointArgs = { turn?: number };

/** A resolved point: a reference forks start from, and what the agent had spent up to it. */
export interface TurnPoint {
  agentId: string;
  /** The run that holds the point (`ref.run.runId`). */
  runId: string;
  turn: number;
  ref: PrefixRef;
  usage: Usage;
  toolUses: number;
}

/** The `turnPoint` query's answer: the point, the run to ask instead, or why there is none. */
export type TurnPointAnswer =
  | { kind: 'point'; point: TurnPoint }
  | { kind: 'earlier'; run: RunRef; turn: number }
  | { kind: 'past_end'; turns: number }
  | { kind: 'invalid'; reason: string };

/** A point from which an agent can go on by itself: its next model call's conversation (ends with a user turn). */
export function resumable(ref: Pick<PrefixRef, 'lastRole'>): boolean {
  return ref.lastRole === 'user';
}

/** Usage `b - a`, field by field (never negative: `a` is the earlier total). */
export function usageSince(total: Usage, before: Usage): Usage {
  const minus = (x: number, y: number) => Math.max(0, x - y);
  const hour = minus(total.cacheCreation1hInputTokens ?? 0, before.cacheCreation1hInputTokens ?? 0);
  return {
    inputTokens: minus(total.inputTokens, before.inputTokens),
    outputTokens: minus(total.outputTokens, before.outputTokens),
    cacheReadInputTokens: minus(total.cacheReadInputTokens, before.cacheReadInputTokens),
    cacheCreationInputTokens: minus(total.cacheCreationInputTokens, before.cacheCreationInputTokens),
    ...(hour > 0 ? { cacheCreation1hInputTokens: hour } : {}),
  };
}

export type ForkPointProblem = 'bad_turn' | 'unknown_agent' | 'not_an_agent' | 'foreign_run' | 'past_end' | 'unreadable' | 'not_resumable';

/** A point that cannot be had, with a reason a person can act on. */
export class ForkPointError extends Error {
  override readonly name = 'ForkPointError';
  constructor(
    readonly problem: ForkPointProblem,
    message: string,
  ) {
    super(message);
  }
}

/** True for a {@link ForkPointError}, also across bundles. */
export function isForkPointError(err: unknown): err is ForkPointError {
  return err instanceof Error && err.name === 'ForkPointError' && typeof (err as { problem?: unknown }).problem === 'string';
}

/** A closed run's end as its result records it (no replay). */
export interface RunEnd {
  turns: number;
  ref: PrefixRef;
  usage: Usage;
  toolUses: number;
}

/** The reads `resolveTurnPoint` needs (a client's, or an activity's). */
export interface PointReader {
  /** The run (the latest when `runId` is absent): undefined when there is no such run of that workflow. */
  describe(workflowId: string, runId?: string): Promise<{ runId: string; workflowType: string; running: boolean } | undefined>;
  /** A run's start input (the first event of its history). */
  startInput(run: RunRef): Promise<unknown>;
  /** The `turnPoint` query on a run. */
  ask(run: RunRef, turn: number | undefined): Promise<TurnPointAnswer>;
  /** A closed run's end from its result, when it has one. */
  ended(run: RunRef): Promise<RunEnd | undefined>;
}

/** The parts of a run's start input the walk reads: the turns before it, and the run before it. */
function chainLink(input: unknown): { turnsBefore: number; previous?: RunRef } {
  const c = (input as { continuation?: { state?: { turns?: unknown }; ref?: { run?: RunRef } } } | undefined)?.continuation;
  const turns = c?.state?.turns;
  return { turnsBefore: typeof turns === 'number' && turns >= 0 ? turns : 0, ...(c?.ref?.run ? { previous: c.ref.run } : {}) };
}

/**
 * The point of `turn` (absent: the conversation as it stands) of an agent, from whichever run of
 * its chain holds it: the latest run with no more turns before it than `turn`. Each run on the
 * way back costs its first event only; the run that answers costs a query, which a closed run
 * answers by replay (a closed run's end, and a turn past it, come from its result instead).
 *
 * @throws ForkPointError for a negative or fractional turn, an unknown agent, a workflow that is
 * not an agent, a run of another workflow, a turn past the end.
 */
export async function resolveTurnPoint(reader: PointReader, agentId: string, opts: { turn?: number; runId?: string; forkWorkflowType: string }): Promise<TurnPoint> {
  const { turn } = opts;
  if (turn !== undefined && !(Number.isInteger(turn) && turn >= 0)) throw new ForkPointError('bad_turn', `A turn is an integer ≥ 0 (0 is the agent's opening), got ${turn}.`);
  const found = await reader.describe(agentId, opts.runId);
  if (!found) {
    if (opts.runId && (await reader.describe(agentId))) throw new ForkPointError('foreign_run', `Run ${opts.runId} is not a run of agent ${agentId}.`);
    throw new ForkPointError('unknown_agent', `No agent ${agentId} (check the id with \`forkflow list\`).`);
  }
  if (found.workflowType !== opts.forkWorkflowType) throw new ForkPointError('not_an_agent', `${agentId} is a ${found.workflowType}, not an agent: only agents have turns to fork from.`);
  let run: RunRef = { workflowId: agentId, runId: found.runId };
  let closed = !found.running;
  const seen = new Set<string>();
  while (!seen.has(run.runId)) {
    seen.add(run.runId);
    // The conversation as it stands is the latest run's: no need to read where the run began.
    const link = turn === undefined ? { turnsBefore: 0 } : chainLink(await reader.startInput(run));
    if (turn !== undefined && turn < link.turnsBefore) {
      if (!link.previous || link.previous.workflowId !== agentId) throw new ForkPointError('unreadable', `Turn ${turn} of ${agentId} lies before run ${run.runId}, which names no earlier run of the agent.`);
      run = link.previous;
      closed = true;
      continue;
    }
    if (closed) {
      const end = await reader.ended(run);
      if (end && (turn === undefined || turn === end.turns)) return { agentId, runId: run.runId, turn: end.turns, ref: end.ref, usage: end.usage, toolUses: end.toolUses };
      if (end && turn !== undefined && turn > end.turns) throw pastEnd(agentId, turn, end.turns);
    }
    const answer = await reader.ask(run, turn);
    if (answer.kind === 'point') return answer.point;
    if (answer.kind === 'past_end') throw pastEnd(agentId, turn ?? 0, answer.turns);
    if (answer.kind === 'invalid') throw new ForkPointError('bad_turn', answer.reason);
    run = answer.run;
    closed = true;
  }
  throw new ForkPointError('unreadable', `The runs of ${agentId} name each other in a loop at ${run.runId}.`);
}

function pastEnd(agentId: string, turn: number, turns: number): ForkPointError {
  return new ForkPointError('past_end', `Agent ${agentId} has taken ${turns} turn${turns === 1 ? '' : 's'}: turn ${turn} is past its end (fork from turns 0–${turns}).`);
}
