/**
 * Where the model gateway sends a request: the default upstream (the Anthropic endpoint the
 * worker's own client points at) for every path but the providers prefix, and a named
 * provider's base URL for `/forkflow/v1/providers/<name>/…` (src/shared/providers/model-gateway.ts).
 * The names and URLs are the gateway's own configuration (`--provider`, or the same
 * FORKFLOW_PROVIDERS the workers read): a caller chooses among them, never a URL, so the
 * gateway forwards keys and prompts only where its operator said.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { PROVIDER_PATH_PREFIX, comparableBaseUrl } from '../shared/providers/model-gateway';

/** One upstream: its base URL and a keep-alive agent for it. */
interface Upstream {
  base: URL;
  agent: HttpAgent | HttpsAgent;
}

/** A request's target, or why it has none (said to the caller in the provider's error shape). */
export type Routed = { url: URL; agent: HttpAgent | HttpsAgent } | { status: number; type: string; message: string };

function upstreamOf(raw: string, what: string): Upstream {
  const base = new URL(raw);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`${what} must be an http(s) URL, not ${raw}`);
  return { base, agent: base.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true }) };
}

/** A base URL as the WHATWG parser spells it, without a trailing slash (unparseable: as given). */
function normalised(raw: string): string {
  try {
    return comparableBaseUrl(new URL(raw).toString());
  } catch {
    return comparableBaseUrl(raw);
  }
}

/** `base` + `path` (a path prefix of `base` is kept). */
function joined(base: URL, path: string): URL {
  return new URL(base.toString().replace(/\/$/, '') + (path.startsWith('/') ? path : `/${path}`));
}

export class Upstreams {
  private readonly main: Upstream;
  private readonly named = new Map<string, Upstream>();

  /** `upstream`: the default; `providers`: name → base URL (e.g. `{ openai: 'https://api.openai.com/v1' }`). */
  constructor(upstream: string, providers: Readonly<Record<string, string>> = {}) {
    this.main = upstreamOf(upstream, 'gateway upstream');
    for (const [name, url] of Object.entries(providers)) this.named.set(name, upstreamOf(url, `the gateway's provider "${name}"`));
  }

  /** The named providers, for the start-up line. */
  names(): string[] {
    return [...this.named.keys()];
  }

  /**
   * The target of a request for `path` (path and query as received). `expected`: the base URL
   * the caller's configuration gives the named provider (header), checked against the gateway's.
   */
  route(path: string, expected: string | undefined): Routed {
    if (!path.startsWith(PROVIDER_PATH_PREFIX)) return { url: joined(this.main.base, path), agent: this.main.agent };
    const rest = path.slice(PROVIDER_PATH_PREFIX.length);
    const cut = rest.search(/[/?]/);
    const name = decodeURIComponent(cut < 0 ? rest : rest.slice(0, cut));
    const upstream = this.named.get(name);
    if (!upstream) {
      const known = this.names();
      return { status: 404, type: 'not_found_error', message: `no provider "${name}" here (known: ${known.length ? known.join(', ') : 'none'}): start the gateway with the workers' FORKFLOW_PROVIDERS, or --provider ${name}=<base URL>` };
    }
    const here = comparableBaseUrl(upstream.base.toString());
    if (expected !== undefined && normalised(expected) !== here) {
      return { status: 400, type: 'invalid_request_error', message: `provider "${name}" is ${here} here, but the caller's configuration says ${comparableBaseUrl(expected)}: configure the gateway and the workers alike` };
    }
    return { url: joined(upstream.base, cut < 0 ? '/' : rest.slice(cut)), agent: upstream.agent };
  }

  destroy(): void {
    this.main.agent.destroy();
    for (const u of this.named.values()) u.agent.destroy();
  }
}
