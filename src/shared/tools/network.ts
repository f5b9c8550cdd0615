/**
 * A fork's network allowance: the named hosts its sandboxed Bash calls may reach, through
 * the worker's filtering HTTP(S) proxy (src/activities/tools/sandbox/net-proxy.ts). Without
 * one a sandboxed call has no network at all.
 *
 * An entry is `host`, `*.suffix` (any name strictly below `suffix`, never `suffix` itself)
 * or either with `:port`; without a port, 80 and 443. Names are ASCII DNS names (IDNs in
 * their `xn--` form), at most 253 characters, compared case-insensitively. Refused: IP
 * literals (the last label must start with a letter, which also stops numeric tricks like
 * `2130706433` or `0x7f.1`), schemes, paths, user info, `*` alone, a wildcard over a single
 * label (`*.com`), a wildcard anywhere but in front, empty entries, non-ASCII text, more
 * than 64 entries.
 *
 * Pure and workflow-safe: the schema validates fork input; the matcher runs on the worker.
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';

/** Most entries one allowance may list. */
export const MAX_ALLOWED_HOSTS = 64;

const LABEL = '(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)';
const LAST = '(?:[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?)';
const NAME = `(?:${LABEL}\\.)*${LAST}`;
const PORT = '(?::(?<port>[1-9][0-9]{0,4}))?';
/** One entry: optional `*.`, a name, optional port. */
const ENTRY = new RegExp(`^(?<wild>\\*\\.)?(?<name>${NAME})${PORT}$`, 'i');
/** A host as a client names it (no wildcard). */
const HOST = new RegExp(`^${NAME}$`, 'i');

/** One parsed allowance entry. */
export interface HostRule {
  name: string;
  wildcard: boolean;
  /** Ports allowed; absent: 80 and 443. */
  port?: number;
}

/** Parses one entry, or says why it is refused. */
export function parseHostRule(entry: string): HostRule | { error: string } {
  const m = ENTRY.exec(entry);
  const name = m?.groups?.name;
  if (!m || !name) return { error: `${JSON.stringify(entry.slice(0, 80))} is not a host name, *.suffix or either with :port (no schemes, paths, IP addresses or non-ASCII names)` };
  if (name.length > 253) return { error: 'a host name has at most 253 characters' };
  const wildcard = m.groups?.wild !== undefined;
  if (wildcard && !name.includes('.')) return { error: `*.${name} would match a whole top-level domain; name at least two labels after *.` };
  const port = m.groups?.port !== undefined ? Number(m.groups.port) : undefined;
  if (port !== undefined && port > 65535) return { error: `port ${port} is out of range` };
  return { name: name.toLowerCase(), wildcard, ...(port !== undefined ? { port } : {}) };
}

/** Built inside the allowance's factory: workflow-side modules build no schema at load (schema-once.ts). */
const hostEntry = () =>
  z
  .string()
  .max(260)
  .superRefine((entry, ctx) => {
    const rule = parseHostRule(entry);
    if ('error' in rule) ctx.addIssue({ code: 'custom', message: rule.error });
  });

/** The fork input's `sandbox.network` allowance. */
export const networkAllowanceSchema = schemaOnce('tools/network#networkAllowanceSchema', () =>
  z.strictObject({
    /** Hosts sandboxed Bash may reach over HTTP(S) through the worker's proxy. */
    allowedHosts: z.array(hostEntry()).min(1).max(MAX_ALLOWED_HOSTS),
  }),
);

export type NetworkAllowance = z.infer<typeof networkAllowanceSchema>;

/** The decision for one request: allowed, and whether by an exact (non-wildcard) entry. */
export type HostMatch = { allowed: true; exact: boolean } | { allowed: false; reason: string };

/**
 * Whether `host:port`, as a client asked for it, is allowed. A host that is not a valid
 * DNS name (an IP literal, anything odd) never matches. One trailing dot is ignored.
 */
export function matchHost(allowance: NetworkAllowance, host: string, port: number): HostMatch {
  const name = (host.endsWith('.') ? host.slice(0, -1) : host).toLowerCase();
  if (!HOST.test(name) || name.length > 253) return { allowed: false, reason: `${JSON.stringify(host.slice(0, 80))} is not a host name (IP addresses are never allowed)` };
  let exact = false;
  let matched = false;
  for (const entry of allowance.allowedHosts) {
    const rule = parseHostRule(entry);
    if ('error' in rule) continue;
    const ports = rule.port !== undefined ? [rule.port] : [80, 443];
    if (!ports.includes(port)) continue;
    if (rule.wildcard ? name.endsWith(`.${rule.name}`) : name === rule.name) {
      matched = true;
      if (!rule.wildcard) exact = true;
    }
  }
  return matched ? { allowed: true, exact } : { allowed: false, reason: `${name}:${port} is not in the fork's allowedHosts` };
}
