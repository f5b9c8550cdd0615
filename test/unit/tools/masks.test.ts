/**
 * Masks exist only for paths that exist; so a missing `.forkflow/` (or protected path) inside
 * something a Bash call may write is made before the call and masked, while one inside a
 * read-only mount is left alone (nothing there can create it). A writable repository's
 * config, hooks and `info/` stay read-only.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gitGuards, masksOf } from '../../../src/activities/tools/sandbox/masks';
import { viewFor } from '../../../src/activities/tools/sandbox/view';

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'forkflow-masks-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('a missing .forkflow/ and protected directory inside a writable workspace are made (0700) and masked', () => {
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  const view = viewFor(ws, [], [join(ws, 'store', 'blobs')]);
  const masks = masksOf(view, [ws], [ws]);
  expect(masks).toEqual(expect.arrayContaining([{ path: join(ws, '.forkflow'), dir: true }, { path: join(ws, 'store', 'blobs'), dir: true }]));
  expect(statSync(join(ws, '.forkflow')).mode & 0o777).toBe(0o700);
});

test('inside a read-only mount nothing is made; a symlink on the way is not followed', () => {
  const ws = join(dir, 'ws');
  const elsewhere = join(dir, 'elsewhere');
  mkdirSync(ws);
  mkdirSync(elsewhere);
  expect(masksOf(viewFor(ws, [], []), [ws], [])).toEqual([]);
  expect(existsSync(join(ws, '.forkflow'))).toBe(false);
  symlinkSync(elsewhere, join(ws, 'store'));
  masksOf(viewFor(ws, [], [join(ws, 'store', 'blobs')]), [ws], [ws]);
  expect(existsSync(join(elsewhere, 'blobs'))).toBe(false);
});

test('a writable repository keeps its config, hooks and info/ read-only', () => {
  for (const d of ['.git/hooks', '.git/info']) mkdirSync(join(dir, d), { recursive: true });
  expect(gitGuards(dir).map((m) => [m.path.slice(dir.length), m.dir, m.readOnly])).toEqual([
    ['/.git/hooks', true, true],
    ['/.git/info', true, true],
  ]);
});
