/**
 * Resource limits of one sandboxed Bash call, so that a fork bomb, a memory hog, `yes` or
 * a disk filler cannot take the worker (or its host) down:
 * - processes: a `pids` cgroup of the call's own where the worker may create one (cgroup v1
 *   or a delegated v2 subtree); otherwise RLIMIT_NPROC, which the kernel enforces only for a
 *   non-root user — so a root worker without such a cgroup runs calls that write nothing as
 *   an unprivileged user (`nobody`), where the limit holds;
 * - memory: RLIMIT_DATA per process, and a size limit on the private /tmp (a tmpfs is RAM);
 * - CPU time: RLIMIT_CPU per process; file size: RLIMIT_FSIZE; open files: RLIMIT_NOFILE;
 * - output: the Bash tool stops reading, and kills the call, past `outputBytes`.
 * The wall-clock timeout of the call (timeout_ms) still applies on top.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { envSetting } from '../../../shared/wire/env-settings';

/** The limits of one call. */
export interface SandboxLimits {
  /** Processes (threads count too) alive at once in the call. */
  processes: number;
  /** Bytes of data segment (heap, private mappings) per process. */
  memoryBytes: number;
  /** Seconds of CPU time per process. */
  cpuSeconds: number;
  /** Largest file a process may write. */
  fileBytes: number;
  /** Size of the private /tmp. */
  tmpBytes: number;
  /** Open file descriptors per process. */
  openFiles: number;
  /** Output (stdout and stderr) read from the call before it is killed. */
  outputBytes: number;
}

/** Defaults: roomy for builds and test runs, small against a host's total. */
export const DEFAULT_LIMITS: SandboxLimits = {
  processes: 512,
  memoryBytes: 4 * 1024 ** 3,
  cpuSeconds: 900,
  fileBytes: 1024 ** 3,
  tmpBytes: 512 * 1024 ** 2,
  openFiles: 4096,
  outputBytes: 16 * 1024 ** 2,
};

/**
 * `ulimit` lines for the sandbox's first shell, which then execs the command: every limit
 * soft and hard, so the command cannot raise it. A limit the worker's own hard limit is
 * already below stays at that lower value.
 */
export function ulimitScript(limits: SandboxLimits, opts: { processes: boolean } = { processes: true }): string {
  const kib = (bytes: number) => Math.max(1, Math.floor(bytes / 1024));
  const lines: [string, number][] = [
    // Outside the sandbox RLIMIT_NPROC would count every process of the worker's user.
    ...(opts.processes ? [['u', limits.processes] as [string, number]] : []),
    ['d', kib(limits.memoryBytes)],
    ['t', limits.cpuSeconds],
    // bash's -f counts 1024-byte blocks in POSIX mode off.
    ['f', kib(limits.fileBytes)],
    ['n', limits.openFiles],
    ['c', 0],
  ];
  return lines.map(([flag, n]) => `ulimit -HS${flag} ${n} 2>/dev/null`).join('; ');
}

/** How this worker caps the number of processes of a call. */
export type ProcessCap =
  /** A pids cgroup per call, under `dir` (the worker's own cgroup in that hierarchy). */
  | { kind: 'cgroup'; dir: string }
  /** RLIMIT_NPROC: the worker is not root, so the limit holds. */
  | { kind: 'rlimit' }
  /** Root without a pids cgroup: calls that write nothing run as `nobody`, writing calls are capped by nothing. */
  | { kind: 'unprivileged-user'; uid: number; gid: number };

/** The worker's own cgroup directory in the pids hierarchy, when one is mounted (v1 `pids`, or v2 with pids enabled). */
function ownPidsCgroup(): string | undefined {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  } catch {
    return undefined;
  }
  for (const line of lines) {
    const [, controllers, rel] = line.split(':');
    if (rel === undefined) continue;
    if (controllers === 'pids') return path.join('/sys/fs/cgroup/pids', rel);
  }
  const unified = lines.find((l) => l.startsWith('0::'));
  if (unified) {
    const dir = path.join('/sys/fs/cgroup', unified.slice(3));
    if (existsSync(path.join(dir, 'cgroup.controllers')) && readFileSync(path.join(dir, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('pids')) return dir;
  }
  return undefined;
}

/**
 * Finds out once how calls' processes can be capped here: a cgroup is tried for real (a
 * child created, its `pids.max` written, removed again).
 */
export function detectProcessCap(env: NodeJS.ProcessEnv = process.env): ProcessCap {
  const own = envSetting(env, 'FORKFLOW_SANDBOX_CGROUP') === 'off' ? undefined : ownPidsCgroup();
  if (own) {
    const dir = path.join(own, 'forkflow-sandbox');
    const trial = path.join(dir, `probe-${randomUUID()}`);
    try {
      mkdirSync(trial, { recursive: true });
      try {
        writeFileSync(path.join(trial, 'pids.max'), '8');
      } finally {
        rmdirSync(trial);
      }
      return { kind: 'cgroup', dir };
    } catch {
      // Not ours to write (a read-only cgroupfs, v2 without delegation): fall through.
    }
  }
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return { kind: 'rlimit' };
  return { kind: 'unprivileged-user', uid: 65534, gid: 65534 };
}

/** A cgroup holding one call's processes; `release` kills what is left and removes it. */
export interface CallCgroup {
  procs: string;
  release(): void;
}

/** Creates the call's cgroup with its process limit. */
export function callCgroup(cap: ProcessCap & { kind: 'cgroup' }, limits: SandboxLimits): CallCgroup {
  const dir = path.join(cap.dir, randomUUID());
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'pids.max'), String(limits.processes));
  const procs = path.join(dir, 'cgroup.procs');
  return { procs, release: () => releaseCgroup(procs) };
}

/** Kills what is left in a call's cgroup (named by its `cgroup.procs`) and removes it; also from another worker process (a background task's). */
export function releaseCgroup(procs: string): void {
  const dir = path.dirname(procs);
  for (let i = 0; i < 20; i++) {
    let pids: string[];
    try {
      pids = readFileSync(procs, 'utf8').split('\n').filter(Boolean);
    } catch {
      return;
    }
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone already
      }
    }
    try {
      rmdirSync(dir);
      return;
    } catch {
      // still has members that are dying: try again
    }
  }
}

/**
 * A per-call cgroup younger than this is never swept: another worker process on the host
 * (sharing this cgroup) may have just created it, its shell not yet in it. CI saw a worker
 * starting up remove a running test's fresh cgroup that way, and the call failed.
 */
export const SWEEP_MIN_AGE_MS = 60_000;

/** Removes leftover per-call cgroups of earlier worker processes (empty ones, at least SWEEP_MIN_AGE_MS old). */
export function sweepCgroups(cap: ProcessCap, now = Date.now()): void {
  if (cap.kind !== 'cgroup') return;
  let names: string[];
  try {
    names = readdirSync(cap.dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!/^[0-9a-f-]{36}$/.test(name)) continue;
    const dir = path.join(cap.dir, name);
    try {
      if (now - statSync(dir).mtimeMs < SWEEP_MIN_AGE_MS) continue;
      rmdirSync(dir);
    } catch {
      // not empty, gone already, or not ours
    }
  }
}
