/**
 * The web view `forkflow serve` runs: a static page (web/) and the endpoints it calls.
 *
 *   GET /api/agents?scope=running|all&limit=N   agents from visibility (the page builds the tree),
 *                                               running ones with live counters (live-rows.ts)
 *   GET /api/status?agent=ID                    one agent's live status (the `status` query)
 *   GET /api/tree?root=ID                       a tree's members, counts and ledger usage
 *   GET /api/stream?agent=ID[&fromSeq=N]        Server-Sent Events: the agent's stream events,
 *                                               each with `id: <seq>`; a reconnect resumes
 *                                               after its `Last-Event-ID`
 *
 * Read-only: GET only (and HEAD for the page's files). Every query is parsed by src/cli/web/params.ts first.
 *
 * Who may look (src/payloads/endpoint-guard.ts): the endpoints answer only a holder of the
 * server's token — as `Authorization: Bearer <token>`, or as the session cookie that
 * `GET /?token=<token>` (the URL `forkflow serve` prints) sets and then drops from the address
 * bar, which the page's requests and its EventSource then carry. The page's own files hold no
 * data and are served to anyone. The Host header must name this server, so a page elsewhere
 * cannot read agents through DNS rebinding. What an agent's content is shown at all is the
 * agent's to say: one with skipTranscript streams no text, input, result or reply, and its
 * status no last text (src/workflows/fork/live-stream.ts).
 */
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorkflowNotFoundError } from '@temporalio/common';
import { isAgentNotFound, isTemporalUnavailable, type ForkflowClient, type ForkStatus } from '../../client';
import { bearerOf, hostAllowed, hostNamesFor, tokenMatches, TOKEN_PATTERN } from '../../payloads/endpoint-guard';
import { agentQuerySchema, agentsQuerySchema, parseQuery, resumeSeq, streamQuerySchema, treeQuerySchema } from './params';
import { staticFile, WEB_DIR } from './static';
import { withLiveCounters } from './live-rows';
import { sseFrame, type StreamSource } from './sse';

/** `forkflow serve`'s port (the dev server's Web UI is on 8233, the codec server on 8234). */
export const DEFAULT_WEB_PORT = 8235;

export interface WebViewOptions {
  forkflow: ForkflowClient;
  /** Default 127.0.0.1. */
  ip?: string;
  /** Default: a free port. */
  port?: number;
  /** The agents' event streams (default: `forkflow.stream`). */
  stream?: StreamSource;
  /** Where the page's files are (default: the package's web/). */
  webDir?: string;
  /** How often the stream sends an SSE comment so idle connections stay open (default 15 s). */
  keepAliveMs?: number;
  /** What a viewer must hold (a bearer token, or the cookie `/?token=` sets). Required unless `noAuth`. */
  token?: string;
  /** No token (tests of the page alone). */
  noAuth?: boolean;
  /** More names it answers to in `Host` (a DNS name in front of it), besides its own addresses. */
  allowHosts?: string[];
}

export interface WebView {
  readonly url: string;
  /** The URL that signs a browser in (`/?token=…`); `url` without a token. */
  readonly loginUrl: string;
  close(): Promise<void>;
}

export class WebViewConfigError extends Error {
  override name = 'WebViewConfigError';
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

// The page loads only its own files and calls only this server; no frames, no inline code.
const SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/** The session cookie: named per port (cookies are per host, not per port), its value derived from the token. */
const cookieName = (port: number) => `forkflow_web_${port}`;
const sessionOf = (token: string) => createHmac('sha256', token).update('forkflow web view session v1').digest('hex');

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
}

function parsed<T>(result: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!result.ok) throw new HttpError(400, result.error);
  return result.value;
}

/** What the page shows of one agent: the status query without its per-agent tables. */
export function statusView(s: ForkStatus) {
  return {
    agentId: s.agentId,
    name: s.name,
    forkLabel: s.forkLabel,
    color: s.color,
    state: s.state,
    activity: s.activity,
    turns: s.turns,
    maxTurns: s.maxTurns,
    toolUses: s.toolUses,
    usage: s.usage,
    cacheHitRatio: s.cacheHitRatio,
    tree: s.tree,
    pendingMessages: s.pendingMessages,
    approvals: s.approvals.length,
    parentAgentId: s.parentAgentId,
    rootAgentId: s.rootAgentId,
    model: s.model,
    error: s.error,
    lastText: s.lastText,
    startedAt: s.startedAt,
  };
}

async function relay(req: IncomingMessage, res: ServerResponse, o: Required<Pick<WebViewOptions, 'forkflow' | 'stream' | 'keepAliveMs'>>, url: URL): Promise<void> {
  const query = parsed(parseQuery(streamQuerySchema, url.searchParams));
  const fromSeq = parsed(resumeSeq(query, req.headers['last-event-id']));
  // An unknown agent is a 404 before the stream opens: EventSource does not retry a non-200.
  try {
    await o.forkflow.temporal.workflow.getHandle(query.agent).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new HttpError(404, `no agent "${query.agent}"`);
    throw err;
  }
  res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
  res.write('retry: 1000\n\n');
  const closed = new AbortController();
  res.on('close', () => closed.abort());
  const keepAlive = setInterval(() => closed.signal.aborted || res.write(': keep-alive\n\n'), o.keepAliveMs);
  try {
    for await (const event of o.stream(query.agent, { ...(fromSeq !== undefined ? { fromSeq } : {}), signal: closed.signal })) {
      if (!res.write(sseFrame(event))) await once(res, 'drain', { signal: closed.signal });
    }
    // The run is over: the page stops its EventSource here rather than reconnecting.
    if (!closed.signal.aborted) res.write('event: end\ndata: {}\n\n');
  } catch (err) {
    if (!closed.signal.aborted) res.write(`event: stream-error\ndata: ${JSON.stringify({ message: (err as Error).message })}\n\n`);
  } finally {
    clearInterval(keepAlive);
    res.end();
  }
}

type Served = Required<Pick<WebViewOptions, 'forkflow' | 'stream' | 'webDir' | 'keepAliveMs'>>;

async function route(req: IncomingMessage, res: ServerResponse, o: Served, url: URL): Promise<void> {
  const f = o.forkflow;
  switch (url.pathname) {
    case '/api/agents': {
      const q = parsed(parseQuery(agentsQuerySchema, url.searchParams));
      const rows = await f.list({ ...(q.scope === 'running' ? { query: "ExecutionStatus = 'Running'" } : {}), limit: q.limit });
      return json(res, 200, { agents: await withLiveCounters(rows, (id) => f.status(id)) });
    }
    case '/api/status': {
      const q = parsed(parseQuery(agentQuerySchema, url.searchParams));
      return json(res, 200, statusView(await f.status(q.agent)));
    }
    case '/api/tree': {
      const q = parsed(parseQuery(treeQuerySchema, url.searchParams));
      return json(res, 200, await f.tree(q.root));
    }
    case '/api/stream':
      return relay(req, res, o, url);
  }
  if (url.search) throw new HttpError(400, 'the page takes no query parameters');
  const file = await staticFile(url.pathname, o.webDir);
  if (!file) throw new HttpError(404, 'not found');
  res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': file.type, 'Cache-Control': 'no-cache' });
  res.end(req.method === 'HEAD' ? undefined : file.body);
}

function statusOf(err: unknown): number {
  if (err instanceof HttpError) return err.status;
  if (isAgentNotFound(err)) return 404;
  if (isTemporalUnavailable(err)) return 503;
  return 500;
}

/** Starts the web view; resolves once it listens. */
export async function startWebView(opts: WebViewOptions): Promise<WebView> {
  const ip = opts.ip ?? '127.0.0.1';
  const token = opts.token;
  if (!opts.noAuth && !(token && TOKEN_PATTERN.test(token))) {
    throw new WebViewConfigError('The web view shows every agent it can reach: give it a token of at least 16 URL-safe characters (FORKFLOW_WEB_TOKEN, or let `forkflow serve` make one).');
  }
  const o: Served = {
    forkflow: opts.forkflow,
    stream: opts.stream ?? ((agentId, s) => opts.forkflow.stream(agentId, s)),
    webDir: opts.webDir ?? WEB_DIR,
    keepAliveMs: opts.keepAliveMs ?? 15_000,
  };
  let port = 0;
  let hosts: ReadonlySet<string> = new Set();
  const session = token ? sessionOf(token) : '';
  const signedIn = (req: IncomingMessage) => opts.noAuth || tokenMatches(bearerOf(req), token!) || tokenMatches(cookieOf(req, cookieName(port)), session);
  const server: Server = createServer((req, res) => {
    const handled = async () => {
      if (!hostAllowed(req.headers.host, hosts)) throw new HttpError(421, 'this server answers only to its own address (Host header)');
      const url = new URL(req.url ?? '/', 'http://web-view');
      // HEAD for the page's files only: an endpoint's answer is its body (a stream has no end).
      const methods = url.pathname.startsWith('/api/') ? ['GET'] : ['GET', 'HEAD'];
      if (!methods.includes(req.method ?? '')) throw new HttpError(405, `${req.method} not allowed here: the web view is read-only (${methods.join(', ')})`);
      // Signing in: the token becomes a session cookie, and leaves the address bar and history.
      if (url.pathname === '/' && url.searchParams.has('token') && !opts.noAuth) {
        if ([...url.searchParams.keys()].length !== 1 || !tokenMatches(url.searchParams.get('token') ?? undefined, token!)) throw new HttpError(401, 'wrong token: open the URL `forkflow serve` printed');
        res.writeHead(303, { ...SECURITY_HEADERS, Location: '/', 'Set-Cookie': `${cookieName(port)}=${session}; Path=/; HttpOnly; SameSite=Strict`, 'Cache-Control': 'no-store' });
        return void res.end();
      }
      if (url.pathname.startsWith('/api/') && !signedIn(req)) throw new HttpError(401, 'not signed in: open the URL `forkflow serve` printed (it carries the token), or send Authorization: Bearer <token>');
      await route(req, res, o, url);
    };
    handled().catch((err: unknown) => {
      if (res.headersSent) return void res.end();
      json(res, statusOf(err), { error: (err as Error).message });
    });
  });
  server.listen(opts.port ?? 0, ip);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => Promise.reject(err as Error))]);
  port = (server.address() as AddressInfo).port;
  hosts = hostNamesFor(ip, port, opts.allowHosts);
  const url = `http://${ip.includes(':') ? `[${ip}]` : ip}:${port}`;
  return {
    url,
    loginUrl: opts.noAuth ? url : `${url}/?token=${token!}`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
