/**
 * The OS sandbox under Bash (src/activities/tools/sandbox/): the plan per write policy and
 * opt-out, the mount layout, and real bubblewrap runs showing each promise holds on its own —
 * with the classifier deliberately told to allow everything, so only the sandbox stands in
 * the way: nothing outside the fork's view is there, nothing but what its policy allows is
 * writable, no network, no other process, and resource limits that keep a fork bomb, `yes`,
 * a memory hog or a disk filler from taking the worker down.
 * Scratch folders live under the repository's git-ignored .scratch/ (not /tmp, which the
 * sandbox replaces), so "outside" really is the host filesystem.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { bwrapArgs, DEFAULT_LIMITS, planShell, probeSandbox, systemEntries, viewFor, workspaceReachWarning, type SandboxAvailability, type SandboxLimits, type ShellSandboxContext } from '../../../src/activities/tools/sandbox';
import type { ShellClassifier, ToolContext, WritePolicy } from '../../../src/activities/tools/types';
import { classifyShellCommand } from '../../../src/activities/tools/shell';
import { context, run } from './kit';
import { realSandbox } from '../../kit/bubblewrap';
import { folderNobodyCanEnter } from '../../kit/reachable';

const REPO = path.resolve(__dirname, '..', '..', '..');
const allowAll: ShellClassifier = () => Promise.resolve({ readOnly: true });
const UNAVAILABLE: SandboxAvailability = { available: false, reason: 'test: no sandbox' };

let available: SandboxAvailability;
let base: string;
let ws: string;
let outside: string;
let mem: string;

beforeAll(async () => {
  available = await realSandbox();
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

function ctx(policy: WritePolicy, sandbox: Partial<ShellSandboxContext> = {}, over: Partial<ToolContext> = {}): ToolContext {
  return context(ws, { writePolicy: policy, classifyShell: allowAll, shellSandbox: { availability: available, require: false, ...sandbox }, ...over });
}
const NONE: WritePolicy = { kind: 'none' };
const WORKSPACE: WritePolicy = { kind: 'workspace' };
const limits = (over: Partial<SandboxLimits>): SandboxLimits => ({ ...DEFAULT_LIMITS, ...over });

describe('planShell', () => {
  const yes: SandboxAvailability = { available: true, launcher: 'bubblewrap', path: '/usr/bin/bwrap', version: 'x', processCap: { kind: 'rlimit' } };
  const base = { root: '/w', system: [] };
  it.each([
    ['none', NONE, yes, { kind: 'sandbox', spec: { root: '/w', writable: [] } }],
    ['within: a memory agent’s Bash writes nothing, its memory included', { kind: 'within', dir: '/w/m', canonicalDir: '/w/m' }, yes, { kind: 'sandbox', spec: { root: '/w', writable: [] }, writes: false }],
    ['workspace: sandboxed too, its workspace writable', WORKSPACE, yes, { kind: 'sandbox', spec: { root: '/w', writable: ['/w'] } }],
    ['none, unavailable: refused', NONE, UNAVAILABLE, { kind: 'refuse' }],
    ['workspace, unavailable: refused', WORKSPACE, UNAVAILABLE, { kind: 'refuse' }],
    ['none, worker opted out', NONE, { ...UNAVAILABLE, allowUnsandboxed: true }, { kind: 'plain', containment: 'classifier-only' }],
    ['workspace, worker opted out', WORKSPACE, { ...UNAVAILABLE, allowUnsandboxed: true }, { kind: 'plain', containment: 'none' }],
  ] as const)('%s', (_name, policy, availability, expected) => {
    expect(planShell(policy, base, { availability, require: false })).toMatchObject(expected);
  });

  it('runs outside only by an explicit opt-out: bypassPermissions, or the worker’s, unless the fork requires the sandbox', () => {
    expect(planShell(WORKSPACE, base, { availability: yes, require: false, bypass: true })).toMatchObject({ kind: 'plain', containment: 'none' });
    expect(planShell(NONE, base, { availability: yes, require: false, bypass: true })).toMatchObject({ kind: 'plain', containment: 'classifier-only' });
    const refused = planShell(NONE, base, { availability: { ...UNAVAILABLE, allowUnsandboxed: true }, require: true });
    expect(refused).toMatchObject({ kind: 'refuse' });
    expect(refused.kind === 'refuse' && refused.message).toContain('requireSandbox');
    const plain = planShell(NONE, base, { availability: UNAVAILABLE, require: false });
    expect(plain.kind === 'refuse' && plain.message).toContain('test: no sandbox');
  });

  it('a root worker without a pids cgroup runs calls that write nothing as an unprivileged user', () => {
    const root: SandboxAvailability = { ...yes, processCap: { kind: 'unprivileged-user', uid: 65534, gid: 65534 }, setpriv: '/usr/bin/setpriv' };
    expect(planShell(NONE, base, { availability: root, require: false })).toMatchObject({ kind: 'sandbox', setpriv: '/usr/bin/setpriv' });
    expect(planShell(WORKSPACE, base, { availability: root, require: false })).not.toHaveProperty('setpriv');
  });
});

describe('bwrapArgs', () => {
  it('binds an allow-list, never the host root, and mounts parents before children', () => {
    const args = bwrapArgs({ root: '/w', writable: ['/w/m'], readPaths: ['/w/.forkflow/run'], masks: [{ path: '/w/.forkflow', dir: true }], system: systemEntries(), tmpBytes: 1024 });
    const binds = args.flatMap((a, i) => (a === '--ro-bind' || a === '--bind' || a === '--bind-try' || a === '--ro-bind-try' ? [args[i + 2]] : []));
    expect(binds).not.toContain('/');
    expect(binds).toContain('/usr');
    expect(binds).not.toContain('/etc/shadow');
    expect(args.indexOf('/w/m')).toBeGreaterThan(args.indexOf('/w'));
    // The mask over .forkflow first, then the allowed path inside it, then the mask turns read-only.
    expect(args.indexOf('/w/.forkflow/run')).toBeGreaterThan(args.indexOf('/w/.forkflow'));
    expect(args.indexOf('--remount-ro')).toBeGreaterThan(args.indexOf('/w/.forkflow/run'));
    expect(args.slice(-3)).toEqual(['--chdir', '/w', '--']);
    expect(() => bwrapArgs({ root: 'w', writable: [], system: [], tmpBytes: 1 })).toThrow(/absolute/);
  });
});

describe('Bash in the sandbox (classifier set to allow everything)', () => {
  it('cannot write the workspace, the rest of the filesystem or $HOME, but has a private /tmp', async () => {
    const marker = `ff-sandbox-${process.pid}-${Date.now()}`;
    const out = await run(
      'Bash',
      { command: `echo x > README.md; rm -f ${outside}/secret.txt; touch "$HOME/${marker}"; echo t > /tmp/${marker} && cat /tmp/${marker}` },
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

  it('sees its workspace and the system, and nothing else: no home, no sibling folder, no /etc/shadow, no host /proc', async () => {
    const home = process.env.HOME ?? '/root';
    const absent = [outside, `${home}/.ssh`, `${home}/.gitconfig`, `${home}/.bashrc`, `${home}/.local`, '/etc/shadow', '/etc/ssh', '/etc/ssl/private', path.join(REPO, 'src'), path.join(REPO, 'package.json'), '/srv', '/var'];
    const out = await run('Bash', { command: `cat README.md; ls -d ${absent.join(' ')} 2>&1 | grep -c 'No such file'; ls /usr/bin/env; ls /proc | grep -c '^[0-9]'` }, ctx(NONE));
    const lines = out.content.split('\n');
    expect(lines[0]).toBe('original');
    expect(Number(lines[1])).toBe(absent.length);
    expect(lines[2]).toBe('/usr/bin/env');
    expect(Number(lines[3])).toBeLessThan(10);
  });

  it('hides the worker’s protected paths and .forkflow/ even inside the workspace', async () => {
    mkdirSync(path.join(ws, '.forkflow'));
    writeFileSync(path.join(ws, '.forkflow', 'dev.db'), 'SECRET-DB');
    writeFileSync(path.join(ws, 'keys.json'), 'SECRET-KEY');
    const view = viewFor(ws, [], [path.join(ws, 'keys.json')]);
    const out = await run('Bash', { command: 'cat .forkflow/dev.db keys.json; ls -a .forkflow; echo x > keys.json; rm -rf .forkflow' }, ctx(WORKSPACE, {}, { view }));
    expect(out.content).not.toContain('SECRET');
    expect(readFileSync(path.join(ws, 'keys.json'), 'utf8')).toBe('SECRET-KEY');
    expect(readFileSync(path.join(ws, '.forkflow', 'dev.db'), 'utf8')).toBe('SECRET-DB');
  });

  it('lets a memory agent’s Bash change nothing, its memory directory included (writes go through the audited FileWrite/FileEdit)', async () => {
    const policy: WritePolicy = { kind: 'within', dir: mem, canonicalDir: mem };
    writeFileSync(path.join(mem, 'MEMORY.md'), '# index\n');
    const before = () => readdirSync(mem).sort().map((n) => [n, readFileSync(path.join(mem, n), 'utf8')]);
    const was = before();
    for (const command of ['echo x >> memory/MEMORY.md', "sed -i 's/index/gone/' memory/MEMORY.md", 'cp memory/MEMORY.md memory/copy.md', 'mv memory/MEMORY.md memory/moved.md', 'ln -s ../README.md memory/link.md', 'echo note > memory/n.md', 'echo x > README.md']) {
      const out = await run('Bash', { command }, ctx(policy));
      expect([command, out.isError]).toEqual([command, true]);
    }
    expect(before()).toEqual(was);
    expect(readFileSync(path.join(ws, 'README.md'), 'utf8')).toBe('original\n');
  });

  it('lets a writing fork write its workspace and nothing outside it', async () => {
    const out = await run('Bash', { command: `echo new > README.md; echo x > ${outside}/secret.txt` }, ctx(WORKSPACE));
    expect(readFileSync(path.join(ws, 'README.md'), 'utf8')).toBe('new\n');
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('outside\n');
    expect(out.containment).toBe('sandbox');
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
      for (const policy of [NONE, WORKSPACE]) {
        const out = await run('Bash', { command: `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected` }, ctx(policy));
        expect(out.content).not.toContain('connected');
        expect(out.isError).toBe(true);
      }
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

  it('still times out and kills the sandboxed command', async () => {
    const out = await run('Bash', { command: 'sleep 30', timeout_ms: 300 }, ctx(NONE));
    expect(out.isError).toBe(true);
    expect(out.content).toContain('timed out');
  });

  it('under the sandbox the classifier only advises: a read-only fork runs a writing command, which fails, with a note', async () => {
    const out = await run('Bash', { command: 'echo x > README.md' }, ctx(NONE, {}, { classifyShell: classifyShellCommand }));
    expect(out.isError).toBe(true);
    expect(out.content).toContain('Read-only file system');
    expect(out.content).toContain('Note: a read-only agent writes nothing');
    expect(readFileSync(path.join(ws, 'README.md'), 'utf8')).toBe('original\n');
    const fine = await run('Bash', { command: 'bash -n README.md && node --check /dev/null && echo ok' }, ctx(NONE, {}, { classifyShell: classifyShellCommand }));
    expect(fine).toMatchObject({ isError: false });
  });

  it('without a sandbox: refused, unless the worker opted out (then the classifier decides), or the fork requires it', async () => {
    const refused = await run('Bash', { command: 'echo hi' }, ctx(NONE, { availability: UNAVAILABLE }));
    expect(refused.isError).toBe(true);
    expect(refused.content).toContain('test: no sandbox');
    const optedOut = { ...UNAVAILABLE, allowUnsandboxed: true };
    const plain = await run('Bash', { command: 'echo hi' }, ctx(NONE, { availability: optedOut }, { classifyShell: classifyShellCommand }));
    expect(plain).toMatchObject({ isError: false, containment: 'classifier-only' });
    const strict = await run('Bash', { command: 'echo x > README.md' }, ctx(NONE, { availability: optedOut }, { classifyShell: classifyShellCommand }));
    expect(strict.content).toContain('may only run read-only commands');
    const required = await run('Bash', { command: 'echo hi' }, ctx(NONE, { availability: optedOut, require: true }));
    expect(required.content).toContain('requireSandbox');
  });

  it('reports the sandbox as unavailable when turned off or when bwrap is missing', async () => {
    expect(await probeSandbox({ ...process.env, FORKFLOW_SANDBOX: 'off' })).toMatchObject({ available: false, allowUnsandboxed: true, reason: expect.stringContaining('FORKFLOW_SANDBOX') as unknown });
    expect(await probeSandbox({ PATH: base })).toMatchObject({ available: false, reason: expect.stringContaining('not installed') as unknown });
    expect(await probeSandbox({ PATH: base, FORKFLOW_ALLOW_UNSANDBOXED: '1' })).toMatchObject({ available: false, allowUnsandboxed: true });
    expect(readlinkSync('/proc/self/exe')).toBeTruthy();
  });
});

/** Processes on the host right now. */
function hostProcesses(): number {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).length;
}

/** Runs `command` and samples the host's process count meanwhile; resolves with the outcome and the peak above the baseline. */
async function sampled(command: string, c: ToolContext, timeoutMs: number): Promise<{ content: string; isError: boolean; peak: number }> {
  const baseline = hostProcesses();
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, hostProcesses() - baseline)), 20);
  try {
    const out = await run('Bash', { command, timeout_ms: timeoutMs }, c);
    return { ...out, peak };
  } finally {
    clearInterval(timer);
  }
}

describe('resource limits', () => {
  const BOMB = 'f() { f | f & }; f; sleep 2; echo survived';

  it.each([
    ['read-only', NONE],
    ['writing', WORKSPACE],
  ] as const)('a fork bomb in a %s fork stays under the process limit and leaves nothing behind', async (_name, policy) => {
    const c = ctx(policy, { limits: limits({ processes: 40 }) });
    const out = await sampled(BOMB, c, 4000);
    // The limit (40), plus bubblewrap's own two and the sampler's noise, never the thousands a bomb makes.
    expect(out.peak).toBeLessThan(60);
    const after = readdirSync('/proc').filter((pid) => {
      try {
        return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('-c\0f() { f | f');
      } catch {
        return false;
      }
    });
    expect(after).toEqual([]);
  }, 30_000);

  it('caps processes as an unprivileged user where a root worker has no pids cgroup (calls that write nothing)', async () => {
    if (process.getuid?.() !== 0 || !available.available) return expect(available.available).toBe(true);
    const noCgroup = await probeSandbox({ ...process.env, FORKFLOW_SANDBOX: '', FORKFLOW_SANDBOX_CGROUP: 'off' });
    expect(noCgroup).toMatchObject({ available: true, processCap: { kind: 'unprivileged-user' } });
    // nobody must be able to enter the workspace: not so under .scratch/ when the clone's parent is private.
    const reachable = folderNobodyCanEnter('sandbox-nobody-');
    ws = path.join(reachable, 'ws');
    mkdirSync(ws);
    writeFileSync(path.join(ws, 'README.md'), 'original\n');
    const c = ctx(NONE, { availability: noCgroup, limits: limits({ processes: 40 }) });
    const out = await sampled(`id -u; ${BOMB}`, c, 4000);
    expect(out.content.split('\n')[0]).toBe('65534');
    expect(out.peak).toBeLessThan(60);
    // It still reads the workspace (another user's files, readable to all) and runs git there.
    spawnSync('git', ['init', '-q'], { cwd: ws });
    const git = await run('Bash', { command: 'cat README.md && git status --short | head -3' }, c);
    expect(git).toMatchObject({ isError: false });
    expect(git.content).toContain('original');
    rmSync(reachable, { recursive: true, force: true });
  }, 30_000);

  it('refuses Bash by name in a workspace user nobody cannot enter, and the worker can say so at start', async () => {
    if (process.getuid?.() !== 0 || !available.available) return expect(available.available).toBe(true);
    const noCgroup = await probeSandbox({ ...process.env, FORKFLOW_SANDBOX: '', FORKFLOW_SANDBOX_CGROUP: 'off' });
    // ws lies in base, which mkdtemp made 0700: a private parent, as /root is for a clone in root's home.
    const out = await run('Bash', { command: 'cat README.md' }, ctx(NONE, { availability: noCgroup }));
    expect(out).toMatchObject({ isError: true });
    expect(out.content).toContain(`nobody cannot enter ${ws}`);
    expect(workspaceReachWarning(noCgroup, [ws])).toContain(`user nobody cannot enter the workspace ${ws}`);
    const reachable = folderNobodyCanEnter('reach-');
    expect(workspaceReachWarning(noCgroup, [reachable])).toBeUndefined();
    rmSync(reachable, { recursive: true });
    expect(workspaceReachWarning(available, [ws])).toEqual(available.processCap.kind === 'unprivileged-user' ? expect.any(String) : undefined);
  });

  it('stops `yes` at the output limit, at once rather than at the timeout', async () => {
    const started = Date.now();
    const out = await run('Bash', { command: 'yes', timeout_ms: 60_000 }, ctx(NONE, { limits: limits({ outputBytes: 1024 * 1024 }) }));
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/^Output passed 1 MiB/);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('bounds memory per process, the private /tmp and the size of a file', async () => {
    const c = ctx(WORKSPACE, { limits: limits({ memoryBytes: 256 * 1024 ** 2, tmpBytes: 2 * 1024 ** 2 }) });
    const mem = await run('Bash', { command: 'python3 -c "bytearray(1024**3)" 2>&1 | tail -1' }, c);
    expect(mem.content).toContain('MemoryError');
    const tmp = await run('Bash', { command: 'dd if=/dev/zero of=/tmp/fill bs=1M count=8 2>&1 | grep -o "No space left on device"' }, c);
    expect(tmp.content).toContain('No space left on device');
    const big = await run('Bash', { command: 'dd if=/dev/zero of=big bs=1M count=4; echo "dd ended $?"' }, ctx(WORKSPACE, { limits: limits({ fileBytes: 1024 ** 2 }) }));
    // SIGXFSZ: the write past the limit kills dd (exit 128 + 25).
    expect(big.content).toContain('dd ended 153');
    expect(statSync(path.join(ws, 'big')).size).toBeLessThanOrEqual(1024 ** 2);
  });
});
