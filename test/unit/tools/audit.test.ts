/** The post-run audit of a memory fork's touched paths. */
import { linkSync, mkdirSync, symlinkSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { auditTouchedPaths } from '../../../src/activities/tools';
import { run } from './kit';
import { memoryWorld, type MemoryWorld } from './memory-kit';

let w: MemoryWorld;
beforeEach(() => {
  w = memoryWorld();
});
afterEach(() => w.base.remove());

async function touch(name: string): Promise<string> {
  const out = await run('FileWrite', { file_path: path.join(w.mem, name), content: 'memory' }, w.ctx());
  expect(out.isError).toBe(false);
  return out.touched?.[0] ?? '';
}

describe('auditTouchedPaths', () => {
  it('passes when every touched path is still a plain file inside', async () => {
    const touched = [await touch('a.md'), await touch('b.md'), await touch('a.md')];
    expect(await auditTouchedPaths(touched, w.mem)).toEqual([]);
  });

  it('reports each kind of escape', async () => {
    const swapped = await touch('swapped.md');
    unlinkSync(swapped);
    symlinkSync(w.secret, swapped);
    const removed = await touch('removed.md');
    unlinkSync(removed);
    const linked = await touch('linked.md');
    linkSync(linked, path.join(w.outside, 'copy.md'));
    mkdirSync(path.join(w.mem, 'dir'));
    const escapes = await auditTouchedPaths([swapped, removed, linked, path.join(w.mem, 'dir'), 'relative.md', `${w.mem}/../outside/secret.md`], w.mem);
    expect(escapes.map((e) => [path.basename(e.path), e.reason])).toEqual([
      ['swapped.md', 'outside'],
      ['removed.md', 'unverifiable'],
      ['linked.md', 'hard-link'],
      ['dir', 'not-a-file'],
      ['relative.md', 'outside'],
      ['secret.md', 'outside'],
    ]);
    expect(escapes[0]?.detail).toContain(`resolves to ${w.secret}`);
  });

  it('fails closed when the memory directory cannot be resolved', async () => {
    const touched = await touch('a.md');
    const escapes = await auditTouchedPaths([touched], path.join(w.base.dir, 'missing'));
    expect(escapes).toEqual([{ path: touched, reason: 'unverifiable', detail: expect.stringContaining('cannot be resolved') as string }]);
  });
});
