/**
 * Folders an unprivileged user can enter, for tests that run the sandbox as `nobody` (a root
 * worker without a pids cgroup runs calls that write nothing as nobody). The repository's
 * own `.scratch/` is no such place when the clone sits under a private folder (root's home,
 * a `mktemp -d` folder): nobody cannot pass its parent. The test's temp folder can (npm test
 * makes it 1777, as /tmp is), so these folders are made there, or in /tmp or /var/tmp when a
 * private TMPDIR hides it.
 */
import { chmodSync, mkdtempSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { othersMayEnter } from '../../src/activities/tools/sandbox/view';

/**
 * A fresh folder (mode 0755) that user nobody can enter, under the first of TMPDIR, /tmp and
 * /var/tmp that every user may pass; the caller removes it.
 */
export function folderNobodyCanEnter(prefix: string): string {
  const candidates = [os.tmpdir(), '/tmp', '/var/tmp'];
  const parent = candidates.find((dir) => othersMayEnter(dir));
  if (parent === undefined) throw new Error(`none of ${candidates.join(', ')} can be entered by other users; give the test run a TMPDIR that can (chmod o+x on it and its parents)`);
  const dir = realpathSync(mkdtempSync(path.join(parent, prefix)));
  chmodSync(dir, 0o755);
  return dir;
}
