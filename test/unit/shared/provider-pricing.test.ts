/**
 * Pricing per provider and model (issue 34 item 5): a provider entry's `pricing` reaches a
 * tree's catalogue, prices cache reads as that provider charges them (OpenAI-compatible
 * `cached_tokens`), and the tree ledger charges each call at its serving provider's price;
 * models nobody priced keep the built-in table, to the same rounding as before.
 */
import { catalogueOf, priceOf } from '../../../src/shared/providers/agent-provider';
import { ZERO_USAGE } from '../../../src/shared/messages-api/anthropic';
import { estimateCostUsd } from '../../../src/shared/providers/pricing';
import { providersConfigSchema } from '../../../src/shared/providers/providers';
import { newLedger } from '../../../src/shared/tree/tree-ledger';
import { admit, charge } from '../../../src/shared/tree/tree-ledger-rules';

const config = providersConfigSchema.parse([
  { name: 'anthropic', kind: 'anthropic', models: ['claude-sonnet-4-6'] },
  { name: 'openai', kind: 'openai-compatible', baseURL: 'http://127.0.0.1:1/v1', apiKeyEnv: 'K', models: ['gpt-4.1'], pricing: { 'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5 } } },
  // The same model id priced differently elsewhere: prices are per provider.
  { name: 'proxy', kind: 'openai-compatible', baseURL: 'http://127.0.0.1:2/v1', apiKeyEnv: 'K', models: ['gpt-4.1'], pricing: { 'gpt-4.1': { input: 4, output: 16 } } },
]);
const catalogue = catalogueOf(config);
// 1M uncached input, 1M cached (cached_tokens), 1M output.
const usage = { ...ZERO_USAGE, inputTokens: 1_000_000, cacheReadInputTokens: 1_000_000, outputTokens: 1_000_000 };

test('a provider entry prices its models, cache reads included; others keep the built-in table', () => {
  expect(priceOf(catalogue, 'openai', 'gpt-4.1')).toEqual({ input: 2, output: 8, cacheRead: 0.5 });
  expect(estimateCostUsd('gpt-4.1', usage, priceOf(catalogue, 'openai', 'gpt-4.1'))).toBeCloseTo(2 + 0.5 + 8, 6);
  // Without cacheRead: a tenth of input, the Anthropic rule.
  expect(estimateCostUsd('gpt-4.1', usage, priceOf(catalogue, 'proxy', 'gpt-4.1'))).toBeCloseTo(4 + 0.4 + 16, 6);
  expect(priceOf(catalogue, 'anthropic', 'claude-sonnet-4-6')).toBeUndefined();
  expect(estimateCostUsd('claude-sonnet-4-6', usage, undefined)).toBeCloseTo(3 + 0.3 + 15, 6);
  // Cache writes: their own price when given, else 1.25× / 2× input.
  const writes = { ...ZERO_USAGE, cacheCreationInputTokens: 1_000_000, cacheCreation1hInputTokens: 400_000 };
  expect(estimateCostUsd('claude-sonnet-4-6', writes)).toBeCloseTo(0.6 * 3 * 1.25 + 0.4 * 3 * 2, 6);
  expect(estimateCostUsd('x', writes, { input: 1, output: 1, cacheWrite5m: 10, cacheWrite1h: 20 })).toBeCloseTo(0.6 * 10 + 0.4 * 20, 6);
  expect(providersConfigSchema.safeParse([{ name: 'a', kind: 'anthropic', pricing: { m: { input: -1, output: 1 } } }]).success).toBe(false);
});

test('the tree ledger charges each call at its serving provider\'s price for its model', () => {
  const ledger = newLedger({ agentId: 'r', model: 'claude-sonnet-4-6', budget: 100_000_000 }, { maxTreeRunning: 5, maxTreeSpawns: 10 });
  admit(ledger, { agentId: 'r.a', parentId: 'r', model: 'gpt-4.1', kind: 'spawn', want: 10_000_000 });
  const prices = (provider: string | undefined, model: string) => priceOf(catalogue, provider ?? 'anthropic', model);
  const small = { ...ZERO_USAGE, inputTokens: 1000, cacheReadInputTokens: 1000, outputTokens: 1000 };
  expect(charge(ledger, { agentId: 'r', turn: 1, model: 'claude-sonnet-4-6', usage: small, toolUses: 0 }, prices)).toBe(true);
  expect(charge(ledger, { agentId: 'r.a', turn: 1, model: 'gpt-4.1', provider: 'openai', usage: small, toolUses: 0 }, prices)).toBe(true);
  expect(charge(ledger, { agentId: 'r.a', turn: 2, model: 'gpt-4.1', provider: 'proxy', usage: small, toolUses: 0 }, prices)).toBe(true);
  expect(ledger.nodes.r?.costUsd).toBe(estimateCostUsd('claude-sonnet-4-6', small));
  expect(ledger.nodes['r.a']?.costUsd).toBeCloseTo(0.002 + 0.0005 + 0.008 + 0.004 + 0.0004 + 0.016, 6);
});
