/**
 * The worker's own state, which no fork may see whatever its policy (view.ts): the blob
 * store, the response and gateway stores and their private state directory, the payload key
 * file, the dev server's database and the self-hosted stack's data, the stores' old shared
 * defaults under $TMPDIR, credential files in the tool folders the sandbox shows (view.ts),
 * and whatever the operator adds (FORKFLOW_PROTECTED_PATHS, colon-separated). Paths are
 * made canonical as far as they exist.
 */
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { canonicalish, toolSecrets } from './view';
import { envSetting } from '../../../shared/wire/env-settings';

/**
 * Where a worker keeps state of its own (the response store, the gateway's, their
 * authentication key): FORKFLOW_STATE_DIR, else `$XDG_STATE_HOME/forkflow`, else
 * `~/.local/state/forkflow`.
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const stateDir = envSetting(env, 'FORKFLOW_STATE_DIR');
  if (stateDir) return path.resolve(stateDir);
  const base = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : path.join(env.HOME || homedir(), '.local', 'state');
  return path.join(base, 'forkflow');
}

/** The protected paths for a worker started in `cwd` with `env`, canonical. */
export function protectedPaths(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string[] {
  const local = path.join(cwd, '.forkflow');
  const blobDir = envSetting(env, 'FORKFLOW_BLOB_DIR');
  const paths = [
    blobDir ? path.resolve(cwd, blobDir) : path.join(local, 'blobs'),
    defaultStateDir(env),
    envSetting(env, 'FORKFLOW_RESPONSE_DIR'),
    envSetting(env, 'FORKFLOW_GATEWAY_DIR'),
    envSetting(env, 'FORKFLOW_ENCRYPTION_KEY_FILE'),
    ...['dev.db', 'dev.db-wal', 'dev.db-shm', 'dev.db-journal', 'stack'].map((name) => path.join(local, name)),
    path.join(tmpdir(), 'forkflow-responses'),
    path.join(tmpdir(), 'forkflow-gateway'),
    ...(envSetting(env, 'FORKFLOW_PROTECTED_PATHS') ?? '').split(':'),
    ...toolSecrets(env),
  ];
  return [...new Set(paths.filter((p): p is string => typeof p === 'string' && p.trim() !== '').map((p) => canonicalish(path.resolve(cwd, p.trim()))))];
}
