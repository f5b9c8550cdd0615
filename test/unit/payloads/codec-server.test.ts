/**
 * The codec server over real HTTP: the protocol's JSON (base64 bytes), encode/decode round
 * trips, plain payloads passing through, CORS for the Web UI's origin only, who may ask (a
 * token by default, as a bearer header or in the path; a Host that names the server; a
 * browser origin that is allowed), clear 4xx answers to bad input, and external-storage
 * references resolved before decryption (with an in-memory driver standing in for the
 * storage module's drivers).
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { defaultPayloadConverter, ExternalStorage, StorageDriverClaim, type Payload, type StorageDriver } from '@temporalio/common';
import { encodeReferencePayload } from '@temporalio/common/lib/internal-non-workflow';
import { EncryptionCodec } from '../../../src/payloads/codec';
import { CodecServerConfigError, startCodecServer, type CodecServer } from '../../../src/payloads/codec-server';

const UI = 'http://localhost:8233';
const codec = new EncryptionCodec({ keys: [{ id: 'k1', key: randomBytes(32) }] });
const toJson = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});
const fromJson = (p: { metadata: Record<string, string>; data: string }): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data, 'base64'),
});

/** A storage driver in memory: what a real one does, minus the disk. */
class MemoryDriver implements StorageDriver {
  readonly name = 'memory';
  readonly type = 'memory';
  readonly blobs = new Map<string, Payload>();
  store(_ctx: unknown, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    return Promise.resolve(
      payloads.map((p) => {
        const key = `blob-${this.blobs.size}`;
        this.blobs.set(key, p);
        return new StorageDriverClaim({ key });
      }),
    );
  }
  retrieve(_ctx: unknown, claims: StorageDriverClaim[]): Promise<Payload[]> {
    return Promise.resolve(claims.map((c) => this.blobs.get(c.claimData.key!)!));
  }
}
const driver = new MemoryDriver();
const TOKEN = 's3cret-token-0123456789';
const dataConverter = { payloadCodecs: [codec], externalStorage: new ExternalStorage({ drivers: [driver] }) };

let server: CodecServer;
let guarded: CodecServer;
beforeAll(async () => {
  // The protocol tests talk to a server without a token; `guarded` is the default kind.
  server = await startCodecServer({ dataConverter, allowedOrigins: [UI], noAuth: true });
  guarded = await startCodecServer({ dataConverter, token: TOKEN, allowedOrigins: [UI] });
});
afterAll(async () => {
  await server?.close();
  await guarded?.close();
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}, base = server.url) {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

test('/encode then /decode returns the original payloads; plain ones pass /decode unchanged', async () => {
  const value = { prompt: 'MARKER-prompt' };
  const encoded = await post('/encode', { payloads: [toJson(defaultPayloadConverter.toPayload(value))] });
  expect(encoded.status).toBe(200);
  const wire = JSON.parse(encoded.text) as { payloads: { metadata: Record<string, string>; data: string }[] };
  expect(Buffer.from(wire.payloads[0]!.data, 'base64').toString('latin1')).not.toContain('MARKER');
  expect(Buffer.from(wire.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
  const fromCli = toJson(defaultPayloadConverter.toPayload('plain from the temporal CLI'));
  // The CLI's templated form: /{namespace}/decode.
  const decoded = await post('/default/decode', { payloads: [...wire.payloads, fromCli] }, { 'X-Namespace': 'default' });
  expect(decoded.status).toBe(200);
  const payloads = (JSON.parse(decoded.text) as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads.map(fromJson);
  expect(payloads.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([value, 'plain from the temporal CLI']);
});

test('/decode resolves an external-storage reference, then decrypts what was stored', async () => {
  const [encrypted] = await codec.encode([defaultPayloadConverter.toPayload({ big: 'MARKER-stored' })]);
  const [claim] = await driver.store({}, [encrypted!]);
  const reference = encodeReferencePayload({ driverName: 'memory', claim: claim!, sizeBytes: encrypted!.data!.length });
  const res = await post('/decode', { payloads: [toJson(reference)] });
  expect(res.status).toBe(200);
  const [payload] = (JSON.parse(res.text) as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads.map(fromJson);
  expect(defaultPayloadConverter.fromPayload(payload!)).toEqual({ big: 'MARKER-stored' });
});

test("CORS: the preflight allows the UI's origin and headers; another origin is refused", async () => {
  const preflight = await fetch(`${server.url}/decode`, { method: 'OPTIONS', headers: { Origin: UI, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,x-namespace,authorization' } });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get('access-control-allow-origin')).toBe(UI);
  expect(preflight.headers.get('access-control-allow-headers')).toBe('Content-Type, X-Namespace, Authorization');
  expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
  const ok = await post('/decode', { payloads: [] }, { Origin: UI });
  expect(ok.headers.get('access-control-allow-origin')).toBe(UI);
  const other = await post('/decode', { payloads: [] }, { Origin: 'http://evil.example' });
  expect(other.status).toBe(403);
  expect(other.headers.get('access-control-allow-origin')).toBeNull();
});

describe('who may ask', () => {
  const secret = defaultPayloadConverter.toPayload({ secret: 'MARKER-secret' });
  let encrypted: ReturnType<typeof toJson>;
  beforeAll(async () => {
    encrypted = toJson((await codec.encode([secret]))[0]!);
  });
  const decodes = (text: string) => text.includes(Buffer.from(JSON.stringify({ secret: 'MARKER-secret' })).toString('base64'));

  test('a token is required by default: none, or a wrong one, is 401 and decrypts nothing', async () => {
    const attempts: Record<string, string>[] = [{}, { Authorization: 'Bearer nope-nope-nope-nope' }, { Authorization: `Basic ${TOKEN}` }];
    for (const headers of attempts) {
      const res = await post('/decode', { payloads: [encrypted] }, headers, guarded.url);
      expect(res.status).toBe(401);
      expect(decodes(res.text)).toBe(false);
    }
    expect((await post(`/t/not-the-token-at-all/decode`, { payloads: [encrypted] }, {}, guarded.url)).status).toBe(401);
    await expect(startCodecServer({ dataConverter })).rejects.toThrow(CodecServerConfigError);
    await expect(startCodecServer({ dataConverter, token: 'short' })).rejects.toThrow(/at least 16/);
  });

  test('the right token, as a bearer header or in the endpoint path (the Web UI form), decrypts', async () => {
    const byHeader = await post('/default/decode', { payloads: [encrypted] }, { Authorization: `Bearer ${TOKEN}` }, guarded.url);
    expect(byHeader.status).toBe(200);
    expect(decodes(byHeader.text)).toBe(true);
    expect(guarded.endpoint).toBe(`${guarded.url}/t/${TOKEN}`);
    // What the Web UI does: POST <endpoint>/decode from its own origin, after a preflight.
    const preflight = await fetch(`${guarded.endpoint}/decode`, { method: 'OPTIONS', headers: { Origin: UI, 'Access-Control-Request-Method': 'POST' } });
    expect(preflight.status).toBe(204);
    const byPath = await post('/decode', { payloads: [encrypted] }, { Origin: UI, 'X-Namespace': 'default' }, guarded.endpoint);
    expect(byPath.status).toBe(200);
    expect(decodes(byPath.text)).toBe(true);
  });

  test('a foreign Host (a rebound DNS name) is 421 even with the token; its own names are fine', async () => {
    const port = new URL(guarded.url).port;
    for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1:${Number(port) + 1}`]) {
      const res = await rawPost(guarded.url, '/decode', host, { Authorization: `Bearer ${TOKEN}` }, { payloads: [encrypted] });
      expect(res.status).toBe(421);
      expect(decodes(res.text)).toBe(false);
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) expect((await rawPost(guarded.url, '/decode', host, { Authorization: `Bearer ${TOKEN}` }, { payloads: [] })).status).toBe(200);
  });
});

/** A POST with a Host header of the caller's choosing (fetch does not let a caller set one). */
function rawPost(base: string, path: string, host: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; text: string }> {
  const url = new URL(base);
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'POST', headers: { ...headers, Host: host, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

test.each([
  ['not JSON', '{payloads', /^body is not JSON/],
  ['no payloads', {}, /bad request body: payloads/],
  ['data not base64', { payloads: [{ metadata: {}, data: 'not base64!' }] }, /payloads\[0\]\.data: must be base64/],
  ['a metadata value not a string', { payloads: [{ metadata: { encoding: 5 } }] }, /payloads\[0\]\.metadata\.encoding/],
])('%s: 400 with what is wrong', async (_what, body, message) => {
  const res = await post('/decode', body);
  expect(res.status).toBe(400);
  expect(res.text).toMatch(message);
});

test('an undecryptable payload is a 400 naming the problem; wrong paths and methods are 404 and 405', async () => {
  const [encrypted] = await codec.encode([defaultPayloadConverter.toPayload('x')]);
  const bad = toJson({ ...encrypted!, data: Buffer.alloc(40) });
  const res = await post('/decode', { payloads: [bad] });
  expect(res.status).toBe(400);
  expect(res.text).toMatch(/failed authentication/);
  expect((await post('/decrypt', { payloads: [] })).status).toBe(404);
  expect((await fetch(`${server.url}/decode`)).status).toBe(405);
});
