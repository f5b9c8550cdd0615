/**
 * How the graph labels an edge (src/client/graph.ts startEdgeOf): from the start's query
 * source, the team the root's ledger records, the task queues of child and parent, and the
 * turn of a fork from a point. One rule each, so the page never guesses.
 */
import { startEdgeOf } from '../../../src/client/graph';

const ROOT = 'lead';
const home = { taskQueue: 'forkflow' };
const row = (agentId: string, querySource: string, more: { parentTurn?: number; taskQueue?: string; parentId?: string } = {}) => ({ agentId, querySource, parentId: ROOT, taskQueue: 'forkflow', ...more });

test('fork, named, general-purpose, teammate, from a past turn, and the root', () => {
  expect(startEdgeOf(row('lead.fork-1', 'agent:builtin:fork'), home, undefined, ROOT)).toEqual({ kind: 'fork', label: 'fork' });
  expect(startEdgeOf(row('lead.reviewer-2', 'agent:custom:reviewer'), home, undefined, ROOT)).toEqual({ kind: 'named', type: 'reviewer', label: 'named: reviewer' });
  expect(startEdgeOf(row('lead.spawn-3', 'agent:builtin:general-purpose'), home, undefined, ROOT)).toEqual({ kind: 'general', label: 'general' });
  // A teammate is one by the ledger's word, whatever agent type it runs as.
  expect(startEdgeOf(row('lead.a-4', 'agent:builtin:general-purpose'), home, { team: 'crew' }, ROOT)).toEqual({ kind: 'teammate', team: 'crew', label: 'teammate: crew' });
  expect(startEdgeOf(row('lead.b-5', 'agent:custom:builder'), home, { team: 'crew' }, ROOT)).toEqual({ kind: 'teammate', team: 'crew', type: 'builder', label: 'teammate: crew' });
  expect(startEdgeOf(row('branch-1', 'agent:builtin:fork', { parentTurn: 3 }), home, undefined, ROOT)).toEqual({ kind: 'from-turn', turn: 3, label: 'from turn 3' });
  // Turn 0 is a point too (before the first turn).
  expect(startEdgeOf(row('branch-2', 'agent:builtin:fork', { parentTurn: 0 }), home, undefined, ROOT).label).toBe('from turn 0');
  expect(startEdgeOf({ agentId: ROOT, querySource: 'agent:main', taskQueue: 'forkflow' }, undefined, undefined, ROOT)).toEqual({ kind: 'root', label: 'root' });
  expect(startEdgeOf(row('lead.dream-1', 'dream:consolidation'), home, undefined, ROOT)).toEqual({ kind: 'other', label: 'other' });
});

test('remote: the child runs on another task queue than its parent; unknown queues say nothing', () => {
  expect(startEdgeOf(row('lead.fork-6', 'agent:builtin:fork', { taskQueue: 'farm' }), home, undefined, ROOT)).toEqual({ kind: 'fork', remote: true, label: 'fork · remote' });
  expect(startEdgeOf(row('lead.x-7', 'agent:custom:builder', { taskQueue: 'farm' }), home, undefined, ROOT).label).toBe('named: builder · remote');
  expect(startEdgeOf(row('lead.fork-8', 'agent:builtin:fork', { taskQueue: 'farm' }), undefined, undefined, ROOT)).toEqual({ kind: 'fork', label: 'fork' });
  expect(startEdgeOf({ agentId: 'lead.fork-9', querySource: 'agent:builtin:fork', parentId: ROOT }, home, undefined, ROOT)).toEqual({ kind: 'fork', label: 'fork' });
});
