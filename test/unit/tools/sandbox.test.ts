/**
 * The OS sandbox under Bash (src/activities/tools/sandbox/): the plan per write policy,
 * and real bubblewrap runs showing each promise holds on its own — with the classifier
 * deliberately told to allow everything, so only the sandbox stands in the way.
 * Scratch folders live under the repository's git-ignored .scratch/ (not /tmp, which the
 * sandbox replaces), so "outside" really is the host filesystem.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { bwrapArgs, planShell, probeSandbox, type SandboxAvailability, type ShellSandboxContext } from '../../../src/activities/tools/sandbox';
import type { ShellClassifier, ToolContext, WritePolicy } from '../../../src/activities/tools/types';
import { context, run } from './kit';

const REPO = path.resolve(__dirname, '..', '..', '..');
const allowAll: ShellClassifier = () => Promise.resolve({ readOnly: true });
const UNAVAILABLE: SandboxAvailability = { available: false, reason: 'test: no sandbox' };

let available: SandboxAvailability;
let base: string;
let ws: string;
let outside: string;
let mem: string;

beforeAll(async () => {
  const install = spawnSync('bash', [path.join(REPO, 'scripts', 'install-bubblewrap.sh')], { stdio: 'inherit' });
  expect(install.status).toBe(0);
  available = await probeSandbox({ ...process.env, FORKFLOW_SANDBOX: '' });
  expect(available).toMatchObject({ available: true, launcher: 'bubblewrap' });
}, 300_000);

beforeEach(() => {
  mkdirSync(path.join(REPO, '.scratch'), { recursive: true });
  base = realpathSync(mkdtempSync(path.join(REPO, '.scratch', 'sandbox-')));
  ws = path.join(base, 'ws');
  outside = path.join(base, 'outside');
  mem = path.join(ws, 'memory');
  mkdirSync(mem, { recursive: true });
  mkdirSync(outside);
  writeFileSync(path.join(ws, 'README.md'), 'original\n');
  writeFileSync(path.join(outside, 'secret.txt'), 'outside\n');
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function ctx(policy: WritePolicy, sandbox: Partial<ShellSandboxContext> = {}): ToolContext {
  return context(ws, { writePolicy: policy, classifyShell: allowAll, shellSandbox: { availability: available, require: false, workspace: false, ...sandbox } });
}
const NONE: WritePolicy = { kind: 'none' };

describe('planShell', () => {
  const yes: SandboxAvailability = { available: true, launcher: 'bubblewrap', path: '/usr/bin/bwrap', version: 'x' };
  it.each([
    ['none', NONE, yes, false, { kind: 'sandbox', spec: { root: '/w', writable: [] } }],
    ['within', { kind: 'within', dir: '/w/m', canonicalDir: '/w/m' }, yes, false, { kind: 'sandbox', spec: { root: '/w', writable: ['/w/m'] } }],
    ['workspace, no opt-in', { kind: 'workspace' }, yes, false, { kind: 'plain', containment: 'none' }],
    ['workspace, opted in', { kind: 'workspace' }, yes, true, { kind: 'sandbox', spec: { root: '/w', writable: ['/w'] } }],
    ['none, unavailable', NONE, UNAVAILABLE, false, { kind: 'plain', containment: 'classifier-only' }],
  ] as const)('%s', (_name, policy, availability, workspace, expected) => {
    expect(planShell(policy, '/w', { availability, require: false, workspace })).toMatchObject(expected);
  });

  it('refuses instead of running unsandboxed when the fork requires the sandbox', () => {
    const plan = planShell(NONE, '/w', { availability: UNAVAILABLE, require: true, workspace: false });
    expect(plan).toMatchObject({ kind: 'refuse' });
    expect(plan.kind === 'refuse' && plan.message).toContain('test: no sandbox');
  });

  it('binds writable directories after the read-only root and refuses relative paths', () => {
    const args = bwrapArgs({ root: '/w', writable: ['/w/m'] });
    expect(args.indexOf('/w/m')).toBeGreaterThan(args.lastIndexOf('/'));
    expect(args.slice(-3)).toEqual(['--chdir', '/w', '--']);
    expect(() => bwrapArgs({ root: 'w', writable: [] })).toThrow(/absolute/);
  });
});

describe('Bash in the sandbox (classifier set to allow everything)', () => {
  it('cannot write the workspace, the rest of the filesystem or $HOME, but has a private /tmp', async () => {
    const marker = `ff-sandbox-${process.pid}-${Date.now()}`;
    const out = await run(
      'Bash',
      { command: `echo x > README.md; rm -f ../outside/secret.txt; touch "$HOME/${marker}"; echo t > /tmp/${marker} && cat /tmp/${marker}` },
      ctx(NONE),
    );
    expect(out.content).toContain('Read-only file system');
    expect(out.content).toMatch(/^t$/m); // /tmp works inside ...
    expect(existsSync(`/tmp/${marker}`)).toBe(false); // ... and is private
    expect(readFileSync(path.join(ws, 'README.md'), 'utf8')).toBe('original\n');
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('outside\n');
    expect(existsSync(path.join(process.env.HOME ?? '/root', marker))).toBe(false);
    expect(out.containment).toBe('sandbox');
  });

  it('lets a memory agent write its memory directory and nothing else', async () => {
    const policy: WritePolicy = { kind: 'within', dir: mem, canonicalDir: mem };
    const out = await run('Bash', { command: 'echo note > memory/n.md && echo ok; echo x > README.md' }, ctx(policy));
    expect(out.content).toMatch(/^ok$/m);
    expect(readFileSync(path.join(mem, 'n.md'), 'utf8')).toBe('note\n');
    expect(readFileSync(path.join(ws, 'README.md'), 'utf8')).toBe('original\n');
  });

  it('reaches no network: a loopback listener of the worker sees no connection', async () => {
    let connections = 0;
    const server: Server = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const out = await run('Bash', { command: `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected` }, ctx(NONE));
      expect(out.content).not.toContain('connected');
      expect(out.isError).toBe(true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(connections).toBe(0);
  });

  it("sees only its own processes, not the worker's environment", async () => {
    process.env.FORKFLOW_TEST_SECRET = 'sk-do-not-leak';
    try {
      const out = await run('Bash', { command: 'cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n" | grep -c FORKFLOW_TEST_SECRET; ls /proc | grep -c "^[0-9]"' }, ctx(NONE));
      const [secrets, processes] = out.content.split('\n').map(Number);
      expect(secrets).toBe(0);
      expect(processes).toBeLessThan(10); // bwrap's init, bash, cat/ls/grep: not the host's hundreds
    } finally {
      delete process.env.FORKFLOW_TEST_SECRET;
    }
  });

  it('leaves no process behind, even one that left the process group', async () => {
    const tag = `${Date.now() % 100000}${process.pid}`;
    await run('Bash', { command: `setsid sleep ${tag} >/dev/null 2>&1 & echo started` }, ctx(NONE));
    const left = readdirSync('/proc').filter((pid) => {
      try {
        return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(tag);
      } catch {
        return false;
      }
    });
    expect(left).toEqual([]);
  });

  it('opted-in workspace forks write their workspace but reach no network and nothing outside', async () => {
    const out = await run('Bash', { command: 'echo new > README.md; echo x > ../outside/secret.txt' }, ctx({ kind: 'workspace' }, { workspace: true }));
    expect(readFileSync(path.join(ws, 'README.md'), 'utf8')).toBe('new\n');
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('outside\n');
    expect(out.containment).toBe('sandbox');
  });

  it('still times out and kills the sandboxed command', async () => {
    const out = await run('Bash', { command: 'sleep 30', timeout_ms: 300 }, ctx(NONE));
    expect(out.isError).toBe(true);
    expect(out.content).toContain('timed out');
  });

  it('without a sandbox runs behind the classifier only, or refuses when the fork requires it', async () => {
    const plain = await run('Bash', { command: 'echo hi' }, ctx(NONE, { availability: UNAVAILABLE }));
    expect(plain).toMatchObject({ isError: false, containment: 'classifier-only' });
    const refused = await run('Bash', { command: 'echo hi' }, ctx(NONE, { availability: UNAVAILABLE, require: true }));
    expect(refused.isError).toBe(true);
    expect(refused.content).toContain('requireSandbox');
  });

  it('reports the sandbox as unavailable when turned off or when bwrap is missing', async () => {
    expect(await probeSandbox({ ...process.env, FORKFLOW_SANDBOX: 'off' })).toMatchObject({ available: false, reason: expect.stringContaining('FORKFLOW_SANDBOX') as unknown });
    expect(await probeSandbox({ PATH: base })).toMatchObject({ available: false, reason: expect.stringContaining('not installed') as unknown });
    expect(readlinkSync('/proc/self/exe')).toBeTruthy();
  });
});
