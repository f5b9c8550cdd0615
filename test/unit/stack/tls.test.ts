/**
 * The self-hosted stack's mutual TLS switch (FORKFLOW_STACK_MTLS=1, scripts/stack/tls.ts):
 * the certificates `openssl` makes (private, chained to the stack's CA, each for its use),
 * that they do mutual TLS for real (a TLS server requiring a client certificate refuses a
 * client without one and accepts forkflow's), and the server and Web UI configs they go into.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type Server } from 'node:tls';
import { parse } from 'yaml';
import { portsFrom, serverConfig, uiConfig } from '../../../scripts/stack/config';
import { clientTlsEnv, ensureStackTls, mtlsRequested, STACK_TLS_SERVER_NAME, type StackTls } from '../../../scripts/stack/tls';

let dir: string;
let tls: StackTls;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'forkflow-stack-tls-'));
  tls = ensureStackTls(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const openssl = (...args: string[]) => execFileSync('openssl', args, { encoding: 'utf8' });

test('a CA and four certificates in <stack>/tls: the folder and keys private, each chained to the CA for its use, made once', () => {
  expect(statSync(tls.dir).mode & 0o777).toBe(0o700);
  for (const name of ['server', 'system', 'client', 'ui'] as const) {
    expect(statSync(tls[name].key).mode & 0o777).toBe(0o600);
    expect(openssl('verify', '-CAfile', tls.ca, tls[name].cert).trim()).toBe(`${tls[name].cert}: OK`);
  }
  expect(openssl('x509', '-in', tls.server.cert, '-noout', '-ext', 'extendedKeyUsage,subjectAltName')).toMatch(/TLS Web Server Authentication, TLS Web Client Authentication[\s\S]*DNS:localhost, DNS:temporal, IP Address:127\.0\.0\.1/);
  // The CA's key is gone once the certificates are issued: nothing else is signed by it.
  expect(existsSync(join(tls.dir, 'ca.key'))).toBe(false);
  expect(openssl('x509', '-in', tls.client.cert, '-noout', '-ext', 'extendedKeyUsage')).toMatch(/TLS Web Client Authentication\s*$/);
  const before = readFileSync(tls.client.cert, 'utf8');
  ensureStackTls(dir);
  expect(readFileSync(tls.client.cert, 'utf8')).toBe(before);
});

describe('mutual TLS with these certificates', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer({ cert: readFileSync(tls.server.cert), key: readFileSync(tls.server.key), ca: readFileSync(tls.ca), requestCert: true, rejectUnauthorized: true }, (s) => s.end('hello'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const hello = (client?: { cert: Buffer; key: Buffer }) =>
    new Promise<string>((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port, servername: STACK_TLS_SERVER_NAME, ca: readFileSync(tls.ca), ...client });
      let text = '';
      s.on('data', (d: Buffer) => (text += d.toString()));
      s.on('end', () => resolve(text));
      s.on('error', reject);
    });

  test('a client without a certificate is refused; forkflow\'s client certificate is accepted', async () => {
    await expect(hello()).rejects.toThrow();
    expect(await hello({ cert: readFileSync(tls.client.cert), key: readFileSync(tls.client.key) })).toBe('hello');
  });
});

test('the server config requires client certificates at the frontend and between services; the system worker has its own', () => {
  const config = parse(serverConfig({ ports: portsFrom(23000), dynamicConfigFile: '/x', tls })) as { global: { tls: Record<string, unknown> } };
  const server = { certFile: tls.server.cert, keyFile: tls.server.key, clientCaFiles: [tls.ca], requireClientAuth: true };
  const client = { serverName: 'localhost', rootCaFiles: [tls.ca] };
  expect(config.global.tls).toEqual({ frontend: { server, client }, internode: { server, client }, systemWorker: { certFile: tls.system.cert, keyFile: tls.system.key, client } });
  expect((parse(serverConfig({ ports: portsFrom(23000), dynamicConfigFile: '/x' })) as { global: object }).global).not.toHaveProperty('tls');
});

test('the Web UI connects with its own certificate and is read-only; without the switch it is as before', () => {
  expect(parse(uiConfig({ ports: portsFrom(23000), tls }))).toMatchObject({ tls: { caFile: tls.ca, certFile: tls.ui.cert, keyFile: tls.ui.key, serverName: 'localhost', enableHostVerification: true }, disableWriteActions: true });
  expect(parse(uiConfig({ ports: portsFrom(23000) }))).not.toHaveProperty('disableWriteActions');
});

test('the switch and what clients are told to set (@temporalio/envconfig variables)', () => {
  expect([mtlsRequested({ FORKFLOW_STACK_MTLS: '1' }), mtlsRequested({}), mtlsRequested({ FORKFLOW_STACK_MTLS: '0' })]).toEqual([true, false, false]);
  expect(clientTlsEnv(tls)).toEqual({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: tls.ca, TEMPORAL_TLS_CLIENT_CERT_PATH: tls.client.cert, TEMPORAL_TLS_CLIENT_KEY_PATH: tls.client.key, TEMPORAL_TLS_SERVER_NAME: 'localhost' });
});
