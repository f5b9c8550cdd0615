/**
 * The permission model and the tool table, as the tool round consults them for every call:
 * each filter and mode against each kind of tool.
 */
import { decideCall, type CallPolicy } from '../../../src/shared/permissions';
import { routeSchema } from '../../../src/shared/tools/routes';
import { knownToolTraits, ToolTable, type ToolTraits } from '../../../src/shared/tools/table';

const traits = (name: string): ToolTraits => {
  const t = knownToolTraits(name);
  if (!t) throw new Error(`no traits for ${name}`);
  return t;
};
const memory = { dir: '/mem', canonicalDir: '/real/mem' };
const policy = (p: Partial<CallPolicy>): CallPolicy => ({ filter: 'allowAll', mode: 'default', ...p });

test('the table knows the built-in and sub-agent tools, and nothing else unless given', () => {
  expect(traits('Read')).toMatchObject({ home: { kind: 'builtin' }, readOnly: true, idempotent: true, effect: 'none' });
  expect(traits('FileWrite')).toMatchObject({ readOnly: false, idempotent: true, effect: 'files' });
  expect(traits('FileEdit')).toMatchObject({ readOnly: false, idempotent: false, effect: 'files' });
  expect(traits('Bash')).toMatchObject({ readOnly: false, idempotent: false, effect: 'shell' });
  expect(traits('Agent')).toMatchObject({ home: { kind: 'subagent' }, effect: 'agents' });
  expect(knownToolTraits('lookup_order')).toBeUndefined();
  expect(knownToolTraits('__proto__')).toBeUndefined();
  const route = routeSchema.parse({ tools: ['lookup_order'], taskQueue: 'orders', readOnly: true });
  expect(new ToolTable([route]).lookup('lookup_order')).toEqual({ name: 'lookup_order', home: { kind: 'service', route }, readOnly: true, idempotent: true, effect: 'none' });
  expect(new ToolTable().lookup('lookup_order')).toBeUndefined();
});

test('allowAll: every tool writes the workspace; bubble makes the writing ones wait', () => {
  for (const name of ['Read', 'Bash', 'FileEdit', 'FileWrite']) {
    expect(decideCall(policy({}), traits(name))).toEqual({ allow: true, writePolicy: { kind: 'workspace' }, approval: false });
  }
  expect(decideCall(policy({ mode: 'bubble' }), traits('Bash'))).toMatchObject({ allow: true, approval: true });
  expect(decideCall(policy({ mode: 'bubble' }), traits('FileWrite'))).toMatchObject({ allow: true, approval: true });
  expect(decideCall(policy({ mode: 'bubble' }), traits('Grep'))).toMatchObject({ allow: true, approval: false });
});

test('readOnly: reads and (classified) Bash run with nothing writable; file writes are refused with a way forward', () => {
  const p = policy({ filter: 'readOnly' });
  expect(decideCall(p, traits('Glob'))).toEqual({ allow: true, writePolicy: { kind: 'none' }, approval: false });
  expect(decideCall(p, traits('Bash'))).toEqual({ allow: true, writePolicy: { kind: 'none' }, approval: false });
  const denied = decideCall(p, traits('FileEdit'));
  expect(denied.allow).toBe(false);
  expect(!denied.allow && denied.message).toMatch(/read-only.*Read, Glob, Grep/);
});

test('autoMem: writes only inside the pinned memory directory; none at all before it is pinned', () => {
  const p = policy({ filter: { kind: 'autoMem', memoryDir: '/mem' }, memory });
  const within = { kind: 'within', dir: '/mem', canonicalDir: '/real/mem' };
  expect(decideCall(p, traits('FileWrite'))).toEqual({ allow: true, writePolicy: within, approval: false });
  expect(decideCall(p, traits('Bash'))).toEqual({ allow: true, writePolicy: within, approval: false });
  expect(decideCall(p, traits('Read'))).toEqual({ allow: true, writePolicy: { kind: 'none' }, approval: false });
  expect(decideCall({ ...p, memory: undefined }, traits('FileWrite'))).toMatchObject({ allow: true, writePolicy: { kind: 'none' } });
});
