/**
 * The permission model and the tool table, as the tool round consults them for every call:
 * each filter and mode against each kind of tool.
 */
import { childPermissionMode, decideCall, type CallPolicy, type PermissionMode } from '../../../src/shared/tools/permissions';
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
    expect(decideCall(policy({}), traits(name))).toEqual({ allow: true, writePolicy: { kind: 'workspace' }, approval: false, sandbox: 'sandbox' });
  }
  expect(decideCall(policy({ mode: 'bubble' }), traits('Bash'))).toMatchObject({ allow: true, approval: true });
  expect(decideCall(policy({ mode: 'bubble' }), traits('FileWrite'))).toMatchObject({ allow: true, approval: true });
  expect(decideCall(policy({ mode: 'bubble' }), traits('Grep'))).toMatchObject({ allow: true, approval: false });
});

test('readOnly: reads and (classified) Bash run with nothing writable; file writes are refused with a way forward', () => {
  const p = policy({ filter: 'readOnly' });
  expect(decideCall(p, traits('Glob'))).toEqual({ allow: true, writePolicy: { kind: 'none' }, approval: false, sandbox: 'sandbox' });
  expect(decideCall(p, traits('Bash'))).toEqual({ allow: true, writePolicy: { kind: 'none' }, approval: false, sandbox: 'sandbox' });
  const denied = decideCall(p, traits('FileEdit'));
  expect(denied.allow).toBe(false);
  expect(!denied.allow && denied.message).toMatch(/read-only.*Read, Glob, Grep/);
});

test('autoMem: writes only inside the pinned memory directory; none at all before it is pinned', () => {
  const p = policy({ filter: { kind: 'autoMem', memoryDir: '/mem' }, memory });
  const within = { kind: 'within', dir: '/mem', canonicalDir: '/real/mem' };
  expect(decideCall(p, traits('FileWrite'))).toEqual({ allow: true, writePolicy: within, approval: false, sandbox: 'sandbox' });
  expect(decideCall(p, traits('Bash'))).toEqual({ allow: true, writePolicy: within, approval: false, sandbox: 'sandbox' });
  expect(decideCall(p, traits('Read'))).toEqual({ allow: true, writePolicy: { kind: 'none' }, approval: false, sandbox: 'sandbox' });
  expect(decideCall({ ...p, memory: undefined }, traits('FileWrite'))).toMatchObject({ allow: true, writePolicy: { kind: 'none' } });
});

test('plan: read-only whatever the filter; Bash runs in a sandbox with nothing writable', () => {
  for (const filter of ['allowAll', 'readOnly', { kind: 'autoMem', memoryDir: '/mem' }] as const) {
    const p = policy({ filter, mode: 'plan', memory });
    expect(decideCall(p, traits('Read'))).toMatchObject({ allow: true, writePolicy: { kind: 'none' } });
    expect(decideCall(p, traits('Bash'))).toEqual({ allow: true, writePolicy: { kind: 'none' }, approval: false, sandbox: 'sandbox' });
    for (const name of ['FileEdit', 'FileWrite']) {
      const denied = decideCall(p, traits(name));
      expect(!denied.allow && denied.message).toContain('plan mode');
    }
  }
});

test('bubble: file writes wait; a sandboxed shell command runs unasked (new runs) but only in the sandbox', () => {
  const p = policy({ mode: 'bubble', sandboxedShellAsksNothing: true });
  expect(decideCall(p, traits('FileWrite'))).toMatchObject({ approval: true, sandbox: 'sandbox' });
  expect(decideCall(p, traits('Bash'))).toEqual({ allow: true, writePolicy: { kind: 'workspace' }, approval: false, sandbox: 'required' });
  // Runs recorded before: every Bash call asked, and still does on replay.
  expect(decideCall(policy({ mode: 'bubble' }), traits('Bash'))).toMatchObject({ approval: true, sandbox: 'sandbox' });
});

test('bypassPermissions: nothing asked, Bash outside the sandbox; acceptEdits and default: in it, unasked', () => {
  expect(decideCall(policy({ mode: 'bypassPermissions' }), traits('Bash'))).toMatchObject({ approval: false, sandbox: 'bypass' });
  expect(decideCall(policy({ mode: 'bypassPermissions' }), traits('FileWrite'))).toMatchObject({ approval: false, writePolicy: { kind: 'workspace' } });
  for (const mode of ['default', 'acceptEdits'] as const) {
    expect(decideCall(policy({ mode }), traits('Bash'))).toMatchObject({ approval: false, sandbox: 'sandbox' });
    expect(decideCall(policy({ mode }), traits('FileEdit'))).toMatchObject({ approval: false, writePolicy: { kind: 'workspace' } });
  }
});

test("a sub-agent's mode: plan stays plan, forks bubble, definitions honoured but never looser than the parent, bypass only with consent", () => {
  const spawn = (parent: PermissionMode, definitionMode?: PermissionMode, consent = false) => childPermissionMode(parent, { kind: 'agent', definitionMode }, consent);
  expect(childPermissionMode('plan', { kind: 'fork' }, true)).toBe('plan');
  for (const parent of ['default', 'acceptEdits', 'bubble', 'bypassPermissions'] as const) expect(childPermissionMode(parent, { kind: 'fork' }, true)).toBe('bubble');
  expect(spawn('default')).toBe('acceptEdits');
  expect(spawn('default', 'plan')).toBe('plan');
  expect(spawn('default', 'bubble')).toBe('bubble');
  expect(spawn('bubble', 'acceptEdits')).toBe('bubble');
  expect(spawn('plan', 'acceptEdits')).toBe('plan');
  expect(spawn('default', 'bypassPermissions')).toBe('acceptEdits');
  expect(spawn('default', 'bypassPermissions', true)).toBe('bypassPermissions');
  expect(spawn('bubble', 'bypassPermissions', true)).toBe('bubble');
  expect(spawn('bypassPermissions', 'default', true)).toBe('default');
});

test("a service's or an MCP server's tool: the same modes; one that changes something waits under bubble and is refused in plan", () => {
  const writes = new ToolTable([routeSchema.parse({ tools: ['refund_order'], taskQueue: 'orders' })]).lookup('refund_order')!;
  const reads = new ToolTable([routeSchema.parse({ tools: ['lookup_order'], taskQueue: 'orders', readOnly: true })]).lookup('lookup_order')!;
  const mcpWrite: ToolTraits = { name: 'mcp__fs__write_file', home: { kind: 'mcp', server: 'fs', tool: 'write_file' }, readOnly: false, idempotent: false, effect: 'external' };
  for (const tool of [writes, mcpWrite]) {
    expect(decideCall(policy({}), tool)).toMatchObject({ allow: true, approval: false });
    expect(decideCall(policy({ mode: 'acceptEdits' }), tool)).toMatchObject({ allow: true, approval: false });
    // Only Bash is let through unasked for being sandboxed: a service or a server is not in the sandbox.
    expect(decideCall(policy({ mode: 'bubble', sandboxedShellAsksNothing: true }), tool)).toMatchObject({ allow: true, approval: true });
    const plan = decideCall(policy({ mode: 'plan' }), tool);
    expect(!plan.allow && plan.message).toContain('plan mode');
    const readOnly = decideCall(policy({ filter: 'readOnly' }), tool);
    expect(!readOnly.allow && readOnly.message).toMatch(/declared read-only/);
  }
  expect(decideCall(policy({ mode: 'plan' }), reads)).toMatchObject({ allow: true, approval: false, writePolicy: { kind: 'none' } });
  expect(decideCall(policy({ mode: 'bubble', sandboxedShellAsksNothing: true }), reads)).toMatchObject({ allow: true, approval: false });
});

test("default asks per the main rules (new runs): writes and tools not declared read-only wait, unless an allow rule names them; sandboxed Bash runs unasked, only in the sandbox", () => {
  const p = policy({ mode: 'default', defaultAsks: true });
  expect(decideCall(p, traits('FileWrite'))).toMatchObject({ allow: true, approval: true, writePolicy: { kind: 'workspace' } });
  expect(decideCall(p, traits('FileEdit'))).toMatchObject({ approval: true });
  expect(decideCall(p, traits('Read'))).toMatchObject({ approval: false });
  expect(decideCall(p, traits('Bash'))).toEqual({ allow: true, writePolicy: { kind: 'workspace' }, approval: false, sandbox: 'required' });
  const mcpWrite: ToolTraits = { name: 'mcp__fs__write_file', home: { kind: 'mcp', server: 'fs', tool: 'write_file' }, readOnly: false, idempotent: false, effect: 'external' };
  expect(decideCall(p, mcpWrite)).toMatchObject({ approval: true });
  // The input's allow rules: a name, or a prefix.
  const ruled = policy({ mode: 'default', defaultAsks: true, allowRules: ['FileWrite', 'mcp__fs__*'] });
  expect(decideCall(ruled, traits('FileWrite'))).toMatchObject({ approval: false });
  expect(decideCall(ruled, mcpWrite)).toMatchObject({ approval: false });
  expect(decideCall(ruled, traits('FileEdit'))).toMatchObject({ approval: true });
  // The rules hold under bubble too.
  expect(decideCall(policy({ mode: 'bubble', sandboxedShellAsksNothing: true, allowRules: ['FileWrite'] }), traits('FileWrite'))).toMatchObject({ approval: false });
  // Runs recorded before `default` asked replay as acceptEdits.
  expect(decideCall(policy({ mode: 'default' }), traits('FileWrite'))).toMatchObject({ approval: false });
});

test("a named agent's own mode applies within its parent's: an asking default parent keeps its children asking; its own default, plan or bubble is kept under a parent that does not ask", () => {
  const spawn = (parent: PermissionMode, definitionMode?: PermissionMode) => childPermissionMode(parent, { kind: 'agent', definitionMode }, false, parent === 'default');
  expect(spawn('acceptEdits', 'default')).toBe('default');
  expect(spawn('acceptEdits', 'plan')).toBe('plan');
  expect(spawn('acceptEdits', 'bubble')).toBe('bubble');
  expect(spawn('acceptEdits')).toBe('acceptEdits');
  // A parent that asks: never a looser child.
  expect(spawn('default')).toBe('default');
  expect(spawn('default', 'acceptEdits')).toBe('default');
  expect(spawn('default', 'bubble')).toBe('bubble');
  expect(spawn('default', 'plan')).toBe('plan');
  expect(childPermissionMode('default', { kind: 'agent', definitionMode: 'bypassPermissions' }, true, true)).toBe('default');
  // Under a parent whose requests go up, a child that asks asks upward too.
  expect(spawn('bubble', 'default')).toBe('bubble');
});
