/**
 * The worker side of a sandboxed call's network: an HTTP proxy, one per Bash call of a fork
 * with a network allowance (src/shared/tools/network.ts), listening on a unix socket in a private
 * directory (0700, fresh per call) that bubblewrap binds into the sandbox, where a bridge
 * (net-bridge.ts) carries the command's loopback connections to it.
 *
 * It speaks CONNECT (HTTPS and any TLS: the bytes are passed through, never decrypted) and
 * absolute-URI requests (plain HTTP). For an allowed host and port it resolves the name
 * here, on the worker, and connects to the address it checked (DNS rebinding cannot swap
 * it afterwards): never to link-local or NAT64 addresses (cloud metadata at 169.254.169.254), and to
 * loopback, private, shared, multicast or reserved ones only when that exact host is listed
 * (not through a `*.` entry). Everything else gets 403, and is reported to `onRefused`.
 *
 * Everything here is driven by what a hostile command sends, so nothing may escape as an
 * uncaught error (it would end the worker, and the retried call the next one): every socket
 * has an error listener, every async handler ends in a catch that drops its connection, a
 * failing `onRefused` is ignored, and the handlers run in the async context the proxy was
 * started in (Node's CONNECT path loses it), the calling activity's, where its guard
 * (src/activities/call-guard.ts) catches whatever a bug here would still throw.
 */
import { AsyncResource } from 'node:async_hooks';
import { lookup } from 'node:dns/promises';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { BlockList, connect, isIP, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { matchHost, type NetworkAllowance } from '../../../shared/tools/network';

/**
 * Addresses never connected to, whatever the allowance: link-local (cloud metadata), and
 * NAT64 (`64:ff9b::/96`, which could carry any IPv4 address, metadata included).
 */
const NEVER = new BlockList();
NEVER.addSubnet('169.254.0.0', 16, 'ipv4');
NEVER.addSubnet('fe80::', 10, 'ipv6');
NEVER.addSubnet('64:ff9b::', 96, 'ipv6');

/** Addresses connected to only for a host listed exactly. */
const INTERNAL = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) INTERNAL.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['ff00::', 8], ['2001:db8::', 32], ['2002::', 16]] as const) INTERNAL.addSubnet(net, bits, 'ipv6');

/** The IPv4 address inside an IPv4-mapped IPv6 one (`::ffff:a.b.c.d`), else the address itself. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m?.[1]) return { address: m[1], family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** Why `address` may not be connected to for a host matched `exact`ly or not; undefined when it may. */
export function addressRefusal(address: string, exact: boolean): string | undefined {
  const a = unmapped(address);
  if (NEVER.check(a.address, a.family)) return `${address} is link-local or NAT64 (never reachable)`;
  if (!exact && INTERNAL.check(a.address, a.family)) return `${address} is a loopback, private or reserved address (only reachable for a host listed exactly)`;
  return undefined;
}

/** One refused request, for the log and the call's output. */
export interface Refusal {
  target: string;
  reason: string;
}

/** A running proxy: the directory bound into the sandbox, its socket, and how to stop it. */
export interface NetProxy {
  /** The private directory holding the socket. */
  dir: string;
  /** The socket's file name inside `dir`. */
  socket: string;
  /** Refusals so far. */
  refusals: readonly Refusal[];
  close(): Promise<void>;
}

/** The socket's name inside the proxy's directory. */
export const PROXY_SOCKET = 'proxy.sock';

const MAX_REFUSALS = 50;

/** Connections open at once through one call's proxy: enough for parallel downloads, not for exhausting the worker's descriptors. */
export const MAX_PROXY_CONNECTIONS = 256;

/** Resolves `host` and picks the first address allowed; throws a refusal reason otherwise. */
async function resolveAllowed(host: string, exact: boolean): Promise<string> {
  const found = await lookup(host, { all: true, verbatim: true });
  const reasons: string[] = [];
  for (const { address } of found) {
    const why = addressRefusal(address, exact);
    if (!why) return address;
    reasons.push(why);
  }
  throw new Error(reasons.length > 0 ? `${host} resolves only to refused addresses: ${reasons.join('; ')}` : `${host} does not resolve`);
}

/** Splits `host:port` (or `[v6]:port`); undefined when malformed. */
function splitTarget(target: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(target);
  const port = Number(m?.[3]);
  const host = m?.[1] ?? m?.[2];
  return host && port >= 1 && port <= 65535 ? { host, port } : undefined;
}

/** Options of one proxy. */
export interface NetProxyOptions {
  allowance: NetworkAllowance;
  /** Owner of the socket directory when the sandbox runs as another user (uid, gid). */
  owner?: { uid: number; gid: number };
  /** Told of every refused request. */
  onRefused?: (refusal: Refusal) => void;
}

/** Starts a proxy for one call's allowance, listening on a fresh private socket. */
export async function startNetProxy(opts: NetProxyOptions): Promise<NetProxy> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'forkflow-net-'));
  if (opts.owner) chownSync(dir, opts.owner.uid, opts.owner.gid);
  const refusals: Refusal[] = [];
  const open = new Set<Duplex>();
  const track = (s: Duplex) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  };
  const refuse = (target: string, reason: string) => {
    const refusal = { target: target.slice(0, 300), reason };
    if (refusals.length < MAX_REFUSALS) refusals.push(refusal);
    try {
      opts.onRefused?.(refusal);
    } catch {
      // A reporter's failure is no reason to drop the refusal, nor the worker.
    }
  };
  /** The address to connect to for `host:port`, or a refusal reason. */
  const decide = async (host: string, port: number): Promise<{ address: string } | { refused: string }> => {
    const match = matchHost(opts.allowance, host, port);
    if (!match.allowed) return { refused: match.reason };
    try {
      return { address: await resolveAllowed(host.replace(/\.$/, ''), match.exact) };
    } catch (err) {
      return { refused: err instanceof Error ? err.message : String(err) };
    }
  };

  // Every handler runs in the starting call's async context (AsyncResource.bind).
  const server = createServer(
    AsyncResource.bind((req: IncomingMessage, res: ServerResponse) => {
      res.on('error', () => res.destroy());
      req.on('error', () => req.destroy());
      forward(req, res).catch(() => res.destroy());
    }),
  );
  server.maxConnections = MAX_PROXY_CONNECTIONS;
  server.on('connection', AsyncResource.bind(track));
  // Accept failures (EMFILE) and late socket errors: the call's requests fail, not the worker.
  server.on('error', () => undefined);
  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL | undefined;
    try {
      url = new URL(req.url ?? '');
    } catch {
      url = undefined;
    }
    if (!url || url.protocol !== 'http:' || url.username || url.password) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('forkflow proxy: only absolute http:// URLs (and CONNECT for https)\n');
      return;
    }
    const host = url.hostname;
    const port = url.port ? Number(url.port) : 80;
    const decision = await decide(host, port);
    if ('refused' in decision) {
      refuse(`${host}:${port}`, decision.refused);
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`forkflow proxy: refused: ${decision.refused}\n`);
      return;
    }
    const headers = { ...req.headers };
    for (const h of ['proxy-authorization', 'proxy-connection', 'connection', 'keep-alive']) delete headers[h];
    // RFC 9112 3.2.2: an absolute-form target replaces whatever Host the client sent.
    headers.host = url.host;
    const upstream = httpRequest({ host: decision.address, port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false }, (up) => {
      // An upstream that dies midway through its answer: the answer is cut, nothing more.
      up.on('error', () => res.destroy());
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`forkflow proxy: ${err.message}\n`);
      else res.destroy();
    });
    req.on('error', () => upstream.destroy());
    req.pipe(upstream);
  }

  // Node emits 'connect' outside the server's async context: bound, the call's guard sees it.
  server.on(
    'connect',
    AsyncResource.bind((req: IncomingMessage, client: Duplex, head: Buffer) => {
      track(client);
      client.on('error', () => client.destroy());
      tunnel(req, client, head).catch(() => client.destroy());
    }),
  );
  async function tunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const target = splitTarget(req.url ?? '');
    const decision = target ? await decide(target.host, target.port) : { refused: 'CONNECT needs host:port' };
    if ('refused' in decision || !target) {
      const reason = 'refused' in decision ? decision.refused : 'bad target';
      refuse(req.url ?? '', reason);
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nforkflow proxy: refused: ${reason}\n`);
      return;
    }
    const upstream: Socket = connect({ host: decision.address, port: target.port });
    track(upstream);
    let established = false;
    upstream.once('connect', () => {
      established = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (err) => {
      if (!established && client.writable) client.end(`HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\nforkflow proxy: ${err.message}\n`);
      else client.destroy();
    });
    client.once('close', () => upstream.destroy());
  }

  const socket = path.join(dir, PROXY_SOCKET);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  if (opts.owner) chownSync(socket, opts.owner.uid, opts.owner.gid);
  return {
    dir,
    socket: PROXY_SOCKET,
    refusals,
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
