/**
 * Mutual TLS for the self-hosted stack (`FORKFLOW_STACK_MTLS=1 npm run stack`): a CA of the
 * stack's own and the certificates signed by it, made once with `openssl` into `<stack>/tls`
 * (0700; keys 0600), so that only who can read a client key — the operator's user — reaches
 * the Temporal frontend. Without it, any local user who can open 127.0.0.1:7233 can start a
 * `forkWorkflow` (docs/guides/security-model.md).
 *
 * - `server`: the frontend's and the internal services' certificate (they also present it to
 *   each other as clients);
 * - `system`: Temporal's own system worker, a client of the frontend;
 * - `client`: forkflow's workers, clients and CLI (TEMPORAL_TLS_* of @temporalio/envconfig);
 * - `ui`: the Web UI server, a client of the frontend.
 * Certificates are valid for a year; delete the folder to make new ones. The CA's key is not
 * kept: nothing else is ever signed by it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { envSetting } from '../../src/shared/wire/env-settings';
import { join } from 'node:path';

/** The name clients check the frontend's certificate against (TEMPORAL_TLS_SERVER_NAME). */
export const STACK_TLS_SERVER_NAME = 'localhost';

export interface CertPair {
  cert: string;
  key: string;
}

/** Where the stack's TLS files are. */
export interface StackTls {
  dir: string;
  ca: string;
  server: CertPair;
  system: CertPair;
  client: CertPair;
  ui: CertPair;
  serverName: string;
}

const pair = (dir: string, name: string): CertPair => ({ cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) });

/** The files of a stack's TLS folder (they need not exist yet). */
export function stackTlsFiles(stackDir: string): StackTls {
  const dir = join(stackDir, 'tls');
  return { dir, ca: join(dir, 'ca.pem'), server: pair(dir, 'server'), system: pair(dir, 'system'), client: pair(dir, 'client'), ui: pair(dir, 'ui'), serverName: STACK_TLS_SERVER_NAME };
}

/** The environment a forkflow worker or client needs to reach the stack over mTLS (@temporalio/envconfig). */
export function clientTlsEnv(tls: StackTls): Record<string, string> {
  return {
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: tls.ca,
    TEMPORAL_TLS_CLIENT_CERT_PATH: tls.client.cert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: tls.client.key,
    TEMPORAL_TLS_SERVER_NAME: tls.serverName,
  };
}

/** The generator docker-compose.mtls.yml runs too (one recipe for both stacks). */
export const MAKE_CERTS = join(__dirname, 'make-certs.sh');

/**
 * The stack's TLS files, made when missing (a CA and four certificates, make-certs.sh).
 * Idempotent: an existing set is kept, so clients configured with it keep working across restarts.
 */
export function ensureStackTls(stackDir: string): StackTls {
  const tls = stackTlsFiles(stackDir);
  mkdirSync(stackDir, { recursive: true });
  const r = spawnSync('sh', [MAKE_CERTS, tls.dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`making the stack's certificates failed (is openssl installed?): ${(r.stderr || r.error?.message || '').trim().slice(-1000)}`);
  return tls;
}

/** Whether the environment asks for mTLS (FORKFLOW_STACK_MTLS=1). */
export function mtlsRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(1|true|yes|on)$/i.test(envSetting(env, 'FORKFLOW_STACK_MTLS')?.trim() ?? '');
}
