/**
 * docker-compose.yml is a valid, production-like stack: `docker compose config` (the real
 * Compose v2 CLI plugin, installed by scripts/install-compose.sh) accepts it, the worker is
 * built from this repository, ANTHROPIC_API_KEY is passed through, required, and published
 * ports listen on loopback unless FORKFLOW_BIND_ADDRESS says otherwise.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../kit/processes';

jest.setTimeout(15 * 60_000); // a cold machine builds the compose plugin first (minutes, once)

const root = join(__dirname, '..', '..');
const dockerConfig = join(root, '.tools', 'docker');

interface ComposeModel {
  services: Record<string, { image?: string; build?: { context: string }; environment?: Record<string, string>; depends_on?: Record<string, { condition: string }>; ports?: { host_ip?: string; published?: string | number; target: number }[] }>;
}

beforeAll(async () => {
  const installed = await run('bash', [join(root, 'scripts', 'install-compose.sh')], { timeoutMs: 14 * 60_000 });
  if (installed.status !== 0) throw new Error(`install-compose.sh failed: ${installed.stderr}`);
});

const compose = (env: NodeJS.ProcessEnv) => run('docker', ['compose', '-f', join(root, 'docker-compose.yml'), 'config', '--format', 'json'], { env: { ...env, DOCKER_CONFIG: dockerConfig } });

test('docker compose config accepts the stack: Temporal on PostgreSQL, the Web UI, the worker from this repo', async () => {
  const { ANTHROPIC_API_KEY: _ignored, ...env } = process.env;
  const r = await compose({ ...env, ANTHROPIC_API_KEY: 'sk-test-passthrough' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const model = JSON.parse(r.stdout) as ComposeModel;
  expect(Object.keys(model.services).sort()).toEqual(['forkflow-worker', 'postgresql', 'temporal', 'temporal-ui']);
  expect(model.services.temporal!.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgresql' });
  expect(model.services.temporal!.depends_on).toMatchObject({ postgresql: { condition: 'service_healthy' } });
  expect(model.services['temporal-ui']!.environment).toMatchObject({ TEMPORAL_ADDRESS: 'temporal:7233' });
  const worker = model.services['forkflow-worker']!;
  expect(worker.build?.context).toBe(root);
  expect(worker.environment).toMatchObject({ ANTHROPIC_API_KEY: 'sk-test-passthrough', TEMPORAL_ADDRESS: 'temporal:7233', FORKFLOW_TASK_QUEUE: 'forkflow' });
});

test('without ANTHROPIC_API_KEY the stack refuses to render, saying what to set', async () => {
  const { ANTHROPIC_API_KEY: _ignored, ...env } = process.env;
  const r = await compose(env);
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain('ANTHROPIC_API_KEY');
});

test('published ports listen on 127.0.0.1 unless FORKFLOW_BIND_ADDRESS names another address', async () => {
  const { ANTHROPIC_API_KEY: _ignored, FORKFLOW_BIND_ADDRESS: _bind, ...env } = process.env;
  const published = async (extra: NodeJS.ProcessEnv) => {
    const r = await compose({ ...env, ANTHROPIC_API_KEY: 'sk-test', ...extra });
    expect(r.status).toBe(0);
    const model = JSON.parse(r.stdout) as ComposeModel;
    return Object.entries(model.services).flatMap(([name, s]) => (s.ports ?? []).map((p) => `${name} ${p.host_ip ?? '(every interface)'}:${p.published}`)).sort();
  };
  expect(await published({})).toEqual(['forkflow-worker 127.0.0.1:9464', 'temporal 127.0.0.1:7233', 'temporal-ui 127.0.0.1:8080']);
  expect(await published({ FORKFLOW_BIND_ADDRESS: '0.0.0.0' })).toEqual(['forkflow-worker 0.0.0.0:9464', 'temporal 0.0.0.0:7233', 'temporal-ui 0.0.0.0:8080']);
});

test('docker-compose.mtls.yml, on top: the frontend requires client certificates of a CA made once into a volume only the stack mounts; worker and UI present their own; the UI is read-only', async () => {
  const { ANTHROPIC_API_KEY: _ignored, ...env } = process.env;
  const r = await run('docker', ['compose', '-f', join(root, 'docker-compose.yml'), '-f', join(root, 'docker-compose.mtls.yml'), 'config', '--format', 'json'], { env: { ...env, ANTHROPIC_API_KEY: 'sk-test', DOCKER_CONFIG: dockerConfig } });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  type Service = ComposeModel['services'][string] & { entrypoint?: string[]; volumes?: { source: string; target: string; read_only?: boolean }[] };
  const services = (JSON.parse(r.stdout) as { services: Record<string, Service> }).services;
  expect(services['tls-init']).toMatchObject({ entrypoint: ['sh', '/app/scripts/stack/make-certs.sh', '/tls', 'container'], volumes: [{ source: 'tls', target: '/tls' }] });
  for (const name of ['temporal', 'temporal-ui', 'forkflow-worker']) expect(services[name]!.volumes).toContainEqual(expect.objectContaining({ source: 'tls', target: '/tls', read_only: true }));
  expect(services.temporal!.depends_on).toMatchObject({ 'tls-init': { condition: 'service_completed_successfully' }, postgresql: { condition: 'service_healthy' } });
  expect(services.temporal!.environment).toMatchObject({ TEMPORAL_TLS_REQUIRE_CLIENT_AUTH: 'true', TEMPORAL_TLS_CLIENT1_CA_CERT: '/tls/ca.pem', TEMPORAL_TLS_FRONTEND_CERT: '/tls/server.pem' });
  expect(services['temporal-ui']!.environment).toMatchObject({ TEMPORAL_TLS_CERT: '/tls/ui.pem', TEMPORAL_TLS_ENABLE_HOST_VERIFICATION: 'true', TEMPORAL_DISABLE_WRITE_ACTIONS: 'true' });
  expect(services['forkflow-worker']!.environment).toMatchObject({ TEMPORAL_TLS_CLIENT_CERT_PATH: '/tls/client.pem', TEMPORAL_TLS_CLIENT_KEY_PATH: '/tls/client.key', TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/tls/ca.pem', TEMPORAL_TLS_SERVER_NAME: 'temporal' });
  // The generator the overlay runs is in the worker image, with openssl.
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  expect(dockerfile).toContain('COPY scripts/stack/make-certs.sh ./scripts/stack/make-certs.sh');
  expect(dockerfile).toMatch(/apt-get install[^\n]*\bopenssl\b/);
});
