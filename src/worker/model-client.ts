/** The Anthropic client used by model activities: no SDK retries (Temporal owns them). */
import Anthropic from '@anthropic-ai/sdk';

export function createModelClient(opts: { apiKey?: string; baseURL?: string; timeoutMs?: number }): Anthropic {
  if (!opts.apiKey) {
    throw new Error('No model API key: set ANTHROPIC_API_KEY, or run the offline model (`forkflow dev` starts one when no key is set).');
  }
  return new Anthropic({ apiKey: opts.apiKey, baseURL: opts.baseURL, maxRetries: 0, timeout: opts.timeoutMs ?? 10 * 60_000 });
}
