/**
 * `forkflow codec-server` as an operator runs it: a process that prints its URL, serves the
 * workers' keys, and stops on SIGTERM; with no keys, or bad ones, a one-line usage error.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { forkflowArgs, runForkflow } from '../../kit/processes';

const keys = `k1:${randomBytes(32).toString('base64')}`;

test('serves /encode with the keys from the environment, then stops on SIGTERM', async () => {
  const child = spawn(process.execPath, forkflowArgs(['codec-server', '--port', '0', '--allow-origin', 'http://localhost:9999']), {
    env: { ...process.env, FORKFLOW_ENCRYPTION_KEYS: keys, FORKFLOW_CODEC_SERVER_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /codec server: (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited early (${code}): ${out}`)));
  });
  expect(out).toContain('CORS origins: http://localhost:9999');
  const res = await fetch(`${url}/encode`, { method: 'POST', body: JSON.stringify({ payloads: [{ metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('"hi"').toString('base64') }] }) });
  const body = (await res.json()) as { payloads: { metadata: Record<string, string> }[] };
  expect(Buffer.from(body.payloads[0]!.metadata['encryption-key-id']!, 'base64').toString()).toBe('k1');
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  expect(code).toBe(0);
});

test.each([
  ['no keys and no external storage', { FORKFLOW_STORAGE: 'off' }, /Nothing to decode: set FORKFLOW_ENCRYPTION_KEYS/],
  ['a malformed key', { FORKFLOW_ENCRYPTION_KEYS: 'k1:short' }, /FORKFLOW_ENCRYPTION_KEYS .*32 bytes/],
])('%s: exit 2 with one line', async (_what, env, message) => {
  const result = await runForkflow(['codec-server', '--port', '0'], { FORKFLOW_ENCRYPTION_KEYS: '', FORKFLOW_ENCRYPTION_KEY_FILE: '', ...env });
  expect(result.status).toBe(2);
  expect(result.stderr).toMatch(message);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
});
