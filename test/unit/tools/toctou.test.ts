/**
 * Time-of-check/time-of-use, deterministically: a write is planned (checked) while the
 * path is harmless, the path is then swapped, and the write executed. The descriptor
 * layer must refuse every swap, and nothing outside may change.
 */
import { existsSync, linkSync, mkdirSync, renameSync, symlinkSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { executeWrite, type ContainedWriteRequest } from '../../../src/activities/tools/contained-write';
import { planWriteTarget, resolveWriteScope, type WriteScope, type WriteTarget } from '../../../src/activities/tools/paths';
import type { WritePolicy } from '../../../src/activities/tools/types';
import { memoryWorld, type MemoryWorld } from './memory-kit';

let w: MemoryWorld;
beforeEach(() => {
  w = memoryWorld();
});
afterEach(() => w.base.remove());

const request = (policy: WritePolicy, root: string, create = true): ContainedWriteRequest => ({
  policy,
  root,
  filePath: '(planned)',
  create,
  readCurrent: !create,
  decide: () => ({ kind: 'write', content: 'PWNED' }),
});

async function plan(policy: WritePolicy, root: string, filePath: string): Promise<{ scope: WriteScope; target: WriteTarget }> {
  const scope = await resolveWriteScope(policy, root);
  if (!scope.ok) throw new Error(scope.message);
  const target = await planWriteTarget(scope.scope, filePath, root);
  if (!target.ok) throw new Error(target.message);
  return { scope: scope.scope, target };
}

describe('swaps between check and write', () => {
  it('a directory replaced by a symlink to outside', async () => {
    mkdirSync(path.join(w.mem, 'd'));
    const { scope, target } = await plan(w.policy, w.mem, path.join(w.mem, 'd', 'secret.md'));
    renameSync(path.join(w.mem, 'd'), path.join(w.mem, 'd.real'));
    symlinkSync(w.outside, path.join(w.mem, 'd'));
    const before = w.fingerprint();
    const r = await executeWrite(scope, target, request(w.policy, w.mem));
    expect(r).toMatchObject({ kind: 'denied', message: expect.stringMatching(/symbolic link|changed while/) as string });
    expect(w.fingerprint()).toEqual(before);
  });

  it('a directory whose parent became a symlink to outside', async () => {
    mkdirSync(path.join(w.mem, 'a', 'b'), { recursive: true });
    mkdirSync(path.join(w.outside, 'b'));
    const { scope, target } = await plan(w.policy, w.mem, path.join(w.mem, 'a', 'b', 'x.md'));
    renameSync(path.join(w.mem, 'a'), path.join(w.mem, 'a.real'));
    symlinkSync(w.outside, path.join(w.mem, 'a')); // a/b now resolves to outside/b, a real directory
    const before = w.fingerprint();
    const r = await executeWrite(scope, target, request(w.policy, w.mem));
    expect(r).toMatchObject({ kind: 'denied', message: expect.stringContaining('really at') as string });
    expect(w.fingerprint()).toEqual(before);
  });

  it('a file replaced by a symlink to an outside file', async () => {
    w.base.file('mem/f.md', 'ORIGINAL');
    const { scope, target } = await plan(w.policy, w.mem, path.join(w.mem, 'f.md'));
    unlinkSync(path.join(w.mem, 'f.md'));
    symlinkSync(w.secret, path.join(w.mem, 'f.md'));
    const before = w.fingerprint();
    expect(await executeWrite(scope, target, request(w.policy, w.mem))).toMatchObject({ kind: 'denied' });
    expect(await executeWrite(scope, target, request(w.policy, w.mem, false))).toMatchObject({ kind: 'denied' });
    expect(w.fingerprint()).toEqual(before);
  });

  it('a file replaced by a hard link to an outside file', async () => {
    w.base.file('mem/f.md', 'ORIGINAL');
    const { scope, target } = await plan(w.policy, w.mem, path.join(w.mem, 'f.md'));
    unlinkSync(path.join(w.mem, 'f.md'));
    linkSync(w.secret, path.join(w.mem, 'f.md'));
    const before = w.fingerprint();
    expect(await executeWrite(scope, target, request(w.policy, w.mem))).toMatchObject({ kind: 'denied', message: expect.stringContaining('hard links') as string });
    expect(w.fingerprint()).toEqual(before);
  });

  it('a missing file replaced by a dangling symlink pointing outside', async () => {
    const { scope, target } = await plan(w.policy, w.mem, path.join(w.mem, 'new.md'));
    symlinkSync(path.join(w.outside, 'planted.md'), path.join(w.mem, 'new.md'));
    const before = w.fingerprint();
    expect(await executeWrite(scope, target, request(w.policy, w.mem))).toMatchObject({ kind: 'denied' });
    expect(existsSync(path.join(w.outside, 'planted.md'))).toBe(false);
    expect(w.fingerprint()).toEqual(before);
  });

  it('the memory directory itself swapped for a symlink to outside', async () => {
    const { scope, target } = await plan(w.policy, w.mem, path.join(w.mem, 'secret.md'));
    renameSync(w.mem, path.join(w.base.dir, 'mem.real'));
    symlinkSync(w.outside, w.mem);
    const before = w.fingerprint();
    expect(await executeWrite(scope, target, request(w.policy, w.mem))).toMatchObject({ kind: 'denied' });
    unlinkSync(w.mem); // the fingerprint skips `mem`; make sure outside is still untouched
    expect(w.fingerprint()).toEqual({ ...before, [path.join(w.base.dir, 'mem.real')]: 'dir' });
  });

  it('workspace: a missing parent that becomes a symlink to outside is not created through', async () => {
    const ws = path.join(w.mem, 'ws');
    mkdirSync(ws);
    const policy: WritePolicy = { kind: 'workspace' };
    const { scope, target } = await plan(policy, ws, 'a/b/c.md');
    expect(target.missing).toEqual(['a', 'b']);
    symlinkSync(w.outside, path.join(ws, 'a'));
    const before = w.fingerprint();
    expect(await executeWrite(scope, target, request(policy, ws))).toMatchObject({ kind: 'denied' });
    expect(existsSync(path.join(w.outside, 'b'))).toBe(false);
    expect(w.fingerprint()).toEqual(before);
  });
});
