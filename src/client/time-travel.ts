/**
 * Forks from a point of an agent's past, on the client: the point is resolved before anything
 * starts (a bad one is a clear error and starts nothing), and becomes the fork's reference and
 * origin. The rules of points are in src/shared/prefix/time-travel.ts.
 */
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { startInputOf } from '../payloads/stored';
import { EFFORT_LEVELS, type EffortLevel } from '../shared/agents/agents';
import { WORKFLOW_TYPES } from '../shared/wire/constants';
import type { PrefixRef } from '../shared/prefix/prefix';
import { isForkPointError, resolveTurnPoint, type ForkOrigin, type TurnPoint } from '../shared/prefix/time-travel';
import { temporalPointReader } from '../shared/prefix/time-travel-reader';
import { AgentNotFoundError, InvalidForkPointError } from './errors';

export interface PointOptions {
  /**
   * Fork from the end of this turn: the conversation as it stood when turn `atTurn` ended (0:
   * the agent's opening), byte for byte what the agent sent at the next turn. Absent: the
   * conversation as it stands now.
   */
  atTurn?: number;
  /** Look only at the agent's runs up to this one (default: its latest run). */
  runId?: string;
}

/** The point of an agent's past a fork would start from. */
export async function turnPointOf(client: Client, agentId: string, opts: PointOptions = {}): Promise<TurnPoint> {
  const reader = temporalPointReader(client, (run) => startInputOf(client, run));
  try {
    return await resolveTurnPoint(reader, agentId, { ...(opts.atTurn !== undefined ? { turn: opts.atTurn } : {}), ...(opts.runId ? { runId: opts.runId } : {}), forkWorkflowType: WORKFLOW_TYPES.fork });
  } catch (err) {
    if (!isForkPointError(err)) throw err;
    if (err.problem === 'unknown_agent') throw new AgentNotFoundError(agentId);
    throw new InvalidForkPointError(err.problem, err.message);
  }
}

/** What a fork's input says of where it starts: the reference, and its origin (lineage). */
export function startFrom(point: TurnPoint): { parentRef: PrefixRef; origin: ForkOrigin } {
  return { parentRef: point.ref, origin: { agentId: point.agentId, runId: point.runId, turn: point.turn } };
}

/** The part of an agent's start input a fork from its past runs as, unless the fork says otherwise. */
const runsAsSchema = z.object({ effort: z.enum(EFFORT_LEVELS).optional() });

/**
 * How the agent of a point ran that its prefix does not carry: its effort (`output_config.effort`
 * is part of each request, not of the prompt). A fork from the point runs as the agent did, as an
 * in-tree fork runs as its caller, so a replay's requests are the agent's own, byte for byte,
 * unless it sets its own effort or names a model (another model may not take the same levels):
 * {@link inheritedBy}. Read from the first event of the point's run (one short read).
 */
export async function runsAs(client: Client, point: Pick<TurnPoint, 'agentId' | 'runId'>): Promise<{ effort?: EffortLevel }> {
  const parsed = runsAsSchema.safeParse(await startInputOf(client, { workflowId: point.agentId, runId: point.runId }, WORKFLOW_TYPES.fork));
  return parsed.success && parsed.data.effort ? { effort: parsed.data.effort } : {};
}

/** What a fork with these params takes of `runsAs`: nothing when it sets its own effort or names a model. */
export function inheritedBy(params: { effort?: unknown; model?: unknown }, ran: { effort?: EffortLevel }): { effort?: EffortLevel } {
  return params.effort !== undefined || params.model !== undefined ? {} : ran;
}
