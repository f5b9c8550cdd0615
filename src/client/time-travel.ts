/**
 * Forks from a point of an agent's past, on the client: the point is resolved before anything
 * starts (a bad one is a clear error and starts nothing), and becomes the fork's reference and
 * origin. The rules of points are in src/shared/time-travel.ts.
 */
import type { Client } from '@temporalio/client';
import { startInputOf } from '../payloads/stored';
import { WORKFLOW_TYPES } from '../shared/constants';
import type { PrefixRef } from '../shared/prefix';
import { isForkPointError, resolveTurnPoint, type ForkOrigin, type TurnPoint } from '../shared/time-travel';
import { temporalPointReader } from '../shared/time-travel-reader';
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
