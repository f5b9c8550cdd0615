/**
 * What a worker and the model gateway (src/gateway) agree on. A worker that sends its model
 * calls through the gateway names each call with a key that is the same on every attempt of
 * that call; the gateway finishes a call whose worker died and hands the response to the
 * retry, so the provider answers each call once.
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';

/** Request header carrying the call's key: sha256 (hex) of the call's identity. */
export const CALL_KEY_HEADER = 'forkflow-call-key';

/** Response header set when the gateway answered from a call it had already made. */
export const REPLAYED_HEADER = 'forkflow-gateway-replayed';

/**
 * `DELETE <prefix><key>` with the call's proof: the call was cancelled on purpose (not lost with
 * its worker), so the gateway stops it upstream instead of finishing it for a retry that will
 * never come.
 */
export const CANCEL_PATH_PREFIX = '/forkflow/v1/calls/';

/**
 * Request header carrying the attempt's proof: 64 hex digits the attempt draws at random and
 * sends with its keyed call. A cancel must carry the proof of an attempt that made or joined
 * the call: the key alone is derived from ids any reader of the workflow's history sees.
 */
export const CALL_PROOF_HEADER = 'forkflow-call-proof';

export const callKeySchema = schemaOnce('providers/model-gateway#callKeySchema', () => z.string().regex(/^[0-9a-f]{64}$/, 'a call key is 64 lowercase hex digits (sha256)'));
export const callProofSchema = schemaOnce('providers/model-gateway#callProofSchema', () => z.string().regex(/^[0-9a-f]{64}$/, 'a call proof is 64 lowercase hex digits'));

/**
 * Path prefix of a named provider at the gateway: `<gateway>/forkflow/v1/providers/<name>/…`
 * goes to that provider's base URL (the gateway's own configuration, never the caller's), so
 * one gateway fronts every provider of a worker: Anthropic's Messages API on its root path,
 * OpenAI-compatible and other Anthropic entries under their names.
 */
export const PROVIDER_PATH_PREFIX = '/forkflow/v1/providers/';

/**
 * Request header carrying the base URL the worker's configuration gives the named provider.
 * The gateway refuses a call whose provider it maps elsewhere (a worker and a gateway
 * configured apart would otherwise send one provider's key to another); it never forwards it.
 */
export const PROVIDER_URL_HEADER = 'forkflow-provider-url';

/** The base URL a worker's client of provider `name` uses when calls go through `gateway`. */
export function gatewayProviderUrl(gateway: string, name: string): string {
  return `${gateway.replace(/\/$/, '')}${PROVIDER_PATH_PREFIX}${encodeURIComponent(name)}`;
}

/** A base URL as compared by the gateway: no trailing slash. */
export function comparableBaseUrl(url: string): string {
  return url.replace(/\/+$/, '');
}
