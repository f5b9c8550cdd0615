/**
 * What the worker writes to disk for itself is not for other local users (issue 42, finding
 * 5), checked as a second UNIX user on the host, in folders that user may enter (0755, as a
 * project folder is): the blob store's blobs (large payloads: whole conversations when
 * nothing is encrypted), a dream's staged session transcripts, and a worktree's record. On
 * the old code every one of them was readable (blobs 0644, transcripts 0444, records 0644).
 */
import { chmodSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { stageSessions } from '../../../src/activities/consolidation/sessions';
import { readRecord, writeRecord } from '../../../src/activities/worktree/registry';
import { FsStorageDriver } from '../../../src/payloads/fs-driver';
import { tempDir } from '../../kit/env';
import { otherUser, type OtherUser } from '../../kit/other-user';

let neighbour: OtherUser;
let project: string;
beforeAll(() => {
  neighbour = otherUser();
  project = tempDir('private-files');
  chmodSync(project, 0o755);
});
afterAll(() => neighbour.remove());

/** A folder in the project, as a checkout's folders are: others may enter it. */
function openFolder(name: string): string {
  const dir = join(project, name);
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755);
  return dir;
}

/** Every file under `dir`, with the second user's attempt to read it. */
function attempts(dir: string): { file: string; status: number | null }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .map((file) => ({ file, status: neighbour.run(`cat '${file}' > /dev/null`).status }));
}

test('blobs of the payload store', async () => {
  const dir = join(openFolder('forkflow'), 'blobs');
  const driver = new FsStorageDriver(dir, 64);
  await driver.store({}, [{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify({ prompt: 'SECRET conversation '.repeat(20) })) }]);
  const tried = attempts(dir);
  expect(tried.length).toBeGreaterThan(2);
  for (const t of tried) expect(t).toEqual({ file: t.file, status: 1 });
  // The store still reads what it wrote.
  expect(driver.stats.blobsWritten).toBeGreaterThan(2);
});

test('a dream\'s staged session transcripts', async () => {
  const dir = join(openFolder('dream'), 'runs', 'r1', 'sessions');
  mkdirSync(join(dir, '..'), { recursive: true, mode: 0o755 });
  chmodSync(join(dir, '..'), 0o755);
  chmodSync(join(dir, '..', '..'), 0o755);
  await stageSessions(undefined as never, { scope: 'team', since: null, until: new Date().toISOString(), max: 0, dir });
  const tried = attempts(dir);
  expect(tried.map((t) => t.file)).toEqual([join(dir, 'INDEX.md')]);
  expect(neighbour.run(`cat '${join(dir, 'INDEX.md')}'`).status).not.toBe(0);
  expect(neighbour.run(`ls '${dir}'`).status).not.toBe(0);
});

test('a worktree\'s record', async () => {
  const worktree = join(openFolder('worktrees'), 'agent-1');
  mkdirSync(worktree, { mode: 0o755 });
  await writeRecord(worktree, { agentId: 'agent-1', branch: 'forkflow/agent-1', baseCommit: 'a'.repeat(40) });
  expect(await readRecord(worktree)).toMatchObject({ branch: 'forkflow/agent-1' });
  const tried = attempts(join(worktree, '..'));
  expect(tried).toHaveLength(1);
  expect(tried[0]!.status).toBe(1);
});
