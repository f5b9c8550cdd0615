/**
 * The worker's providers: read from the environment, validated, and turned into clients.
 *
 * - `FORKFLOW_PROVIDERS`: the configuration as JSON (an array of provider entries,
 *   src/shared/providers.ts), or
 * - `FORKFLOW_PROVIDERS_FILE`: the path of a file holding that JSON.
 *
 * Setting both is an error. Setting neither means {@link DEFAULT_PROVIDERS}: the one
 * Anthropic endpoint of ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL, through the worker's own
 * client, so requests are exactly what they were before providers existed.
 */
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { z } from 'zod';
import type { ProviderClient, ProviderClients } from '../activities/model/providers/registry';
import { DEFAULT_PROVIDERS, type ProviderConfig, type ProvidersConfig, providersConfigSchema } from '../shared/providers';

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
  const inline = env.FORKFLOW_PROVIDERS;
  const file = env.FORKFLOW_PROVIDERS_FILE;
  if (inline && file) throw new InvalidProvidersError('Set FORKFLOW_PROVIDERS or FORKFLOW_PROVIDERS_FILE, not both.');
  if (inline) return parse(inline, 'FORKFLOW_PROVIDERS');
  if (file) {
    let raw: string;
    try {
      raw = readFileSync(file, 'utf8');
    } catch (e) {
      throw new InvalidProvidersError(`FORKFLOW_PROVIDERS_FILE ${file} cannot be read: ${(e as Error).message}`);
    }
    return parse(raw, `FORKFLOW_PROVIDERS_FILE ${file}`);
  }
  return DEFAULT_PROVIDERS;
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
 * entry gets a client of its own, with SDK retries off (Temporal owns retries).
 */
export function createProviderClients(config: ProvidersConfig, defaultClient: Anthropic, env: NodeJS.ProcessEnv = process.env): ProviderClients {
  const clients = new Map<string, ProviderClient>();
  for (const p of config) {
    if (p.kind === 'anthropic') {
      const own = p.baseURL === undefined && p.apiKeyEnv === undefined;
      const anthropic = own ? defaultClient : new Anthropic({ apiKey: keyOf(p, env), baseURL: p.baseURL, maxRetries: 0, timeout: TIMEOUT_MS });
      clients.set(p.name, { config: p, kind: 'anthropic', anthropic });
    } else {
      if (!p.baseURL) throw new InvalidProvidersError(`Provider "${p.name}" (openai-compatible) needs baseURL, e.g. https://api.openai.com/v1.`);
      clients.set(p.name, { config: p, kind: 'openai-compatible', openai: new OpenAI({ apiKey: keyOf(p, env), baseURL: p.baseURL, maxRetries: 0, timeout: TIMEOUT_MS }) });
    }
  }
  return clients;
}
