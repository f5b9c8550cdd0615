/**
 * Who may ask forkflow's local HTTP endpoints (the codec server, the web view): a bearer token
 * checked in constant time, a `Host` header that must name the server itself (a page that
 * rebinds its own DNS name to 127.0.0.1 sends its own name, and is refused), and a loud warning
 * when one is bound beyond loopback, where anyone on the network can knock.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { hostname, networkInterfaces } from 'node:os';

/** A fresh random token: 32 bytes, URL-safe base64 (it may travel in a path). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Tokens a server accepts: at least 16 URL-safe characters (what `newToken` makes, or an operator's own). */
export const TOKEN_PATTERN = /^[A-Za-z0-9._~-]{16,512}$/;

/** Compares in constant time (digests first, so not even the length leaks). */
export function tokenMatches(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The token of an `Authorization: Bearer <token>` header. */
export function bearerOf(req: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return match?.[1];
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;
const WILDCARD = new Set(['0.0.0.0', '::', '']);

export function isLoopback(ip: string): boolean {
  return LOOPBACK.test(ip);
}

const hostPort = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`.toLowerCase();

/**
 * The `Host` values a server bound to `ip:port` answers to: its loopback names, the address it
 * is bound to, for a wildcard bind every address of this machine and its host name, and
 * `extra` names an operator adds (a DNS name in front of it, `name` or `name:port`).
 */
export function hostNamesFor(ip: string, port: number, extra: readonly string[] = []): Set<string> {
  const names = new Set(['localhost', '127.0.0.1', '::1'].map((h) => hostPort(h, port)));
  if (WILDCARD.has(ip)) {
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) names.add(hostPort(a.address.split('%')[0]!, port));
    names.add(hostPort(hostname(), port));
  } else names.add(hostPort(ip, port));
  for (const name of extra) names.add(name.includes(':') && !name.startsWith('[') ? name.toLowerCase() : hostPort(name, port));
  return names;
}

/** Whether a request's `Host` names this server (one of `hostNamesFor`). */
export function hostAllowed(host: string | undefined, names: ReadonlySet<string>): boolean {
  return host !== undefined && names.has(host.toLowerCase());
}

/**
 * The warning to print when `what` listens beyond loopback (undefined on loopback): anyone who
 * can reach the address and holds the token gets what it serves.
 */
export function exposureWarning(what: string, ip: string): string | undefined {
  if (isLoopback(ip)) return undefined;
  const bar = '!'.repeat(78);
  return [
    bar,
    `WARNING: the ${what} listens on ${WILDCARD.has(ip) ? `every interface (${ip || '*'})` : ip}, beyond this machine's loopback.`,
    'Anyone who can reach it and holds its token reads what it serves (decrypted). Bind it to',
    '127.0.0.1 and put an authenticating proxy with TLS in front if others must reach it.',
    bar,
  ].join('\n');
}
