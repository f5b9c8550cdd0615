/**
 * The bubblewrap command line that puts one Bash call in an OS sandbox: the second wall
 * behind the read-only classifier (STYLE 17). Pure: it only builds argv, so the layout
 * can be unit-tested and read in one place.
 *
 * Layout, in mount order (later mounts cover earlier ones):
 * - the whole host filesystem read-only (`--ro-bind / /`);
 * - a fresh `/dev` (null, zero, urandom, tty, a private shm) and a `/proc` of the
 *   sandbox's own PID namespace, so the worker's `/proc/<pid>/environ` (API keys) and
 *   its other processes are out of sight and out of reach;
 * - private, empty tmpfs over `/tmp` and `/run` (`/run` holds daemons' UNIX sockets,
 *   which a read-only mount does not stop a client from connecting to);
 * - the workspace bound again (read-only, or writable when the policy says so) in case
 *   it lives under one of those tmpfs mounts, then the writable directories.
 * Namespaces: every one bwrap can unshare (network: only a loopback nobody listens on;
 * PID; IPC; UTS; cgroup), a new session (no TIOCSTI into the worker's terminal), all
 * capabilities dropped, no new privileges (bwrap always sets it), and the sandbox dies
 * with the worker.
 */

/** What one sandboxed Bash call may touch. */
export interface SandboxSpec {
  /** Absolute workspace root; the command's working directory. */
  root: string;
  /** Absolute directories the command may write (the memory directory, or the workspace). */
  writable: readonly string[];
}

/** bwrap options for `spec`; the command argv follows the returned `--`. */
export function bwrapArgs(spec: SandboxSpec): string[] {
  for (const dir of [spec.root, ...spec.writable]) {
    if (!dir.startsWith('/')) throw new Error(`sandbox paths must be absolute, got ${JSON.stringify(dir)}`);
  }
  const args = [
    '--die-with-parent',
    '--new-session',
    '--unshare-all',
    // The command's shell is the namespace's PID 1, so when it exits the kernel kills
    // everything it left running (even `setsid` escapees) before bwrap itself exits:
    // the Bash call ends with nothing behind it.
    '--as-pid-1',
    '--cap-drop', 'ALL',
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    '--tmpfs', '/run',
  ];
  if (!spec.writable.includes(spec.root)) args.push('--ro-bind', spec.root, spec.root);
  // `-try`: a memory directory that does not exist yet is simply not there to write.
  for (const dir of spec.writable) args.push('--bind-try', dir, dir);
  args.push('--chdir', spec.root, '--');
  return args;
}
