/**
 * The Agent tool's `cwd`, decided lexically in the workflow: inside the caller's workspace
 * or refused with the rule (the activities check it again canonically).
 */
import { confineCwd, normalizePosix } from '../../../src/shared/tree/workspace-path';

test('normalizes . and .. the way a POSIX path resolves', () => {
  expect(normalizePosix('/a/./b/../c//d/')).toBe('/a/c/d');
  expect(normalizePosix('/../..')).toBe('/');
  expect(normalizePosix('a/../../b')).toBe('../b');
  expect(normalizePosix('./')).toBe('.');
});

test('a cwd inside the caller’s workspace is its root; anything leading out is refused, naming the rule', () => {
  expect(confineCwd('/ws/a', 'pkg/api')).toEqual({ ok: true, root: '/ws/a/pkg/api' });
  expect(confineCwd('/ws/a', '/ws/a/pkg')).toEqual({ ok: true, root: '/ws/a/pkg' });
  expect(confineCwd('/ws/a', '.')).toEqual({ ok: true, root: '/ws/a' });
  for (const cwd of ['..', '../b', '/ws/b', '/ws/ab', '/root/.ssh', 'pkg/../../b', '/ws/a/../b']) {
    const r = confineCwd('/ws/a', cwd);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toContain("an Agent's cwd must lie inside your own workspace");
  }
  // A caller in the worker's own root: relative paths only, never out of it.
  expect(confineCwd(undefined, 'pkg')).toEqual({ ok: true, root: 'pkg' });
  expect(confineCwd(undefined, '/etc').ok).toBe(false);
  expect(confineCwd(undefined, '../x').ok).toBe(false);
});
