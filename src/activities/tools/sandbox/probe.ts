/**
 * Finding out, once per worker process, whether the OS sandbox works here: bubblewrap
 * must be installed and the kernel must let it create namespaces (no user namespaces,
 * a locked-down container or another OS all make it fail). The answer is cached; the
 * worker logs it at start and every sandboxed Bash call uses it.
 *
 * `FORKFLOW_SANDBOX=off` turns the sandbox off on purpose (the worker then reports
 * `classifier-only`, exactly as when it cannot start); `FORKFLOW_BWRAP` names the
 * bubblewrap binary when it is not on PATH.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { bwrapArgs } from './bwrap-args';

/** Whether Bash calls that need the sandbox can have it on this worker. */
export type SandboxAvailability =
  | { available: true; launcher: 'bubblewrap'; path: string; version: string }
  | { available: false; reason: string };

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

/** Checks the sandbox for real: a `true` run inside exactly the layout Bash calls get. */
export async function probeSandbox(env: NodeJS.ProcessEnv = process.env): Promise<SandboxAvailability> {
  if (process.platform !== 'linux') return { available: false, reason: `the sandbox uses Linux namespaces (bubblewrap); this is ${process.platform}` };
  if (env.FORKFLOW_SANDBOX === 'off') return { available: false, reason: 'turned off by FORKFLOW_SANDBOX=off' };
  const path = env.FORKFLOW_BWRAP || findOnPath('bwrap', env);
  if (!path) return { available: false, reason: 'bubblewrap (bwrap) is not installed; run scripts/install-bubblewrap.sh or install the `bubblewrap` package' };
  const version = await run(path, ['--version']);
  if (version.code !== 0) return { available: false, reason: `${path} --version failed: ${version.error ?? version.output.trim()}` };
  const root = process.cwd().startsWith('/') ? process.cwd() : '/';
  const trial = await run(path, [...bwrapArgs({ root, writable: [] }), 'true']);
  if (trial.code !== 0) {
    const why = trial.error ?? (trial.output.trim() || `exit code ${trial.code ?? 'none (killed)'}`);
    return { available: false, reason: `bubblewrap cannot create its namespaces here (${why}); user namespaces may be disabled` };
  }
  return { available: true, launcher: 'bubblewrap', path, version: version.output.trim().replace(/^bubblewrap\s+/, '') };
}

let cached: Promise<SandboxAvailability> | undefined;

/** The probe's answer for this process, computed on first use. */
export function sandboxAvailability(): Promise<SandboxAvailability> {
  cached ??= probeSandbox();
  return cached;
}

/** One line for logs and `forkflow` output. */
export function describeSandbox(a: SandboxAvailability): string {
  return a.available
    ? `Bash sandbox: bubblewrap ${a.version} (${a.path}); read-only and memory forks run shell commands inside it`
    : `Bash sandbox unavailable: ${a.reason}. Read-only forks are contained by the command classifier only (containment: classifier-only); forks with requireSandbox refuse Bash`;
}
