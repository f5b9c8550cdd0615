/**
 * Bash on a real temporary workspace: output, exit codes, limits, the read-only gate, and
 * cancellation that kills the whole process group (background children included) fast.
 */
import { readFileSync, watch } from 'node:fs';
import path from 'node:path';
import { BASH_LIMITS } from '../../../src/activities/tools/bash';
import { groupAlive } from '../../../src/activities/tools/process-group';
import type { ShellClassifier } from '../../../src/activities/tools/types';
import { context, run, tempDir, type TempDir } from './kit';

let ws: TempDir;
beforeEach(() => {
  ws = tempDir();
});
afterEach(() => ws.remove());

/** Resolves once `name` exists in `dir` (fs.watch event, with a check for a file already there). */
function fileAppears(dir: string, name: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(dir, (_event, file) => {
      if (file === name) {
        watcher.close();
        resolve();
      }
    });
    try {
      readFileSync(path.join(dir, name));
      watcher.close();
      resolve();
    } catch {
      // not there yet: the watcher will see it
    }
  });
}

/** True when no process with this pid exists any more (reaped), false while it does. */
function gone(pid: number, group = false): boolean {
  try {
    process.kill(group ? -pid : pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

describe('Bash', () => {
  it('runs in the workspace root and reports the exit code', async () => {
    const out = await run('Bash', { command: 'pwd; echo hello' }, context(ws.dir));
    expect(out).toEqual({ isError: false, content: `${ws.dir}\nhello\n[exit code 0]`, containment: 'none' });
  });

  it('interleaves stdout and stderr in the order written', async () => {
    const out = await run('Bash', { command: 'echo one; echo two >&2; echo three; echo four >&2' }, context(ws.dir));
    expect(out.content).toBe('one\ntwo\nthree\nfour\n[exit code 0]');
  });

  it('returns a non-zero exit as an error with the output', async () => {
    const out = await run('Bash', { command: 'echo partial; ls does-not-exist; exit 3' }, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/^partial\nls: cannot access 'does-not-exist'.*\n\[exit code 3\]$/);
  });

  it('caps output at 30,000 characters keeping head and tail visibly', async () => {
    const out = await run('Bash', { command: 'echo START; head -c 100000 /dev/zero | tr "\\0" x; echo; echo END' }, context(ws.dir));
    // Assertions on small derived values: a failure must not print 30,000 characters.
    expect(out.isError).toBe(false);
    expect(out.content.slice(0, 9)).toBe('START\nxxx');
    const total = 'START\n'.length + 100_000 + '\nEND\n'.length;
    expect(/\[\.\.\. (\d+) chars truncated \.\.\.\]/.exec(out.content)?.[1]).toBe(String(total - BASH_LIMITS.maxOutputChars));
    expect(out.content.slice(-21)).toBe('xxx\nEND\n[exit code 0]');
    expect(out.content.length).toBeLessThan(BASH_LIMITS.maxOutputChars + 100);
  });

  it('kills a command at its timeout, with its background children', async () => {
    const started = Date.now();
    const out = await run('Bash', { command: 'echo $$ > pgid; echo begun; sleep 30 & sleep 30', timeout_ms: 300 }, context(ws.dir));
    const pgid = Number(readFileSync(path.join(ws.dir, 'pgid'), 'utf8'));
    expect(out.isError).toBe(true);
    expect(out.content).toBe('Command timed out after 300 ms; it and its background processes were killed.\nbegun\n');
    expect(Date.now() - started).toBeLessThan(2300);
    expect(groupAlive(pgid)).toBe(false);
  });

  it('heartbeats about once a second while running', async () => {
    const ctx = context(ws.dir);
    await run('Bash', { command: 'sleep 2.2' }, ctx);
    expect(ctx.heartbeats.length).toBeGreaterThanOrEqual(3); // at start, ~1 s, ~2 s
    expect(ctx.heartbeats[0]).toMatchObject({ tool: 'Bash', pid: expect.any(Number) as number, outputChars: 0 });
  });

  it('stops background processes still running when the command finishes', async () => {
    const out = await run('Bash', { command: 'sleep 30 & echo $! > child; echo done' }, context(ws.dir));
    const child = Number(readFileSync(path.join(ws.dir, 'child'), 'utf8'));
    expect(out.content).toBe('done\n[Background processes still running when the command finished were stopped.]\n[exit code 0]');
    expect(groupAlive(child)).toBe(false);
  });

  it('on abort kills the whole group, TERM-ignoring children included, within 2 s', async () => {
    const ctx = context(ws.dir);
    const command = [
      'echo $$ > pgid',
      'sleep 1000 & echo $! >> kids',
      "(trap '' TERM; exec sleep 1000) & echo $! >> kids", // survives SIGTERM: needs the SIGKILL
      "(trap '' TERM; sleep 1000 & wait) & echo $! >> kids", // a grandchild behind a subshell
      'echo ready > ready',
      'wait',
    ].join('\n');
    const pending = run('Bash', { command }, ctx);
    await fileAppears(ws.dir, 'ready');
    const pgid = Number(readFileSync(path.join(ws.dir, 'pgid'), 'utf8'));
    const kids = readFileSync(path.join(ws.dir, 'kids'), 'utf8').trim().split('\n').map(Number);
    expect(kids).toHaveLength(3);
    expect(groupAlive(pgid)).toBe(true);

    const started = Date.now();
    ctx.controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(2000);
    expect(ctx.heartbeats.length).toBeGreaterThan(0);
    // Nothing in the group can run any more (dead processes may await reaping by PID 1).
    expect(groupAlive(pgid)).toBe(false);
    expect(gone(pgid)).toBe(true); // the leader was reaped by us

    // And the group really disappears: ESRCH from kill(-pgid, 0) once PID 1 reaped the
    // orphans. Polled, because no event announces another process's reaping.
    const deadline = Date.now() + 10_000;
    while (!gone(pgid, true) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(gone(pgid, true)).toBe(true);
    for (const kid of kids) expect(gone(kid)).toBe(true);
  });
});

describe('Bash under restricted write policies', () => {
  const readOnly: ShellClassifier = (cmd) => Promise.resolve(cmd.startsWith('ls') ? { readOnly: true } : { readOnly: false, reason: 'writes a file' });

  it('is denied without a classifier', async () => {
    const out = await run('Bash', { command: 'touch x' }, context(ws.dir, { writePolicy: { kind: 'within', dir: ws.dir } }));
    expect(out).toEqual({ isError: true, content: 'Bash is not available to a memory agent. Use Read, Glob and Grep instead.' });
  });

  it('runs only what the classifier calls read-only, with its reason otherwise', async () => {
    ws.file('a.txt', 'a');
    const ctx = context(ws.dir, { writePolicy: { kind: 'none' }, classifyShell: readOnly });
    expect(await run('Bash', { command: 'ls' }, ctx)).toEqual({ isError: false, content: 'a.txt\n[exit code 0]', containment: 'classifier-only' });
    const denied = await run('Bash', { command: 'touch b.txt' }, ctx);
    expect(denied.isError).toBe(true);
    expect(denied.content).toContain('(writes a file)');
    expect(() => readFileSync(path.join(ws.dir, 'b.txt'))).toThrow();
  });

  it('fails closed when the classifier throws', async () => {
    const broken: ShellClassifier = () => Promise.reject(new Error('parser crashed'));
    const ctx = context(ws.dir, { writePolicy: { kind: 'within', dir: ws.dir }, classifyShell: broken });
    const out = await run('Bash', { command: 'ls' }, ctx);
    expect(out.isError).toBe(true);
    expect(out.content).toContain('could not be checked (parser crashed)');
  });

  it('reports bad arguments', async () => {
    const out = await run('Bash', { command: 'ls', timeout_ms: 10 }, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/timeout_ms: .*>=100/);
  });
});

describe('the environment a command sees', () => {
  test('secrets in the worker environment are not passed to commands', async () => {
    process.env.FORKFLOW_TEST_SECRET = 'sk-never-show-this';
    process.env.ANTHROPIC_API_KEY = 'sk-ant-hidden';
    try {
      const out = await run('Bash', { command: 'env' }, context(ws.dir));
      expect(out.isError).toBe(false);
      expect(out.content).not.toContain('sk-never-show-this');
      expect(out.content).not.toContain('sk-ant-hidden');
      expect(out.content).toMatch(/^PATH=/m);
    } finally {
      delete process.env.FORKFLOW_TEST_SECRET;
      delete process.env.ANTHROPIC_API_KEY;
    }
  });

  test('commands admitted as read-only run with git kept from config that could run programs', async () => {
    const readOnly = (): Promise<{ readOnly: true }> => Promise.resolve({ readOnly: true });
    const out = await run('Bash', { command: 'env' }, context(ws.dir, { writePolicy: { kind: 'none' }, classifyShell: readOnly }));
    expect(out.content).toContain('GIT_CONFIG_GLOBAL=/dev/null');
    expect(out.content).toContain('GIT_CONFIG_NOSYSTEM=1');
  });
});
