/**
 * Failover's pure parts: the chain of a provider and model, which failures are outages, when
 * the model activity gives up so the workflow moves on, and the cooldown and recovery rules
 * of an agent's failover state.
 */
import { ApplicationFailure } from '@temporalio/common';
import { capAttempts, classifyModelError, MODEL_ATTEMPTS } from '../../../src/activities/model/errors';
import { catalogueOf, providerCatalogueSchema } from '../../../src/shared/providers/agent-provider';
import { ZERO_USAGE } from '../../../src/shared/messages-api/anthropic';
import { FailoverBook, failoverChain, failoverStateSchema, failoverStatus, isOutage, MODEL_UNAVAILABLE_FAILURE } from '../../../src/shared/providers/failover';
import { providersConfigSchema } from '../../../src/shared/providers/providers';
import Anthropic from '@anthropic-ai/sdk';

const config = () =>
  providersConfigSchema.parse([
    {
      name: 'anthropic',
      kind: 'anthropic',
      models: ['claude-sonnet-4-6', 'claude-haiku-4-5'],
      fallbacks: [{ provider: 'openai', model: 'gpt-4.1', for: ['claude-sonnet-4-6'] }, { provider: 'openai' }, { provider: 'anthropic', model: 'claude-haiku-4-5', for: ['claude-sonnet-4-6'] }],
      failover: { afterAttempts: 2, cooldownMs: 5000 },
    },
    { name: 'openai', kind: 'openai-compatible', baseURL: 'http://127.0.0.1:1/v1', apiKeyEnv: 'K', models: ['gpt-4.1-mini', 'gpt-4.1'] },
  ]);

const apiError = (status: number, type = 'api_error') => Anthropic.APIError.generate(status, { type: 'error', error: { type, message: `boom ${status}` } }, 'x', new Headers());

describe('failover configuration', () => {
  it('orders a model’s chain: fallbacks for that model, a provider’s first model when none is named, no duplicates', () => {
    const catalogue = catalogueOf(config());
    expect(failoverChain(catalogue, { provider: 'anthropic', model: 'claude-sonnet-4-6' })).toEqual([
      { provider: 'anthropic', model: 'claude-sonnet-4-6' },
      { provider: 'openai', model: 'gpt-4.1' },
      { provider: 'openai', model: 'gpt-4.1-mini' },
      { provider: 'anthropic', model: 'claude-haiku-4-5' },
    ]);
    expect(failoverChain(catalogue, { provider: 'anthropic', model: 'claude-haiku-4-5' })).toEqual([
      { provider: 'anthropic', model: 'claude-haiku-4-5' },
      { provider: 'openai', model: 'gpt-4.1-mini' },
    ]);
    expect(failoverChain(catalogue, { provider: 'openai', model: 'gpt-4.1' })).toHaveLength(1);
    expect(catalogue.anthropic?.failover).toEqual({ afterAttempts: 2, cooldownMs: 5000 });
  });

  it('refuses fallbacks to unknown providers, unlisted models, aliases, or the model itself', () => {
    const base = { name: 'a', kind: 'anthropic', models: ['m1'], aliases: { one: 'm1' } };
    const bad = (fallbacks: unknown[]) => ({ error: { message: providersConfigSchema.safeParse([{ ...base, fallbacks }]).error?.issues.map((i) => i.message).join('\n') } });
    expect(bad([{ provider: 'nope' }]).error?.message).toContain('fallback provider "nope" is not configured');
    expect(bad([{ provider: 'a', model: 'm2' }]).error?.message).toContain('fallback model "m2" is not listed');
    expect(bad([{ provider: 'a', model: 'one' }]).error?.message).toContain('give a model id, not an alias');
    expect(bad([{ provider: 'a' }]).error?.message).toContain('must not be the model it falls back from');
    expect(bad([{ provider: 'a', model: 'm1', for: ['m1'] }]).error?.message).toContain('must not be the model');
    expect(bad([{ provider: 'a', model: 'm1', for: ['zz'] }]).error?.message).toContain('fallback "for" names models not listed for provider "a": zz');
    expect(providersConfigSchema.safeParse([{ ...base, failover: { afterAttempts: 0 } }]).success).toBe(false);
    // A tree's catalogue is checked the same way.
    expect(providerCatalogueSchema.safeParse({ a: { models: ['m1'], fallbacks: [{ provider: 'b', model: 'x' }] } }).error?.issues[0]?.message).toContain('not in the catalogue');
  });
});

describe('outages', () => {
  it('counts 529, 5xx, dropped connections and mid-stream overload; never a 4xx or a 429', () => {
    const outage = (err: unknown) => isOutage(classifyModelError(err));
    expect(outage(apiError(529, 'overloaded_error'))).toBe(true);
    expect(outage(apiError(500))).toBe(true);
    expect(outage(apiError(503))).toBe(true);
    expect(outage(new Anthropic.APIConnectionError({ message: 'refused' }))).toBe(true);
    expect(outage(new Anthropic.APIError(undefined, { error: { type: 'overloaded_error', message: 'x' } }, 'x', undefined))).toBe(true);
    for (const status of [400, 401, 403, 404, 408, 413, 422, 429]) expect(outage(apiError(status))).toBe(false);
  });

  it('a call with a fallback gives up on an outage after afterAttempts, as ModelUnavailable; without one it retries as before', () => {
    const overloaded = classifyModelError(apiError(529, 'overloaded_error'));
    const to = { afterAttempts: 2, provider: 'anthropic', model: 'claude-sonnet-4-6' };
    expect(capAttempts(overloaded, 1, to)).toBe(overloaded);
    const moved = capAttempts(overloaded, 2, to);
    expect(moved).toMatchObject({ type: MODEL_UNAVAILABLE_FAILURE, nonRetryable: true });
    expect(moved.message).toContain('anthropic (claude-sonnet-4-6) unavailable after 2 attempts');
    // Overload without a fallback: waited out, however long.
    expect(capAttempts(overloaded, 500).nonRetryable).toBeFalsy();
    // A 400 fails as it always did, with or without a fallback.
    const invalid = classifyModelError(apiError(400, 'invalid_request_error'));
    expect(capAttempts(invalid, 5, to)).toMatchObject({ type: 'ModelInvalidRequest', nonRetryable: true });
    // A 5xx without a fallback still gives up after MODEL_ATTEMPTS.
    expect(capAttempts(classifyModelError(apiError(500)), MODEL_ATTEMPTS)).toMatchObject({ type: 'ModelServerError', nonRetryable: true });
    expect(capAttempts(ApplicationFailure.create({ type: 'ModelRateLimited', message: 'slow down', details: [{ status: 429 }] }), 9, to).type).toBe('ModelRateLimited');
  });
});

describe('an agent’s failover state', () => {
  const chain = [
    { provider: 'anthropic', model: 'claude-sonnet-4-6' },
    { provider: 'openai', model: 'gpt-4.1' },
    { provider: 'gemini', model: 'gemini-2.5-flash' },
  ];
  const usage = { ...ZERO_USAGE, inputTokens: 100, outputTokens: 10 };

  it('stays on the fallback while the cooldown runs, then tries the primary first; the primary serving moves it back', () => {
    const book = new FailoverBook();
    expect(book.start(chain, 0)).toBe(0);
    const sw = book.failed(chain, 0, 1_000, 1, 'overloaded', 5_000);
    expect(sw).toMatchObject({ from: chain[0], to: chain[1], at: 1_000, turn: 1 });
    expect(book.start(chain, 5_999)).toBe(1);
    expect(book.served(chain, 1, 2_000, 2, usage, 0.5)).toBeUndefined();
    expect(failoverStatus(book, chain, 3_000)).toMatchObject({ serving: chain[1], until: new Date(6_000).toISOString(), switches: 1, fallbackCalls: { calls: 1, costUsd: 0.5 } });
    // Cooldown over: the primary is tried first; the fallback's place is kept until it serves.
    expect(book.start(chain, 6_000)).toBe(0);
    expect(failoverStatus(book, chain, 6_000).serving).toEqual(chain[0]);
    const back = book.served(chain, 0, 6_100, 3, usage, 0.1);
    expect(back).toMatchObject({ from: chain[1], to: chain[0], reason: 'recovered', turn: 3 });
    expect(book.start(chain, 6_200)).toBe(0);
    // The primary's own calls are not counted as fallback calls.
    expect(book.state.fallbackCalls.calls).toBe(1);
    expect(book.split({ ...ZERO_USAGE, inputTokens: 300, outputTokens: 30 })).toEqual({ primary: { ...ZERO_USAGE, inputTokens: 200, outputTokens: 20 }, fallbackCostUsd: 0.5 });
  });

  it('moves down the chain when a fallback is out too, and survives continue-as-new', () => {
    const book = new FailoverBook();
    expect(book.carry()).toBeUndefined();
    book.failed(chain, 0, 0, 1, 'x', 60_000);
    book.failed(chain, 1, 10, 1, 'y', 60_000);
    expect(book.start(chain, 20)).toBe(2);
    const next = new FailoverBook();
    next.adopt(failoverStateSchema.parse(JSON.parse(JSON.stringify(book.carry()))));
    expect(next.start(chain, 30)).toBe(2);
    expect(next.state.switches).toBe(2);
    // A shorter chain (a changed configuration) falls back to the primary.
    expect(next.start(chain.slice(0, 2), 30)).toBe(0);
  });
});
