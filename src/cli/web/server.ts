/**
 * The web view `forkflow serve` runs: a static page (web/) and the endpoints it calls.
 *
 *   GET /api/agents?scope=running|all&limit=N   agents from visibility (the page builds the tree)
 *   GET /api/status?agent=ID                    one agent's live status (the `status` query)
 *   GET /api/tree?root=ID                       a tree's members, counts and ledger usage
 *   GET /api/stream?agent=ID[&fromSeq=N]        Server-Sent Events: the agent's stream events,
 *                                               each with `id: <seq>`; a reconnect resumes
 *                                               after its `Last-Event-ID`
 *
 * Read-only: GET only (and HEAD for the page's files). Every query is parsed by src/cli/web/params.ts first. On a
 * loopback address the Host header must name this server, so a page elsewhere cannot read
 * agents through DNS rebinding.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorkflowNotFoundError } from '@temporalio/common';
import { isAgentNotFound, isTemporalUnavailable, type ForkflowClient, type ForkStatus } from '../../client';
import { agentQuerySchema, agentsQuerySchema, parseQuery, resumeSeq, streamQuerySchema, treeQuerySchema } from './params';
import { staticFile, WEB_DIR } from './static';
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
}

export interface WebView {
  readonly url: string;
  close(): Promise<void>;
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

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Host values this server answers to: on loopback, only names of itself (anti DNS rebinding). */
export function hostAllowed(host: string | undefined, ip: string, port: number): boolean {
  if (!LOOPBACK.test(ip)) return true;
  if (!host) return false;
  const names = [ip.includes(':') ? `[${ip}]` : ip, 'localhost', '127.0.0.1', '[::1]'];
  return names.some((name) => host === `${name}:${port}`);
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

async function route(req: IncomingMessage, res: ServerResponse, o: Required<Omit<WebViewOptions, 'ip' | 'port'>>, url: URL): Promise<void> {
  const f = o.forkflow;
  switch (url.pathname) {
    case '/api/agents': {
      const q = parsed(parseQuery(agentsQuerySchema, url.searchParams));
      const agents = await f.list({ ...(q.scope === 'running' ? { query: "ExecutionStatus = 'Running'" } : {}), limit: q.limit });
      return json(res, 200, { agents });
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
  const o = {
    forkflow: opts.forkflow,
    stream: opts.stream ?? ((agentId, s) => opts.forkflow.stream(agentId, s)),
    webDir: opts.webDir ?? WEB_DIR,
    keepAliveMs: opts.keepAliveMs ?? 15_000,
  } satisfies Required<Omit<WebViewOptions, 'ip' | 'port'>>;
  let port = 0;
  const server: Server = createServer((req, res) => {
    const handled = async () => {
      if (!hostAllowed(req.headers.host, ip, port)) throw new HttpError(421, 'this server answers only to its own address (Host header)');
      const url = new URL(req.url ?? '/', 'http://web-view');
      // HEAD for the page's files only: an endpoint's answer is its body (a stream has no end).
      const methods = url.pathname.startsWith('/api/') ? ['GET'] : ['GET', 'HEAD'];
      if (!methods.includes(req.method ?? '')) throw new HttpError(405, `${req.method} not allowed here: the web view is read-only (${methods.join(', ')})`);
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
  return {
    url: `http://${ip.includes(':') ? `[${ip}]` : ip}:${port}`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
