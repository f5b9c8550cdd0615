/**
 * Peer message routing in the root's ledger: names resolve in the documented order, hostile
 * addresses are refused with a reason, and a message is counted once per tool call.
 */
import { newLedger, type TreeLedger } from '../../../src/shared/tree/tree-ledger';
import { admit } from '../../../src/shared/tree/tree-ledger-rules';
import { routeMessage, rosterOf, teamOf } from '../../../src/shared/tree/team-ledger';

const limits = { maxTreeRunning: 20, maxTreeSpawns: 50 };

function tree(): TreeLedger {
  const ledger = newLedger({ agentId: 'root', model: 'm', budget: 100_000, name: 'boss' }, limits);
  const join = (agentId: string, parentId: string, name?: string, team?: string) =>
    expect(admit(ledger, { agentId, parentId, model: 'm', kind: 'spawn', want: 1000, ...(name ? { name } : {}), ...(team ? { team } : {}) })).toMatchObject({ ok: true });
  join('root.a-1', 'root', 'a', 'crew');
  join('root.b-2', 'root', 'b', 'crew');
  join('root.helper-3', 'root', 'helper');
  join('root.helper-3.x-1', 'root.helper-3', 'x');
  return ledger;
}

/** The reason of a refusal ('' when it was not refused). */
const why = (r: { ok: true } | { ok: false; reason: string }): string => (r.ok ? '' : r.reason);

const req = (from: string, to: string, key = `${from}->${to}`, structured = false) => ({ from, to, key, structured });

test('names resolve: a teammate, "lead", a unique name in the tree, an id; "*" is the rest of the team', () => {
  const l = tree();
  expect(routeMessage(l, req('root.a-1', 'b'))).toEqual({ ok: true, targets: [{ agentId: 'root.b-2', name: 'b' }], fromName: 'a' });
  expect(routeMessage(l, req('root.a-1', 'lead'))).toMatchObject({ ok: true, targets: [{ agentId: 'root', name: 'boss' }] });
  // Child → parent by name, grandchild → a sibling of its parent, by name.
  expect(routeMessage(l, req('root.helper-3.x-1', 'helper'))).toMatchObject({ ok: true, targets: [{ agentId: 'root.helper-3' }] });
  expect(routeMessage(l, req('root.helper-3.x-1', 'a'))).toMatchObject({ ok: true, targets: [{ agentId: 'root.a-1' }] });
  expect(routeMessage(l, req('root.b-2', '*'))).toMatchObject({ ok: true, targets: [{ agentId: 'root' }, { agentId: 'root.a-1' }] });
  expect(routeMessage(l, req('root', '*'))).toMatchObject({ ok: true, targets: [{ agentId: 'root.a-1' }, { agentId: 'root.b-2' }] });
  expect(teamOf(l, 'root')).toEqual({ team: 'crew', leadId: 'root' });
  expect(rosterOf(l, 'crew').map((n) => n.name)).toEqual(['boss', 'a', 'b']);
});

test('hostile addresses are refused with a reason', () => {
  const l = tree();
  expect(why(routeMessage(l, req('root.a-1', 'nobody')))).toContain('No running agent "nobody" in this agent tree: messages reach only agents of your own tree. Names you can use: boss, b, helper, x');
  expect(why(routeMessage(l, req('root.a-1', '*', 'k', true)))).toContain('never broadcast');
  expect(why(routeMessage(l, req('root.helper-3', '*')))).toContain('in no team');
  expect(why(routeMessage(l, req('root.a-1', 'a')))).toContain('That is you');
  expect(why(routeMessage(l, req('outsider', 'a')))).toContain('not part of tree root');
  l.nodes['root.b-2']!.state = 'ended';
  expect(why(routeMessage(l, req('root.a-1', 'b')))).toContain('has finished');
  // Refusals count nothing.
  expect(Object.values(l.nodes).some((n) => n.messages)).toBe(false);
});

test('the ledger refuses name clashes, two leads of a team and a lead of two teams', () => {
  const l = tree();
  const ask = (agentId: string, parentId: string, name: string, team: string) => admit(l, { agentId, parentId, model: 'm', kind: 'spawn', want: 10, name, team });
  expect(why(ask('root.a-9', 'root', 'a', 'crew'))).toContain('already has a member called "a"');
  expect(why(ask('root.boss-9', 'root', 'boss', 'crew'))).toContain('your own name');
  expect(why(ask('root.helper-3.q-2', 'root.helper-3', 'q', 'crew'))).toContain('is led by root');
  expect(why(ask('root.c-9', 'root', 'c', 'other'))).toContain('You lead team "crew" already');
  expect(Object.keys(l.nodes)).toHaveLength(5);
});

test('a message is counted once per key: a retried route counts nothing again', () => {
  const l = tree();
  routeMessage(l, req('root', '*', 'tool-1'));
  routeMessage(l, req('root', '*', 'tool-1'));
  routeMessage(l, req('root', 'a', 'tool-2'));
  expect(l.nodes.root!.messages).toMatchObject({ sent: 2, received: 0 });
  expect(l.nodes['root.a-1']!.messages).toMatchObject({ sent: 0, received: 2 });
  expect(l.nodes['root.b-2']!.messages).toMatchObject({ sent: 0, received: 1 });
});
