/**
 * Fork budget policies (equal, remaining, proportional, fixed:N; unreadable → equal with a
 * warning), a child's token budget under each, and the exhaustion predicate.
 */
import type { Usage } from '../../../src/shared/messages-api/anthropic';
import {
  budgetExhausted,
  budgetSchema,
  childBudget,
  DEFAULT_MAX_TOKENS,
  formatForkBudgetPolicy,
  parseForkBudgetPolicy,
  remainingTokens,
  tokensCharged,
  type ForkBudgetPolicy,
} from '../../../src/shared/tree/budget';

const usage = (inputTokens: number, cacheReadInputTokens: number, cacheCreationInputTokens: number, outputTokens: number): Usage => ({
  inputTokens,
  cacheReadInputTokens,
  cacheCreationInputTokens,
  outputTokens,
});

describe('parseForkBudgetPolicy', () => {
  it.each<[unknown, ForkBudgetPolicy]>([
    ['equal', { kind: 'equal' }],
    ['remaining', { kind: 'remaining' }],
    ['proportional', { kind: 'proportional' }],
    ['fixed:20000', { kind: 'fixed', tokens: 20_000 }],
    ['  Fixed:7 ', { kind: 'fixed', tokens: 7 }],
    [{ kind: 'fixed', tokens: 300 }, { kind: 'fixed', tokens: 300 }],
    [{ kind: 'proportional' }, { kind: 'proportional' }],
  ])('reads %j', (raw, policy) => {
    expect(parseForkBudgetPolicy(raw)).toEqual({ policy });
  });

  it('reads an absent policy as equal, silently', () => {
    expect(parseForkBudgetPolicy(undefined)).toEqual({ policy: { kind: 'equal' } });
  });

  it.each<[unknown, RegExp]>([
    ['half', /Unknown fork budget policy "half"; using "equal"/],
    ['fixed:0', /"fixed:0"/],
    ['fixed:-5', /"fixed:-5"/],
    ['fixed:1.5', /"fixed:1.5"/],
    ['fixed:', /"fixed:"/],
    ['fixed:99999999999999999999', /"fixed:99999999999999999999"/],
    [{ kind: 'fixed', tokens: 0 }, /tokens: must be more than 0/],
    [{ kind: 'fixed' }, /tokens: is missing/],
    [{ kind: 'half' }, /kind: must be one of "equal", "remaining", "proportional", "fixed"/],
    [{ kind: 'equal', tokens: 5 }, /has fields forkflow does not accept here: tokens/],
    [12, /the policy: must be an object/],
  ])('falls back to equal with a warning for %j', (raw, warning) => {
    const parsed = parseForkBudgetPolicy(raw);
    expect(parsed.policy).toEqual({ kind: 'equal' });
    expect(parsed.warning).toMatch(warning);
  });

  it('formats back to the string form', () => {
    for (const s of ['equal', 'remaining', 'proportional', 'fixed:42']) expect(formatForkBudgetPolicy(parseForkBudgetPolicy(s).policy)).toBe(s);
  });
});

describe('childBudget', () => {
  const base = { parentRemaining: 90_000, liveSiblings: 2, perAgentCap: 40_000, defaultBudget: 25_000 };

  it('equal: the default per-agent budget, whatever the parent has left, capped', () => {
    expect(childBudget({ ...base, policy: { kind: 'equal' } })).toBe(25_000);
    expect(childBudget({ ...base, policy: { kind: 'equal' }, parentRemaining: 1 })).toBe(25_000);
    expect(childBudget({ ...base, policy: { kind: 'equal' }, perAgentCap: 10_000 })).toBe(10_000);
    expect(childBudget({ policy: { kind: 'equal' }, parentRemaining: 0, liveSiblings: 0 })).toBe(DEFAULT_MAX_TOKENS);
  });

  it('remaining: everything the parent has left, capped', () => {
    expect(childBudget({ ...base, policy: { kind: 'remaining' }, parentRemaining: 30_000 })).toBe(30_000);
    expect(childBudget({ ...base, policy: { kind: 'remaining' } })).toBe(40_000);
    expect(childBudget({ ...base, policy: { kind: 'remaining' }, perAgentCap: undefined })).toBe(90_000);
    expect(childBudget({ ...base, policy: { kind: 'remaining' }, parentRemaining: -500 })).toBe(0);
  });

  it('proportional: the remainder split across the live forks including the new one, floored, capped', () => {
    expect(childBudget({ ...base, policy: { kind: 'proportional' } })).toBe(30_000);
    expect(childBudget({ ...base, policy: { kind: 'proportional' }, parentRemaining: 10_000 })).toBe(3_333);
    expect(childBudget({ ...base, policy: { kind: 'proportional' }, liveSiblings: 0 })).toBe(40_000);
    expect(childBudget({ ...base, policy: { kind: 'proportional' }, liveSiblings: 0, perAgentCap: undefined })).toBe(90_000);
  });

  it('fixed:N: N, capped by the per-agent maximum', () => {
    expect(childBudget({ ...base, policy: { kind: 'fixed', tokens: 12_345 } })).toBe(12_345);
    expect(childBudget({ ...base, policy: { kind: 'fixed', tokens: 1_000_000 } })).toBe(40_000);
    expect(childBudget({ ...base, policy: { kind: 'fixed', tokens: 12_345 }, parentRemaining: 0 })).toBe(12_345);
  });

  it('refuses numbers that are not token counts', () => {
    expect(() => childBudget({ ...base, policy: { kind: 'remaining' }, parentRemaining: NaN })).toThrow(RangeError);
    expect(() => childBudget({ ...base, policy: { kind: 'equal' }, perAgentCap: Infinity })).toThrow(/perAgentCap/);
  });
});

describe('Budget', () => {
  it('defaults maxTokens to 50,000 and leaves turns and tool calls unlimited', () => {
    expect(budgetSchema.parse({})).toEqual({ maxTokens: 50_000 });
    expect(budgetSchema.parse({ maxTurns: 0, maxToolCalls: 3 })).toEqual({ maxTokens: 50_000, maxTurns: 0, maxToolCalls: 3 });
    expect(budgetSchema.safeParse({ maxTokens: 0 }).success).toBe(false);
    expect(budgetSchema.safeParse({ maxTurns: 1.5 }).success).toBe(false);
    expect(budgetSchema.safeParse({ maxTokenz: 5 }).success).toBe(false);
  });

  it('charges uncached input, cache writes and output in full, cache reads at a tenth', () => {
    expect(tokensCharged(usage(100, 20_000, 3_000, 400))).toBe(100 + 2_000 + 3_000 + 400);
    expect(remainingTokens(usage(100, 20_000, 3_000, 400), { maxTokens: 50_000 })).toBe(44_500);
    // Re-reading a large inherited prefix is cheap; missing it (a write) is not.
    expect(remainingTokens(usage(100, 60_000, 0, 0), { maxTokens: 50_000 })).toBe(43_900);
    expect(remainingTokens(usage(100, 0, 60_000, 0), { maxTokens: 50_000 })).toBe(0);
    expect(tokensCharged(usage(0, 1, 0, 0))).toBe(1); // a partial tenth still counts
  });
});

describe('budgetExhausted', () => {
  const budget = budgetSchema.parse({ maxTokens: 10_000, maxTurns: 5, maxToolCalls: 8 });
  const none = usage(0, 0, 0, 0);

  it('keeps going below every limit', () => {
    expect(budgetExhausted(usage(1_000, 5_000, 2_000, 1_999), { turns: 4, toolCalls: 7 }, budget)).toBeUndefined();
  });

  it('fires on tokens once charged tokens reach maxTokens, counting cache reads and writes', () => {
    // 1,000 + 4,500 written + 500 out = 6,000; the 40,000 read adds its tenth and reaches the limit.
    expect(budgetExhausted(usage(1_000, 40_000, 4_500, 500), { turns: 1, toolCalls: 0 }, budget)).toEqual({ limit: 'tokens', used: 10_000, max: 10_000 });
    expect(budgetExhausted(usage(1_000, 7_000, 1_500, 500), { turns: 1, toolCalls: 0 }, budget)).toBeUndefined();
    expect(budgetExhausted(usage(0, 0, 9_999, 0), { turns: 1, toolCalls: 0 }, budget)).toBeUndefined();
    expect(budgetExhausted(usage(0, 0, 9_999, 1), { turns: 1, toolCalls: 0 }, budget)?.limit).toBe('tokens');
  });

  it('fires on turns and on tool calls', () => {
    expect(budgetExhausted(none, { turns: 5, toolCalls: 0 }, budget)).toEqual({ limit: 'turns', used: 5, max: 5 });
    expect(budgetExhausted(none, { turns: 1, toolCalls: 9 }, budget)).toEqual({ limit: 'tool_calls', used: 9, max: 8 });
  });

  it('reports tokens first, then turns, then tool calls, when several are reached', () => {
    expect(budgetExhausted(usage(10_000, 0, 0, 0), { turns: 9, toolCalls: 9 }, budget)?.limit).toBe('tokens');
    expect(budgetExhausted(none, { turns: 9, toolCalls: 9 }, budget)?.limit).toBe('turns');
  });

  it('treats absent turn and tool-call limits as unlimited, and maxTurns 0 as no model call at all', () => {
    const tokensOnly = budgetSchema.parse({});
    expect(budgetExhausted(none, { turns: 10_000, toolCalls: 10_000 }, tokensOnly)).toBeUndefined();
    expect(budgetExhausted(none, { turns: 0, toolCalls: 0 }, budgetSchema.parse({ maxTurns: 0 }))).toEqual({ limit: 'turns', used: 0, max: 0 });
  });
});
