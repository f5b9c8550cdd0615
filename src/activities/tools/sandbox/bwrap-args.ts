/**
 * The bubblewrap command line that puts one Bash call in an OS sandbox: the second wall
 * behind the read-only classifier (STYLE 17). Pure: it only builds argv, so the layout
 * can be unit-tested and read in one place.
 *
 * Layout, in mount order (later mounts cover earlier ones) — an allow-list, never the host's `/`:
 * - the system entries (view.ts: `/usr` and its aliases, the `/etc` allow-list, the Node
 *   install), read-only;
 * - a fresh `/dev` (null, zero, urandom, tty, a private shm) and a `/proc` of the sandbox's
 *   own PID namespace, so the worker's `/proc/<pid>/environ` (API keys) and its other
 *   processes are out of sight and out of reach;
 * - a private, size-limited tmpfs on `/tmp`, holding `$HOME` (`/tmp/home`);
 * - paths the caller allowed, read-only; the workspace, read-only or writable; further
 *   writable directories (the memory directory, a worktree's git directory);
 * - protected paths inside any of those masked: an empty read-only tmpfs over a directory,
 *   `/dev/null` over a file; a writable repository's config, hooks and `.git` link read-only.
 * - for a fork with a network allowance, its call's proxy directory (a unix socket), read-only.
 * Namespaces: every one bwrap can unshare (network: only a loopback, where at most the
 * bridge to the proxy listens, net-bridge.ts; user,
 * with no further user namespaces inside; PID; IPC; UTS; cgroup), a new session (no TIOCSTI
 * into the worker's terminal), all capabilities dropped, no new privileges (bwrap always
 * sets it), and the sandbox dies with the worker.
 */
import { SANDBOX_PROXY_DIR } from './net-bridge';
import type { SystemEntry } from './view';

/**
 * A path inside something mounted that the command must not have as it is: protected paths
 * hidden (an empty read-only tmpfs over a directory, `/dev/null` over a file), or a path
 * kept but made read-only (a repository's config and hooks in a writable workspace).
 */
export interface Mask {
  path: string;
  dir: boolean;
  /** Keep the content, read-only, instead of hiding it. */
  readOnly?: boolean;
}

/** What one sandboxed Bash call may touch; every path absolute and canonical. */
export interface SandboxSpec {
  /** The workspace root; the command's working directory. */
  root: string;
  /** Directories the command may write (the workspace, a memory directory, a git directory). */
  writable: readonly string[];
  /** Further read-only paths the caller allowed. */
  readPaths?: readonly string[];
  /** Protected paths inside the mounts, masked. */
  masks?: readonly Mask[];
  /** The system entries to bind (view.ts `systemEntries()`). */
  system: readonly SystemEntry[];
  /** Size of the private /tmp, in bytes. */
  tmpBytes: number;
  /** The private directory of the call's network proxy (net-proxy.ts), bound read-only at SANDBOX_PROXY_DIR. */
  proxyDir?: string;
}

/** `$HOME` inside the sandbox: private, empty, gone with the call. */
export const SANDBOX_HOME = '/tmp/home';

function absolute(dir: string): void {
  if (!dir.startsWith('/')) throw new Error(`sandbox paths must be absolute, got ${JSON.stringify(dir)}`);
}

/** bwrap options for `spec`; the command argv follows the returned `--`. */
export function bwrapArgs(spec: SandboxSpec): string[] {
  const readPaths = spec.readPaths ?? [];
  for (const dir of [spec.root, ...spec.writable, ...readPaths, ...(spec.masks ?? []).map((m) => m.path)]) absolute(dir);
  const args = [
    '--die-with-parent',
    '--new-session',
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    // The command's shell is the namespace's PID 1, so when it exits the kernel kills
    // everything it left running (even `setsid` escapees) before bwrap itself exits:
    // the Bash call ends with nothing behind it.
    '--as-pid-1',
    '--cap-drop', 'ALL',
  ];
  args.push('--perms', '0755', '--dir', '/etc');
  for (const entry of spec.system) {
    if (entry.kind === 'symlink') args.push('--symlink', entry.target, entry.path);
    else args.push('--ro-bind', entry.source, entry.path);
  }
  args.push('--dev', '/dev', '--proc', '/proc');
  args.push('--perms', '1777', '--size', String(spec.tmpBytes), '--tmpfs', '/tmp', '--perms', '0700', '--dir', SANDBOX_HOME);
  if (spec.proxyDir !== undefined) {
    absolute(spec.proxyDir);
    args.push('--ro-bind', spec.proxyDir, SANDBOX_PROXY_DIR);
  }
  // Parents before children, so a mount inside another (a memory directory in a read-only
  // workspace, an allowed path inside a masked `.forkflow/`) is not covered by it.
  type Op = { path: string; args: string[] };
  const ops: Op[] = [];
  const writable = new Set(spec.writable);
  for (const dir of readPaths) if (dir !== spec.root && !writable.has(dir)) ops.push({ path: dir, args: ['--ro-bind-try', dir, dir] });
  ops.push({ path: spec.root, args: [writable.has(spec.root) ? '--bind' : '--ro-bind', spec.root, spec.root] });
  // `-try`: a memory directory that does not exist yet is simply not there to write.
  for (const dir of writable) if (dir !== spec.root) ops.push({ path: dir, args: ['--bind-try', dir, dir] });
  for (const mask of spec.masks ?? []) {
    if (mask.readOnly) ops.push({ path: mask.path, args: ['--ro-bind', mask.path, mask.path] });
    else ops.push({ path: mask.path, args: mask.dir ? ['--perms', '0000', '--tmpfs', mask.path] : ['--ro-bind', '/dev/null', mask.path] });
  }
  const depth = (p: string) => p.split('/').filter(Boolean).length;
  for (const op of ops.map((o, i) => ({ ...o, i })).sort((a, b) => depth(a.path) - depth(b.path) || a.i - b.i)) args.push(...op.args);
  // Masks turn read-only last: an allowed path inside one needed its mount point made first.
  for (const mask of spec.masks ?? []) if (mask.dir && !mask.readOnly) args.push('--remount-ro', mask.path);
  args.push('--chdir', spec.root, '--');
  return args;
}
