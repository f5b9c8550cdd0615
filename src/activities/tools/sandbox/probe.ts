/**
 * Finding out, once per worker process, whether the OS sandbox works here: bubblewrap
 * must be installed and the kernel must let it create namespaces (no user namespaces,
 * a locked-down container or another OS all make it fail), and how the processes of a
 * call can be capped (limits.ts). The answer is cached; the worker logs it at start and
 * every Bash call uses it.
 *
 * Running without the sandbox is an explicit opt-out, never a silent fallback:
 * `FORKFLOW_SANDBOX=off` turns it off on purpose; a worker that cannot start it refuses
 * Bash unless started with `FORKFLOW_ALLOW_UNSANDBOXED=1` (`forkflow worker
 * --allow-unsandboxed`). `FORKFLOW_BWRAP` names the bubblewrap binary when it is not on PATH.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { bwrapArgs } from './bwrap-args';
import { detectProcessCap, sweepCgroups, type ProcessCap } from './limits';
import { othersMayEnter, systemEntries } from './view';
import { envSetting } from '../../../shared/wire/env-settings';

/** Whether Bash calls can have the sandbox on this worker. */
export type SandboxAvailability =
  | { available: true; launcher: 'bubblewrap'; path: string; version: string; processCap: ProcessCap; setpriv?: string }
  | {
      available: false;
      reason: string;
      /** The worker's explicit opt-out: run Bash without the sandbox (read-only forks behind the classifier alone) instead of refusing it. */
      allowUnsandboxed?: boolean;
    };

/** How long the probe may take before the sandbox is declared unusable. */
const PROBE_TIMEOUT_MS = 10_000;

function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Runs `file args`, resolving with exit code and combined output; never rejects. */
function run(file: string, args: readonly string[]): Promise<{ code: number | null; output: string; error?: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    let output = '';
    const take = (chunk: Buffer): void => {
      if (output.length < 4096) output += chunk.toString('utf8');
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, output, error: err.message });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const truthy = (v: string | undefined) => v !== undefined && /^(1|true|yes|on)$/i.test(v.trim());

/** Checks the sandbox for real: a `true` run inside exactly the layout Bash calls get. */
export async function probeSandbox(env: NodeJS.ProcessEnv = process.env): Promise<SandboxAvailability> {
  const allowUnsandboxed = truthy(envSetting(env, 'FORKFLOW_ALLOW_UNSANDBOXED'));
  const unavailable = (reason: string, optOut = allowUnsandboxed): SandboxAvailability => ({ available: false, reason, allowUnsandboxed: optOut });
  if (envSetting(env, 'FORKFLOW_SANDBOX') === 'off') return unavailable('turned off by FORKFLOW_SANDBOX=off', true);
  if (process.platform !== 'linux') return unavailable(`the sandbox uses Linux namespaces (bubblewrap); this is ${process.platform}`);
  const path = envSetting(env, 'FORKFLOW_BWRAP') || findOnPath('bwrap', env);
  if (!path) return unavailable('bubblewrap (bwrap) is not installed; run scripts/install-bubblewrap.sh or install the `bubblewrap` package');
  const version = await run(path, ['--version']);
  if (version.code !== 0) return unavailable(`${path} --version failed: ${version.error ?? version.output.trim()}`);
  const processCap = detectProcessCap(env);
  const setpriv = processCap.kind === 'unprivileged-user' ? findOnPath('setpriv', env) : undefined;
  if (processCap.kind === 'unprivileged-user' && !setpriv) return unavailable('the worker runs as root without a pids cgroup of its own, and setpriv (util-linux) is missing to run calls as an unprivileged user');
  const root = process.cwd().startsWith('/') ? process.cwd() : '/';
  const spec = { root, writable: [], system: systemEntries(), tmpBytes: 1024 * 1024 };
  const trial = await run(path, [...bwrapArgs(spec), 'true']);
  if (trial.code !== 0) {
    const why = trial.error ?? (trial.output.trim() || `exit code ${trial.code ?? 'none (killed)'}`);
    return unavailable(`bubblewrap cannot create its namespaces here (${why}); user namespaces may be disabled, or bubblewrap is older than 0.8`);
  }
  if (setpriv) {
    const open = spec.system.filter((e) => e.kind === 'symlink' || othersMayEnter(e.source));
    const asNobody = await run(setpriv, ['--reuid=65534', '--regid=65534', '--clear-groups', '--', path, ...bwrapArgs({ ...spec, system: open, root: '/tmp' }), 'true']);
    if (asNobody.code !== 0) return unavailable(`bubblewrap cannot run as an unprivileged user here (${asNobody.output.trim() || asNobody.error || 'failed'}), and as root without a pids cgroup nothing would cap a call's processes`);
  }
  sweepCgroups(processCap);
  return { available: true, launcher: 'bubblewrap', path, version: version.output.trim().replace(/^bubblewrap\s+/, ''), processCap, ...(setpriv ? { setpriv } : {}) };
}

let cached: Promise<SandboxAvailability> | undefined;

/** The probe's answer for this process, computed on first use. */
export function sandboxAvailability(): Promise<SandboxAvailability> {
  cached ??= probeSandbox();
  return cached;
}

const CAPS: Record<ProcessCap['kind'], string> = {
  cgroup: 'processes capped by a pids cgroup per call',
  rlimit: 'processes capped by RLIMIT_NPROC',
  'unprivileged-user': 'processes capped by RLIMIT_NPROC as user nobody for calls that write nothing; writing calls of a root worker are not capped (no pids cgroup)',
};

/** One line for logs and `forkflow` output. */
export function describeSandbox(a: SandboxAvailability): string {
  if (a.available) return `Bash sandbox: bubblewrap ${a.version} (${a.path}); every fork's shell commands run inside it; ${CAPS[a.processCap.kind]}`;
  return a.allowUnsandboxed
    ? `Bash sandbox OFF: ${a.reason}. Explicit opt-out: writing forks run shell commands unsandboxed (containment: none), read-only forks behind the command classifier alone (containment: classifier-only); forks with requireSandbox refuse Bash`
    : `Bash sandbox unavailable: ${a.reason}. Bash calls are refused; install bubblewrap, or start the worker with FORKFLOW_ALLOW_UNSANDBOXED=1 (--allow-unsandboxed) to run them without it`;
}

/**
 * A warning for the worker's start, or undefined: where a root worker has no pids cgroup, calls
 * that write nothing run as user nobody, and Bash is refused in a workspace nobody cannot enter
 * (one under `/root` or another private folder). Said once at start rather than found at a
 * fork's first Bash call.
 */
export function workspaceReachWarning(a: SandboxAvailability, roots: readonly string[]): string | undefined {
  if (!a.available || a.processCap.kind !== 'unprivileged-user') return undefined;
  const unreachable = roots.filter((root) => !othersMayEnter(root));
  if (unreachable.length === 0) return undefined;
  return `Bash sandbox: user nobody cannot enter the workspace ${unreachable.join(', ')}: this worker runs as root without a pids cgroup, so Bash calls that write nothing (read-only and plan forks) run as nobody and will be refused there. Make it reachable (chmod o+rx on it and o+x on its parents), run the worker as a non-root user, or give it a pids cgroup`;
}
