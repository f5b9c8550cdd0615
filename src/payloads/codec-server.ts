/**
 * A codec server in Temporal's codec-server protocol, so the Web UI, `temporal workflow show
 * --codec-endpoint` and non-TypeScript tools read (and write) forkflow's encrypted payloads:
 *
 *   POST /encode | /decode   (also /{namespace}/encode|decode, the CLI's templated form)
 *   body and answer: { "payloads": [{ "metadata": { "<key>": "<base64>" }, "data": "<base64>" }] }
 *
 * The body is the proto3 JSON of `Payloads`: every bytes field is base64. /decode first
 * resolves external-storage references (stored.ts), then runs the codecs in reverse.
 *
 * It decrypts for whoever it answers, so it checks who asks (endpoint-guard.ts):
 * - a token, by default: `Authorization: Bearer <token>`, or as the first path segments
 *   `/t/<token>/…` — the form for the Web UI, which sends no header of its own to a codec
 *   endpoint outside an OAuth login (its `passAccessToken` needs one, and HTTPS), so the UI is
 *   given the endpoint URL with the token in it (`forkflow dev` does this);
 * - `Host` must name this server (anti DNS rebinding);
 * - a browser request (`Origin`) must come from an allowed origin (the Web UI's), which CORS
 *   answers too. Keys never leave this process.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DataConverter, Payload } from '@temporalio/common';
import { z } from 'zod';
import { plainIssues } from '../shared/base/plain-issues';
import { decodeRecorded } from './stored';
import { bearerOf, hostAllowed, hostNamesFor, tokenMatches, TOKEN_PATTERN } from './endpoint-guard';

/** `forkflow codec-server`'s port, and the dev stack's when free (the Web UI is on 8233). */
export const DEFAULT_CODEC_PORT = 8234;

/** Largest request body read (a page of history with payloads near the server's 2 MB limit). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
const ALLOWED_HEADERS = 'Content-Type, X-Namespace, Authorization';

const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');
const payloadJsonSchema = z.object({ metadata: z.record(z.string(), base64).optional(), data: base64.optional() });
export const codecRequestSchema = z.object({ payloads: z.array(payloadJsonSchema) });
type PayloadJson = z.infer<typeof payloadJsonSchema>;

export interface CodecServerOptions {
  dataConverter: DataConverter;
  ip?: string;
  /** Default: a free port. */
  port?: number;
  /** Origins allowed by CORS, e.g. `http://localhost:8233` (the Web UI's); a browser request from any other is refused. */
  allowedOrigins?: string[];
  /** Requests must carry it (`Authorization: Bearer <token>` or a `/t/<token>` path prefix). Required unless `noAuth`. */
  token?: string;
  /** Serve without a token: only for a machine of one user, on loopback (tests). */
  noAuth?: boolean;
  /** More names the server answers to in `Host` (a DNS name in front of it), besides its own addresses. */
  allowHosts?: string[];
}

export interface CodecServer {
  /** Its base URL (requests still need the token). */
  readonly url: string;
  /** The URL with the token in its path, for the Web UI's codec endpoint (`url` without a token). */
  readonly endpoint: string;
  close(): Promise<void>;
}

export class CodecServerConfigError extends Error {
  override name = 'CodecServerConfigError';
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const fromJson = (p: PayloadJson): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});

const toJson = (p: Payload): PayloadJson => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'body is not JSON: expected {"payloads":[{"metadata":{…},"data":"<base64>"}]}');
  }
}

interface Route {
  op: 'encode' | 'decode';
  /** The token in the path (`/t/<token>/…`), if any. */
  pathToken?: string;
}

/** `[/t/<token>][/<namespace>]/encode|decode`; anything else is not ours. */
function routeOf(url: string | undefined): Route | undefined {
  const path = (url ?? '').split('?')[0]!;
  const match = /^(?:\/t\/([^/]+))?(?:\/[^/]+)?\/(encode|decode)\/?$/.exec(path);
  if (!match) return undefined;
  return { op: match[2] as Route['op'], ...(match[1] ? { pathToken: decodeURIComponent(match[1]) } : {}) };
}

function authorized(req: IncomingMessage, route: Route, o: CodecServerOptions): boolean {
  if (o.noAuth) return true;
  return tokenMatches(bearerOf(req), o.token!) || tokenMatches(route.pathToken, o.token!);
}

async function transform(route: 'encode' | 'decode', payloads: Payload[], dc: DataConverter): Promise<Payload[]> {
  const codecs = dc.payloadCodecs ?? [];
  if (route === 'encode') {
    // Storing is left to the SDK on real writes; /encode only runs the codecs (the UI encodes signal input with it).
    for (const codec of codecs) payloads = await codec.encode(payloads);
    return payloads;
  }
  return decodeRecorded(payloads, dc);
}

async function handle(req: IncomingMessage, res: ServerResponse, o: CodecServerOptions, hosts: ReadonlySet<string>): Promise<void> {
  if (!hostAllowed(req.headers.host, hosts)) throw new HttpError(421, 'this server answers only to its own address (Host header)');
  const origin = req.headers.origin;
  if (origin !== undefined) {
    // A page of another origin is refused outright, not merely denied the answer by CORS.
    if (!o.allowedOrigins?.includes(origin)) throw new HttpError(403, `origin ${origin.slice(0, 200)} is not allowed (--allow-origin)`);
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.setHeader('Vary', 'Origin');
  }
  if (req.method === 'OPTIONS') {
    res.writeHead(204, { 'Access-Control-Allow-Methods': 'POST, OPTIONS', 'Access-Control-Allow-Headers': ALLOWED_HEADERS, 'Access-Control-Max-Age': '600' });
    res.end();
    return;
  }
  const route = routeOf(req.url);
  if (!route) throw new HttpError(404, 'not found: POST /encode or /decode');
  if (req.method !== 'POST') throw new HttpError(405, `${req.method} not allowed: POST /${route.op}`);
  if (!authorized(req, route, o)) throw new HttpError(401, 'missing or wrong token (Authorization: Bearer <token>, or the endpoint URL with /t/<token>)');
  const parsed = codecRequestSchema.safeParse(await readBody(req));
  if (!parsed.success) throw new HttpError(400, `bad request body: ${plainIssues(parsed.error, 'body').join('; ')}`);
  const out = await transform(route.op, parsed.data.payloads.map(fromJson), o.dataConverter);
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ payloads: out.map(toJson) }));
}

/** Starts the codec server; resolves once it listens. */
export async function startCodecServer(o: CodecServerOptions): Promise<CodecServer> {
  if (!o.noAuth && !(o.token && TOKEN_PATTERN.test(o.token))) {
    throw new CodecServerConfigError('The codec server decrypts for whoever it answers: give it a token of at least 16 URL-safe characters (FORKFLOW_CODEC_SERVER_TOKEN, or let it make one).');
  }
  let hosts: ReadonlySet<string> = new Set();
  const server: Server = createServer((req, res) => {
    handle(req, res, o, hosts).catch((err: unknown) => {
      // A payload that does not decrypt is the caller's input (wrong key, altered bytes): 400, not 500.
      const status = err instanceof HttpError ? err.status : 400;
      if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`${(err as Error).message}\n`);
    });
  });
  const ip = o.ip ?? '127.0.0.1';
  server.listen(o.port ?? 0, ip);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => Promise.reject(err as Error))]);
  const { port } = server.address() as AddressInfo;
  hosts = hostNamesFor(ip, port, o.allowHosts);
  const url = `http://${ip.includes(':') ? `[${ip}]` : ip}:${port}`;
  return {
    url,
    endpoint: o.noAuth ? url : `${url}/t/${o.token!}`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
