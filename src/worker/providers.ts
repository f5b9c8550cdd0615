/**
 * The worker's providers: read from the environment, validated, and turned into clients.
 *
 * - `FORKFLOW_PROVIDERS`: the configuration as JSON (an array of provider entries,
 *   src/shared/providers/providers.ts), or
 * - `FORKFLOW_PROVIDERS_FILE`: the path of a file holding that JSON.
 *
 * The file must be a regular file of this user's (or root's) that group and others cannot
 * write. Setting both is an error. Setting neither means {@link DEFAULT_PROVIDERS}: the one
 * Anthropic endpoint of ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL, through the worker's own
 * client, so requests are exactly what they were before providers existed.
 */
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { z } from 'zod';
import type { ProviderClient, ProviderClients } from '../activities/model/providers/registry';
import { PROVIDER_URL_HEADER, gatewayProviderUrl } from '../shared/providers/model-gateway';
import { DEFAULT_PROVIDERS, type ProviderConfig, type ProvidersConfig, providersConfigSchema } from '../shared/providers/providers';
import { envSetting } from '../shared/wire/env-settings';

/** A provider configuration that cannot be used; the message says which setting to fix. */
export class InvalidProvidersError extends Error {
  override readonly name = 'InvalidProvidersError';
}

/** The default request timeout of provider clients (the Anthropic client's, model-client.ts). */
const TIMEOUT_MS = 10 * 60_000;

function parse(raw: string, from: string): ProvidersConfig {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    throw new InvalidProvidersError(`${from} is not valid JSON: ${(e as Error).message}`);
  }
  const parsed = providersConfigSchema.safeParse(json);
  if (!parsed.success) throw new InvalidProvidersError(`${from} is not a valid provider list: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The provider configuration of this environment (see the file header). */
export function providersFromEnv(env: NodeJS.ProcessEnv = process.env): ProvidersConfig {
  const inline = envSetting(env, 'FORKFLOW_PROVIDERS');
  const file = envSetting(env, 'FORKFLOW_PROVIDERS_FILE');
  if (inline && file) throw new InvalidProvidersError('Set FORKFLOW_PROVIDERS or FORKFLOW_PROVIDERS_FILE, not both.');
  if (inline) return parse(inline, 'FORKFLOW_PROVIDERS');
  if (file) return parse(readTrusted(file), `FORKFLOW_PROVIDERS_FILE ${file}`);
  return DEFAULT_PROVIDERS;
}

const euid = (): number => (typeof process.geteuid === 'function' ? process.geteuid() : -1);

/**
 * Why a providers file with these stats may not be trusted by user `me`, or undefined. The
 * file says where every prompt goes (`baseURL`) and which variable's key goes with it, so it
 * is refused, as ssh refuses a config file, when another user owns it (root's is accepted)
 * or group or others may write it.
 */
export function providersFileProblem(file: string, st: { uid: number; mode: number; isFile(): boolean }, me: number = euid()): string | undefined {
  if (!st.isFile()) return `FORKFLOW_PROVIDERS_FILE ${file} is not a regular file.`;
  if (me >= 0 && st.uid !== me && st.uid !== 0) {
    return `FORKFLOW_PROVIDERS_FILE ${file} belongs to uid ${st.uid}, not to this process's user (uid ${me}) or root: its owner could send every prompt elsewhere. Use a file of your own.`;
  }
  if ((st.mode & 0o022) !== 0) {
    return `FORKFLOW_PROVIDERS_FILE ${file} has mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}: group or others may write it, and so send every prompt elsewhere. Remove their write access (chmod go-w ${file}).`;
  }
  return undefined;
}

/** The providers file, checked on the open file itself (it cannot be swapped between check and read). */
function readTrusted(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    throw new InvalidProvidersError(`FORKFLOW_PROVIDERS_FILE ${file} cannot be read: ${(e as Error).message}`);
  }
  try {
    const problem = providersFileProblem(file, fstatSync(fd));
    if (problem) throw new InvalidProvidersError(problem);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

function keyOf(p: ProviderConfig, env: NodeJS.ProcessEnv): string {
  if (!p.apiKeyEnv) throw new InvalidProvidersError(`Provider "${p.name}" needs apiKeyEnv: the environment variable that holds its key.`);
  const key = env[p.apiKeyEnv];
  if (!key) throw new InvalidProvidersError(`Provider "${p.name}": ${p.apiKeyEnv} is not set.`);
  return key;
}

/**
 * Clients for `config`. An `anthropic` entry with neither baseURL nor apiKeyEnv is served
 * by `defaultClient` (the worker's own client: its gateway, key and base URL); every other
 * entry gets a client of its own, with SDK retries off (Temporal owns retries). With
 * `opts.gateway` (FORKFLOW_MODEL_GATEWAY), those clients go through the gateway too, at the
 * entry's path there (src/shared/providers/model-gateway.ts), each request naming the base URL this
 * configuration gives it, which the gateway checks against its own.
 */
export function createProviderClients(config: ProvidersConfig, defaultClient: Anthropic, env: NodeJS.ProcessEnv = process.env, opts: { gateway?: string } = {}): ProviderClients {
  const clients = new Map<string, ProviderClient>();
  const viaGateway = opts.gateway !== undefined;
  // Through the gateway: its path for the entry, and the URL the gateway must map it to (an entry without one is the default upstream's).
  const routeOf = (p: ProviderConfig) =>
    opts.gateway === undefined
      ? { baseURL: p.baseURL }
      : p.baseURL === undefined
        ? { baseURL: opts.gateway }
        : { baseURL: gatewayProviderUrl(opts.gateway, p.name), defaultHeaders: { [PROVIDER_URL_HEADER]: p.baseURL } };
  for (const p of config) {
    if (p.kind === 'anthropic') {
      const own = p.baseURL === undefined && p.apiKeyEnv === undefined;
      const anthropic = own ? defaultClient : new Anthropic({ apiKey: keyOf(p, env), ...routeOf(p), maxRetries: 0, timeout: TIMEOUT_MS });
      clients.set(p.name, { config: p, kind: 'anthropic', anthropic, ...(viaGateway ? { viaGateway } : {}) });
    } else {
      if (!p.baseURL) throw new InvalidProvidersError(`Provider "${p.name}" (openai-compatible) needs baseURL, e.g. https://api.openai.com/v1.`);
      clients.set(p.name, { config: p, kind: 'openai-compatible', openai: new OpenAI({ apiKey: keyOf(p, env), ...routeOf(p), maxRetries: 0, timeout: TIMEOUT_MS }), ...(viaGateway ? { viaGateway } : {}) });
    }
  }
  return clients;
}
