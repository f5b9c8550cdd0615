/**
 * The model clients of a worker's providers, by name: what the model activity calls for an
 * agent whose input names a provider. An `anthropic` entry is an Anthropic SDK client (the
 * default entry is the worker's own client, so its requests are today's, byte for byte); an
 * `openai-compatible` entry is an `openai` SDK client spoken to through the Chat Completions
 * adapter (openai-call.ts). Built by the worker (src/worker/providers.ts).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import type OpenAI from 'openai';
import type { ProviderConfig } from '../../../shared/providers';

export type ProviderClient =
  | { config: ProviderConfig; kind: 'anthropic'; anthropic: Anthropic }
  | { config: ProviderConfig; kind: 'openai-compatible'; openai: OpenAI };

/** Provider clients by name. */
export type ProviderClients = ReadonlyMap<string, ProviderClient>;

/** The failure type of a call naming a provider this worker does not have. */
export const UNKNOWN_PROVIDER_FAILURE = 'ModelProviderUnknown';

/**
 * The client for `name`; undefined for no name (the worker's default client). A name the
 * worker does not know fails the call non-retryably: no retry can make it known.
 */
export function providerFor(clients: ProviderClients | undefined, name: string | undefined): ProviderClient | undefined {
  if (name === undefined) return undefined;
  const client = clients?.get(name);
  if (client) return client;
  const known = clients ? [...clients.keys()].join(', ') : 'none configured';
  throw ApplicationFailure.create({ type: UNKNOWN_PROVIDER_FAILURE, message: `This worker has no provider "${name}" (known: ${known}). Configure it in FORKFLOW_PROVIDERS.`, nonRetryable: true });
}
