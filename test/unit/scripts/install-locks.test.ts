/**
 * The install scripts root runs take their machine-wide lock where no other user can plant it
 * (issue 42, finding 6). Another local user creates the lock's old fixed name in /tmp first,
 * as a symlink to a file of root's (standing in for /etc/shadow); root then runs the script
 * at the point where it installs (in a mount namespace of its own where the program is
 * missing, with an apt-get that fails, so nothing is installed). The file survives. On the
 * old code root's `exec 9>/tmp/forkflow-….lock` followed the link and truncated it (on hosts
 * without fs.protected_symlinks, such as this one).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { otherUser, type OtherUser } from '../../kit/other-user';

const REPO = join(__dirname, '..', '..', '..');
let neighbour: OtherUser;
let fakeBin: string;

beforeAll(() => {
  neighbour = otherUser();
  // An apt-get that fails: the scripts stop after taking their lock, installing nothing.
  fakeBin = mkdtempSync('/var/tmp/forkflow-fake-apt-');
  chmodSync(fakeBin, 0o755);
  writeFileSync(join(fakeBin, 'apt-get'), '#!/bin/sh\necho "fake apt-get: refusing" >&2\nexit 1\n', { mode: 0o755 });
});
afterAll(() => {
  neighbour.remove();
  rmSync(fakeBin, { recursive: true, force: true });
});

/** Case, script, lock name, and the mounts that make its program look missing. */
const SCRIPTS: [string, string, string, string][] = [
  ['install-bubblewrap.sh', 'install-bubblewrap.sh', 'bubblewrap', 'mount --bind /dev/null /usr/bin/bwrap'],
  ['install-chromium.sh', 'install-chromium.sh', 'chromium', '{ [ -e /usr/bin/chromium ] && mount --bind /dev/null /usr/bin/chromium || true; }'],
  // No PostgreSQL at all (the old script died silently here, before its lock: pipefail).
  ['install-postgres.sh, none installed', 'install-postgres.sh', 'postgres', '{ [ -d /usr/lib/postgresql ] && mount -t tmpfs none /usr/lib/postgresql || true; }'],
  // Only the client (postgresql-client makes /usr/lib/postgresql/N/bin without initdb).
  ['install-postgres.sh, client only', 'install-postgres.sh', 'postgres', '{ [ -d /usr/lib/postgresql ] && mount -t tmpfs none /usr/lib/postgresql && mkdir -p /usr/lib/postgresql/15/bin || true; }'],
];

test.each(SCRIPTS)('%s: a link planted at the old lock name in /tmp is not followed', (_case, script, name, hide) => {
  const victim = join(mkdtempSync('/var/tmp/forkflow-victim-'), 'precious');
  writeFileSync(victim, 'root:precious-content\n', { mode: 0o600 });
  const planted = `/tmp/forkflow-${name}.lock`;
  rmSync(planted, { force: true }); // a stale lock of an earlier run (root's) would keep the neighbour out
  expect(neighbour.run(`ln -s ${victim} ${planted}`).status).toBe(0);
  try {
    const run = spawnSync('unshare', ['-m', 'sh', '-c', `${hide} && PATH=${fakeBin}:$PATH exec bash ${join(REPO, 'scripts', script)}`], { encoding: 'utf8', timeout: 60_000 });
    // The file first: that is the attack; then that the script did reach its lock and apt.
    expect(readFileSync(victim, 'utf8')).toBe('root:precious-content\n');
    expect(run.stderr).toContain('fake apt-get: refusing');
    expect(existsSync(`/run/forkflow/${name}.lock`)).toBe(true);
  } finally {
    rmSync(planted, { force: true });
    rmSync(join(victim, '..'), { recursive: true, force: true });
  }
});

// The control: the attack is real on this host. The old scripts' two lines, run by root
// against the same planted link, truncate the file — unless the kernel refuses to follow a
// link another user owns in sticky /tmp (fs.protected_symlinks), which the scripts cannot
// count on: it is a host setting, off in many containers.
test("control: the old lines (`exec 9>/tmp/forkflow-….lock`) follow the planted link", () => {
  const victim = join(mkdtempSync('/var/tmp/forkflow-victim-'), 'precious');
  writeFileSync(victim, 'root:precious-content\n', { mode: 0o600 });
  const planted = '/tmp/forkflow-bubblewrap.lock';
  rmSync(planted, { force: true });
  expect(neighbour.run(`ln -s ${victim} ${planted}`).status).toBe(0);
  try {
    const run = spawnSync('bash', ['-c', `exec 9>${planted}; flock 9`], { encoding: 'utf8' });
    if (readFileSync('/proc/sys/fs/protected_symlinks', 'utf8').trim() === '0') {
      expect(run.status).toBe(0);
      expect(readFileSync(victim, 'utf8')).toBe('');
    } else {
      expect(run.stderr).toContain('Permission denied');
      expect(readFileSync(victim, 'utf8')).toBe('root:precious-content\n');
    }
  } finally {
    rmSync(planted, { force: true });
    rmSync(join(victim, '..'), { recursive: true, force: true });
  }
});
