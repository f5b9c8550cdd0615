/**
 * Where a tool call may act, checked on the worker: a workspace root under the roots the
 * worker serves (symlinks and `..` resolved), outside its protected state, inside the caller's
 * workspace for a sub-agent started with a `cwd`; allowed read paths only under those roots.
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { resolveWorkspace, type WorkspacePolicy } from '../../../src/activities/tools/workspace';
import { tempDir, type TempDir } from './kit';

let t: TempDir;
let policy: WorkspacePolicy;
beforeEach(() => {
  t = tempDir();
  for (const d of ['a/sub', 'b', 'a/.state']) mkdirSync(path.join(t.dir, d), { recursive: true });
  symlinkSync(path.join(t.dir, 'b'), path.join(t.dir, 'a', 'to-b'));
  policy = { defaultRoot: path.join(t.dir, 'a'), roots: [path.join(t.dir, 'a')], protectedPaths: [path.join(t.dir, 'a', '.state')] };
});
afterEach(() => t.remove());

test('a root under the worker’s roots is accepted, canonical; others are refused naming the rule', async () => {
  expect(await resolveWorkspace({}, policy)).toMatchObject({ ok: true, root: path.join(t.dir, 'a') });
  expect(await resolveWorkspace({ root: 'sub' }, policy)).toMatchObject({ ok: true, root: path.join(t.dir, 'a', 'sub') });
  for (const root of [path.join(t.dir, 'b'), path.join(t.dir, 'a', 'to-b'), path.join(t.dir, 'a', '..', 'b'), '/etc']) {
    const r = await resolveWorkspace({ root }, policy);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toContain('outside the roots this worker serves');
  }
  const state = await resolveWorkspace({ root: path.join(t.dir, 'a', '.state') }, policy);
  expect(!state.ok && state.message).toContain('protected state');
});

test("a sub-agent's root must lie in its caller's workspace, canonically", async () => {
  const wider = { ...policy, roots: [t.dir] };
  expect(await resolveWorkspace({ root: path.join(t.dir, 'a', 'sub'), confinedTo: path.join(t.dir, 'a') }, wider)).toMatchObject({ ok: true });
  const escaped = await resolveWorkspace({ root: path.join(t.dir, 'a', 'to-b'), confinedTo: path.join(t.dir, 'a') }, wider);
  expect(!escaped.ok && escaped.message).toContain("an Agent's cwd must resolve inside the workspace of the agent that started it");
  expect(await resolveWorkspace({ root: 'sub', confinedTo: '.' }, policy)).toMatchObject({ ok: true });
});

test('allowed read paths count only under the worker’s roots; a memory directory wherever it lies', async () => {
  const r = await resolveWorkspace({ readPaths: [path.join(t.dir, 'a', 'sub'), path.join(t.dir, 'b'), '/root'], memoryDir: path.join(t.dir, 'b') }, policy);
  expect(r.ok && r.view.readPaths).toEqual([path.join(t.dir, 'a', 'sub'), path.join(t.dir, 'b')]);
});
