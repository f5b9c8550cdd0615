/**
 * The real OS sandbox for tests that run commands in it: installs bubblewrap the way the
 * project does (scripts/install-bubblewrap.sh, idempotent) and probes it with the sandbox on,
 * failing loudly when it cannot start — a sandbox test must never pass without one.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { probeSandbox, type SandboxAvailability } from '../../src/activities/tools/sandbox';

const REPO = path.resolve(__dirname, '..', '..');

/** bubblewrap installed and probed; throws when the sandbox is not available here. */
export async function realSandbox(): Promise<Extract<SandboxAvailability, { available: true }>> {
  const install = spawnSync('bash', [path.join(REPO, 'scripts', 'install-bubblewrap.sh')], { stdio: 'inherit' });
  if (install.status !== 0) throw new Error(`scripts/install-bubblewrap.sh failed (exit ${install.status})`);
  const available = await probeSandbox({ ...process.env, FORKFLOW_SANDBOX: '' });
  if (!available.available || available.launcher !== 'bubblewrap') throw new Error(`no bubblewrap sandbox here: ${JSON.stringify(available)}`);
  return available;
}
