/**
 * The web view's input checks (src/cli/web): every query parameter parsed by zod before the
 * server reads it, the resume point from Last-Event-ID, static files from a fixed table
 * (no path reaches another file), read-only methods, the token every endpoint wants (and
 * the sign-in that turns it into a session cookie), and the Host check that keeps a page
 * on another origin from reading agents through DNS rebinding. Over real HTTP; the client
 * behind the server points at a closed port and is never reached, because every request
 * here is refused before the server asks Temporal anything.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ForkflowClient } from '../../../src/client';
import { agentQuerySchema, agentsQuerySchema, parseQuery, resumeSeq, streamQuerySchema } from '../../../src/cli/web/params';
import { startWebView, WebViewConfigError, type WebView } from '../../../src/cli/web/server';
import { SCRIPTS, WEB_DIR } from '../../../src/cli/web/static';
import { hostAllowed, hostNamesFor } from '../../../src/payloads/endpoint-guard';
import { forkflowConnectionOptions } from '../../../src/client/connection-options';

const q = (s: string) => new URLSearchParams(s);

describe('query parameters', () => {
  test('agents: scope and limit have defaults; anything else is refused with the field named', () => {
    expect(parseQuery(agentsQuerySchema, q(''))).toEqual({ ok: true, value: { scope: 'running', limit: 200 } });
    expect(parseQuery(agentsQuerySchema, q('scope=all&limit=5'))).toEqual({ ok: true, value: { scope: 'all', limit: 5 } });
    expect(parseQuery(agentsQuerySchema, q('scope=done'))).toEqual({ ok: false, error: 'scope: must be one of "running", "all"' });
    for (const limit of ['0', '501', '-1', '1e3', '2.5', '', ' 7', '99999']) {
      const parsed = parseQuery(agentsQuerySchema, q(`limit=${encodeURIComponent(limit)}`));
      expect(parsed.ok ? limit : parsed.error).toMatch(/^limit: must be/);
    }
    expect(parseQuery(agentsQuerySchema, q('order=desc'))).toEqual({ ok: false, error: 'query: has fields forkflow does not accept here: order' });
    expect(parseQuery(agentsQuerySchema, q('scope=all&scope=running'))).toEqual({ ok: false, error: 'scope: given more than once' });
  });

  test('agent ids: bounded and printable, without quotes or backslashes; otherwise data, never a path', () => {
    for (const id of ['fork-review-3f2a9c1d', 'tree-root/child-2', '../../etc/passwd', 'agent with spaces', 'ünïcode-агент']) {
      expect(parseQuery(agentQuerySchema, q(`agent=${encodeURIComponent(id)}`))).toEqual({ ok: true, value: { agent: id } });
    }
    const refused = (id: string) => {
      const parsed = parseQuery(agentQuerySchema, q(`agent=${encodeURIComponent(id)}`));
      return parsed.ok ? `accepted ${JSON.stringify(id)}` : parsed.error;
    };
    expect(refused('')).toBe('agent: must not be empty');
    expect(refused('a'.repeat(201))).toBe('agent: must be at most 200 characters long');
    expect(refused('a'.repeat(200))).toMatch(/^accepted/);
    for (const id of ["x' OR WorkflowType != '", 'x"', 'x\\', 'line\nbreak', 'nul\u0000', 'del\u007f', 'c1\u0085', 'tab\t']) {
      expect(refused(id)).toBe('agent: must be printable, without quotes or backslashes');
    }
    expect(parseQuery(agentQuerySchema, q(''))).toEqual({ ok: false, error: 'agent: is missing' });
  });

  test('stream: fromSeq is a whole number; Last-Event-ID resumes right after the event it names', () => {
    const query = parseQuery(streamQuerySchema, q('agent=a&fromSeq=12'));
    expect(query).toEqual({ ok: true, value: { agent: 'a', fromSeq: 12 } });
    if (!query.ok) return;
    expect(resumeSeq(query.value, undefined)).toEqual({ ok: true, value: 12 });
    expect(resumeSeq({ agent: 'a' }, undefined)).toEqual({ ok: true, value: undefined });
    // The browser's header wins over the page's first fromSeq: it is what the page already has.
    expect(resumeSeq(query.value, '41')).toEqual({ ok: true, value: 42 });
    expect(resumeSeq(query.value, '0')).toEqual({ ok: true, value: 1 });
    for (const bad of ['', 'x', '-1', '1.5', '1e3', '12 ', ['1', '2']]) {
      expect(resumeSeq(query.value, bad)).toEqual({ ok: false, error: 'Last-Event-ID: must be the whole-number seq of an event' });
    }
    for (const fromSeq of ['-1', 'x', '1.0', '']) {
      expect(parseQuery(streamQuerySchema, q(`agent=a&fromSeq=${fromSeq}`))).toEqual({ ok: false, error: 'fromSeq: must be a whole number from 0' });
    }
  });

  test('Host: only the server’s own names, on loopback and beyond; names an operator adds', () => {
    const loopback = hostNamesFor('127.0.0.1', 8235);
    expect(hostAllowed('127.0.0.1:8235', loopback)).toBe(true);
    expect(hostAllowed('LOCALHOST:8235', loopback)).toBe(true);
    expect(hostAllowed('[::1]:8235', hostNamesFor('::1', 8235))).toBe(true);
    expect(hostAllowed('localhost:8236', loopback)).toBe(false);
    expect(hostAllowed('attacker.example:8235', loopback)).toBe(false);
    expect(hostAllowed(undefined, loopback)).toBe(false);
    // Every interface: this machine's addresses, not any name a page rebinds to them.
    const everywhere = hostNamesFor('0.0.0.0', 8235);
    expect(hostAllowed('127.0.0.1:8235', everywhere)).toBe(true);
    expect(hostAllowed('ops.internal:8235', everywhere)).toBe(false);
    expect(hostAllowed('ops.internal:8235', hostNamesFor('0.0.0.0', 8235, ['ops.internal']))).toBe(true);
    expect(hostAllowed('ops.internal', hostNamesFor('0.0.0.0', 8235, ['ops.internal']))).toBe(false);
  });
});

const TOKEN = 'web-view-test-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };

describe('the server refuses bad requests before asking Temporal', () => {
  let connection: Connection;
  let view: WebView;
  let port: number;
  beforeAll(async () => {
    // Nothing listens on port 1: a request that got past validation would fail, not pass.
    connection = Connection.lazy(forkflowConnectionOptions({ address: '127.0.0.1:1' }));
    view = await startWebView({ forkflow: new ForkflowClient(new Client({ connection }), { outage: { deadlineMs: 0 } }), token: TOKEN });
    port = Number(new URL(view.url).port);
  });
  afterAll(async () => {
    await view?.close();
    await connection?.close();
  });

  /** A raw request: the path goes on the wire exactly as written (fetch would normalise `..`). */
  function get(path: string, opts: { method?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  test('the page and its files (a style sheet, ES modules by what they draw), with a policy that allows no inline or foreign code', async () => {
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<script type="module" src="/app.js"></script>');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    for (const script of SCRIPTS) {
      const res = await get(`/${script}`);
      expect([script, res.status, res.headers['content-type']]).toEqual([script, 200, 'text/javascript; charset=utf-8']);
    }
    expect((await get('/style.css')).headers['content-type']).toBe('text/css; charset=utf-8');
  });

  test('every module the page imports is in the table, and every one in the table exists', () => {
    const imported = new Set(['app.js']);
    for (const script of SCRIPTS) {
      const text = readFileSync(join(WEB_DIR, script), 'utf8');
      for (const m of text.matchAll(/^import [^;]+ from '\.\/([\w-]+\.js)';$/gm)) imported.add(m[1]!);
    }
    expect([...imported].sort()).toEqual([...SCRIPTS].sort());
  });

  test('no request path names a file outside the table', async () => {
    for (const path of ['/../package.json', '/%2e%2e/package.json', '/..%2fpackage.json', '/web/app.js', '//etc/passwd', '/app.js/../../package.json', '/style.css/%2e%2e/%2e%2e/README.md', '/index.html%00', '/APP.JS', '/constructor', '/__proto__']) {
      const res = await get(path);
      expect([path, res.status, res.body]).toEqual([path, 404, '{"error":"not found"}']);
    }
    expect((await get('/?agent=x')).status).toBe(400);
  });

  test('every endpoint wants the token: none, a wrong one or a forged cookie is 401; the page itself holds no data', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-the-token-at-all' }, { cookie: `forkflow_web_${port}=${'0'.repeat(64)}` }, { cookie: `forkflow_web_${port}=${TOKEN}` }] as Record<string, string>[]) {
      for (const path of ['/api/agents', '/api/status?agent=a', '/api/tree?root=a', '/api/graph?agent=a', '/api/timeline?agent=a', '/api/stream?agent=a']) {
        const res = await get(path, { headers });
        expect([path, res.status]).toEqual([path, 401]);
        expect((JSON.parse(res.body) as { error: string }).error).toMatch(/not signed in/);
      }
    }
    expect((await get('/')).status).toBe(200);
    await expect(startWebView({ forkflow: new ForkflowClient(new Client({ connection })) })).rejects.toThrow(WebViewConfigError);
  });

  test('signing in: the right token sets a session cookie and leaves the URL; a wrong one does not', async () => {
    expect((await get('/?token=wrong-wrong-wrong-wrong')).status).toBe(401);
    expect(view.loginUrl).toBe(`${view.url}/?token=${TOKEN}`);
    const signIn = await get(`/?token=${TOKEN}`);
    expect(signIn.status).toBe(303);
    expect(signIn.headers.location).toBe('/');
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    expect(cookie).toMatch(new RegExp(`^forkflow_web_${port}=[0-9a-f]{64}$`));
    expect(cookie).not.toContain(TOKEN);
    expect(String(signIn.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Strict/);
    // Past the sign-in check: validation answers (the client behind it is never reached).
    const res = await get('/api/agents?scope=everything', { headers: { cookie } });
    expect([res.status, JSON.parse(res.body)]).toEqual([400, { error: 'scope: must be one of "running", "all"' }]);
  });

  test('read-only: GET, and HEAD for the page’s files', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD']) expect((await get('/api/agents', { method })).status).toBe(405);
    expect((await get('/', { method: 'POST' })).status).toBe(405);
    const head = await get('/app.js', { method: 'HEAD' });
    expect([head.status, head.body]).toEqual([200, '']);
  });

  test('a Host that is not this server is refused (DNS rebinding), token or not', async () => {
    const res = await get('/api/agents', { headers: { host: `attacker.example:${port}`, ...AUTH } });
    expect(res.status).toBe(421);
    expect((await get('/', { headers: { host: `localhost:${port}` } })).status).toBe(200);
  });

  test.each([
    ['/api/agents?scope=everything', 'scope: must be one of "running", "all"'],
    ['/api/agents?limit=100000', 'limit: must be a whole number from 1 to 500'],
    ['/api/agents?query=ExecutionStatus%3D%27Failed%27', 'query: has fields forkflow does not accept here: query'],
    ['/api/status', 'agent: is missing'],
    ['/api/status?agent=a&agent=b', 'agent: given more than once'],
    [`/api/status?agent=${'x'.repeat(201)}`, 'agent: must be at most 200 characters long'],
    ['/api/tree?root=x%27%20OR%20%27a%27%3D%27a', 'root: must be printable, without quotes or backslashes'],
    ['/api/tree?root=x%5C', 'root: must be printable, without quotes or backslashes'],
    ['/api/graph?agent=x%27%20OR%20%27a%27%3D%27a', 'agent: must be printable, without quotes or backslashes'],
    ['/api/graph?root=r', 'agent: is missing; query: has fields forkflow does not accept here: root'],
    ['/api/timeline?agent=a&runId=r', 'query: has fields forkflow does not accept here: runId'],
    [`/api/timeline?agent=${'x'.repeat(201)}`, 'agent: must be at most 200 characters long'],
    ['/api/stream?agent=%0D%0Aid%3A%209', 'agent: must be printable, without quotes or backslashes'],
    ['/api/stream?agent=a&fromSeq=-3', 'fromSeq: must be a whole number from 0'],
  ])('%s → 400 %s', async (path, error) => {
    const res = await get(path, { headers: AUTH });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(res.body)).toEqual({ error });
  });

  test('a stream whose Last-Event-ID is not a seq is refused, not replayed from the start', async () => {
    const res = await get('/api/stream?agent=a', { headers: { 'last-event-id': 'abc', ...AUTH } });
    expect([res.status, JSON.parse(res.body)]).toEqual([400, { error: 'Last-Event-ID: must be the whole-number seq of an event' }]);
  });
});
