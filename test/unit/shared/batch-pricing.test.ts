/**
 * Batch pricing: the batched part of a usage costs half of every token kind, sums and
 * differences keep that part, and a usage without one reads and prices as before.
 */
import { addUsage, subtractUsage, ZERO_USAGE, type Usage } from '../../../src/shared/messages-api/anthropic';
import { batchSavingUsd, estimateCostUsd } from '../../../src/shared/providers/pricing';
import { usageSchema } from '../../../src/shared/tree/tree-ledger';

const call: Usage = { inputTokens: 1000, outputTokens: 500, cacheReadInputTokens: 20_000, cacheCreationInputTokens: 3000, cacheCreation1hInputTokens: 1000 };
const { batch: _none, ...plain } = call;
const batched: Usage = { ...call, batch: plain };

describe('batch pricing', () => {
  it('prices a batched call at half of the same call made interactively, cache traffic included', () => {
    const full = estimateCostUsd('claude-sonnet-4-6', call);
    expect(full).toBeGreaterThan(0);
    expect(estimateCostUsd('claude-sonnet-4-6', batched)).toBeCloseTo(full / 2, 6);
    expect(batchSavingUsd('claude-sonnet-4-6', batched)).toBeCloseTo(full / 2, 6);
    expect(batchSavingUsd('claude-sonnet-4-6', call)).toBe(0);
  });

  it('sums and subtracts the batched part beside the totals', () => {
    const both = addUsage(call, batched);
    expect(both.inputTokens).toBe(2000);
    expect(both.batch).toEqual(plain);
    expect(estimateCostUsd('claude-opus-4-6', both)).toBeCloseTo(estimateCostUsd('claude-opus-4-6', call) * 1.5, 6);
    expect(subtractUsage(both, call).batch).toEqual(plain);
    expect(subtractUsage(both, batched).batch).toEqual({ ...ZERO_USAGE });
    expect(addUsage(call, call)).not.toHaveProperty('batch');
  });

  it('parses usage with and without a batched part', () => {
    expect(usageSchema.parse(batched)).toEqual(batched);
    expect(usageSchema.parse(call)).toEqual(call);
    expect(() => usageSchema.parse({ ...call, batch: { inputTokens: -1 } })).toThrow();
  });
});
