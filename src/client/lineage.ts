/**
 * Lineage on the client: where an agent came from (followed back through its parents to the
 * original) and which forks were started from points of it, read from search attributes
 * (ForkParentId, ForkParentRun, ForkParentTurn): no query, so a closed agent is never replayed
 * for it.
 */
import type { Client } from '@temporalio/client';
import type { TypedSearchAttributes } from '@temporalio/common';
import { WorkflowNotFoundError } from '@temporalio/common';
import { WORKFLOW_TYPES } from '../shared/wire/constants';
import type { ForkInput } from '../shared/wire/fork-input';
import { SA } from '../shared/wire/search-attributes';
import { AgentNotFoundError } from './errors';
import { visibilityLiteral } from './tree';

/** The search attributes a fork's start sets for where it came from. */
export function lineageAttributes(v: Pick<ForkInput, 'parentAgentId' | 'origin'>) {
  const parentId = v.parentAgentId ?? v.origin?.agentId;
  return [
    ...(parentId ? [{ key: SA.parentId, value: parentId }] : []),
    ...(v.origin ? [{ key: SA.parentRun, value: v.origin.runId }, { key: SA.parentTurn, value: v.origin.turn }] : []),
  ];
}

/** The search attributes a fork starts with: who it is, its tree, label and source, running, and its lineage. */
export function startAttributes(agentId: string, v: Pick<ForkInput, 'rootAgentId' | 'forkLabel' | 'querySource' | 'parentAgentId' | 'origin'>) {
  return [
    { key: SA.agentId, value: agentId },
    { key: SA.rootId, value: v.rootAgentId ?? agentId },
    { key: SA.label, value: v.forkLabel },
    { key: SA.querySource, value: v.querySource },
    { key: SA.state, value: 'running' },
    ...lineageAttributes(v),
  ];
}

/** One agent on the way back: what it is, and where it came from (`parentTurn`: forked from that turn of its parent). */
export interface LineageStep {
  agentId: string;
  label?: string;
  state?: string;
  parentId?: string;
  /** Set for a fork from a point: the run of the parent that held it, and the turn. */
  parentRun?: string;
  parentTurn?: number;
}

function stepOf(agentId: string, sa: TypedSearchAttributes): LineageStep {
  const parentId = sa.get(SA.parentId);
  const parentRun = sa.get(SA.parentRun);
  const parentTurn = sa.get(SA.parentTurn);
  const label = sa.get(SA.label);
  const state = sa.get(SA.state);
  return { agentId, ...(label ? { label } : {}), ...(state ? { state } : {}), ...(parentId ? { parentId } : {}), ...(parentRun ? { parentRun } : {}), ...(parentTurn !== undefined ? { parentTurn } : {}) };
}

/** Lineage steps are bounded: parents form no cycle in practice, but ids are not ours to trust. */
const MAX_STEPS = 100;

/** The agent, then each agent it came from, up to the original (one describe each). */
export async function lineageOf(client: Client, agentId: string): Promise<LineageStep[]> {
  const steps: LineageStep[] = [];
  const seen = new Set<string>();
  let id: string | undefined = agentId;
  while (id && !seen.has(id) && steps.length < MAX_STEPS) {
    seen.add(id);
    let sa: TypedSearchAttributes;
    try {
      sa = (await client.workflow.getHandle(id).describe()).typedSearchAttributes;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // The agent asked about is unknown; an ancestor past retention ends the walk.
      if (steps.length === 0) throw new AgentNotFoundError(agentId);
      steps.push({ agentId: id, state: 'unknown (past retention?)' });
      break;
    }
    const step = stepOf(id, sa);
    steps.push(step);
    id = step.parentId;
  }
  return steps;
}

/** A fork from a point of an agent (of `parentId`, from its turn `parentTurn`), `depth` levels below the agent asked about. */
export interface ForkByPoint extends LineageStep {
  parentId: string;
  parentTurn: number;
  depth: number;
  turns?: number;
  startTime: string;
}

/**
 * Forks started from points of `agentIds`, and forks of those (breadth first, `depth` levels,
 * default 5), ordered by parent, then turn, then start. Visibility is eventually consistent:
 * a fork started a moment ago may be missing.
 */
export async function forksByPoint(client: Client, agentIds: string | string[], opts: { depth?: number } = {}): Promise<ForkByPoint[]> {
  const out: ForkByPoint[] = [];
  let level = typeof agentIds === 'string' ? [agentIds] : [...new Set(agentIds)];
  const seen = new Set(level);
  for (let depth = 1; depth <= (opts.depth ?? 5) && level.length > 0; depth++) {
    const query = `WorkflowType = '${WORKFLOW_TYPES.fork}' AND ForkParentTurn >= 0 AND ForkParentId IN (${level.map(visibilityLiteral).join(', ')})`;
    const found: ForkByPoint[] = [];
    for await (const info of client.workflow.list({ query })) {
      const step = stepOf(info.workflowId, info.typedSearchAttributes);
      if (seen.has(step.agentId) || step.parentId === undefined || step.parentTurn === undefined) continue;
      seen.add(step.agentId);
      const turns = info.typedSearchAttributes.get(SA.turns);
      found.push({ ...step, parentId: step.parentId, parentTurn: step.parentTurn, depth, ...(turns !== undefined ? { turns } : {}), startTime: info.startTime.toISOString() });
    }
    found.sort((a, b) => a.parentId.localeCompare(b.parentId) || a.parentTurn - b.parentTurn || a.startTime.localeCompare(b.startTime));
    out.push(...found);
    level = found.map((f) => f.agentId);
  }
  return out;
}
