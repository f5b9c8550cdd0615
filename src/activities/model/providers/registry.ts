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
import type { ProviderConfig } from '../../../shared/providers/providers';

export type ProviderClient = (
  | { config: ProviderConfig; kind: 'anthropic'; anthropic: Anthropic }
  | { config: ProviderConfig; kind: 'openai-compatible'; openai: OpenAI }
) & {
  /**
   * Its client points at the worker's model gateway (src/gateway): its calls then carry their
   * call key, so one whose worker dies is finished there and replayed to the retry.
   */
  viaGateway?: boolean;
};

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

/**
 * Whether a call on `provider` (undefined: the worker's default client, `defaultClient`) goes
 * through the worker's model gateway, and so carries its call key there: the default client
 * does when the worker has a gateway, another client when it was made for it.
 */
export function throughGateway(gateway: string | undefined, provider: ProviderClient | undefined, defaultClient: Anthropic): boolean {
  if (gateway === undefined) return false;
  if (provider === undefined || provider.viaGateway === true) return true;
  return provider.kind === 'anthropic' && provider.anthropic === defaultClient;
}
