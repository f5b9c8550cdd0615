/**
 * `forkflow codec-server` as an operator runs it: a process that prints its URL, serves the
 * workers' keys, and stops on SIGTERM; with no keys, or bad ones, a one-line usage error.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { forkflowArgs, runForkflow } from '../../kit/processes';

const keys = `k1:${randomBytes(32).toString('base64')}`;

test('serves /encode with the keys from the environment and a token it makes, then stops on SIGTERM', async () => {
  const child = spawn(process.execPath, forkflowArgs(['codec-server', '--port', '0', '--allow-origin', 'http://localhost:9999']), {
    env: { ...process.env, FORKFLOW_ENCRYPTION_KEYS: keys, FORKFLOW_CODEC_SERVER_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const endpoint = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /Web UI: Settings → Codec Server → (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited early (${code}): ${out}`)));
  });
  expect(out).toContain('CORS origins: http://localhost:9999');
  expect(out).toContain('token required');
  // The token it made is in the printed endpoint; its bare URL refuses a caller without it.
  const url = /codec server: (http:\/\/\S+)/.exec(out)![1]!;
  const body = JSON.stringify({ payloads: [{ metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('"hi"').toString('base64') }] });
  expect((await fetch(`${url}/encode`, { method: 'POST', body })).status).toBe(401);
  const res = await fetch(`${endpoint}/encode`, { method: 'POST', body });
  const answer = (await res.json()) as { payloads: { metadata: Record<string, string> }[] };
  expect(Buffer.from(answer.payloads[0]!.metadata['encryption-key-id']!, 'base64').toString()).toBe('k1');
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  expect(code).toBe(0);
});

test('bound beyond loopback it warns loudly, and still requires its token', async () => {
  const child = spawn(process.execPath, forkflowArgs(['codec-server', '--ip', '0.0.0.0', '--port', '0']), {
    env: { ...process.env, FORKFLOW_ENCRYPTION_KEYS: keys, FORKFLOW_CODEC_SERVER_TOKEN: 'operator-chosen-token-42' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /codec server: (http:\/\/\S+)/.exec(out);
      if (m && out.includes('CLI:')) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited early (${code}): ${out}${err}`)));
  });
  expect(err).toMatch(/WARNING: the codec server listens on every interface/);
  expect(out).toContain('--codec-auth "Bearer operator-chosen-token-42"');
  const local = url.replace('0.0.0.0', '127.0.0.1');
  expect((await fetch(`${local}/decode`, { method: 'POST', body: '{"payloads":[]}' })).status).toBe(401);
  expect((await fetch(`${local}/decode`, { method: 'POST', body: '{"payloads":[]}', headers: { Authorization: 'Bearer operator-chosen-token-42' } })).status).toBe(200);
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
});

test.each([
  ['no keys and no external storage', { FORKFLOW_STORAGE: 'off' }, /Nothing to decode: set FORKFLOW_ENCRYPTION_KEYS/],
  ['a malformed key', { FORKFLOW_ENCRYPTION_KEYS: 'k1:short' }, /FORKFLOW_ENCRYPTION_KEYS .*32 bytes/],
  ['a token too short to guess hard', { FORKFLOW_ENCRYPTION_KEYS: keys, FORKFLOW_CODEC_SERVER_TOKEN: 'abc' }, /FORKFLOW_CODEC_SERVER_TOKEN must be at least 16/],
])('%s: exit 2 with one line', async (_what, env, message) => {
  const result = await runForkflow(['codec-server', '--port', '0'], { FORKFLOW_ENCRYPTION_KEYS: '', FORKFLOW_ENCRYPTION_KEY_FILE: '', ...env });
  expect(result.status).toBe(2);
  expect(result.stderr).toMatch(message);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
});
