/**
 * A second UNIX user on the host, for tests of what another local user can reach: created
 * when missing (the tests run as root), removed again if this process created it.
 */
import { execFileSync, spawnSync } from 'node:child_process';

export interface OtherUser {
  name: string;
  uid: number;
  gid: number;
  /** Runs `sh -c script` as this user; its exit status and output. */
  run(script: string): { status: number | null; stdout: string; stderr: string };
  remove(): void;
}

export function otherUser(name = 'ffneighbour'): OtherUser {
  if (process.getuid?.() !== 0) throw new Error('a second user needs the tests to run as root');
  let created = false;
  if (spawnSync('id', ['-u', name]).status !== 0) {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
    created = true;
  }
  const uid = Number(execFileSync('id', ['-u', name]).toString());
  const gid = Number(execFileSync('id', ['-g', name]).toString());
  return {
    name,
    uid,
    gid,
    run(script) {
      const out = spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', 'sh', '-c', script], { encoding: 'utf8', cwd: '/' });
      return { status: out.status, stdout: out.stdout, stderr: out.stderr };
    },
    remove() {
      if (created) spawnSync('userdel', [name]);
    },
  };
}
