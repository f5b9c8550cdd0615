/**
 * The pure parts of context management (src/shared/context/): windows per model and the 1M
 * beta, policies and their defaults, the provider edits a policy sends, the cut a request
 * sends (boundary and clearing), where the kept turns start, the summary message, and when a
 * snapshot is compacted for its forks.
 */
import type { MessageParam } from '../../../src/shared/messages-api/anthropic';
import { CLEARED_TOOL_RESULT, COMPACT_BETA, CONTEXT_MANAGEMENT_BETA, providerEdits } from '../../../src/shared/context/edits';
import { contextManagementSchema, contextPolicyOf, policyName, providerTrigger, thresholdTokens } from '../../../src/shared/context/policy';
import { snapshotCompactionFor } from '../../../src/shared/context/snapshot';
import { compactionRequestBlock, isSummaryMessage, summaryMaxTokens, summaryMessage } from '../../../src/shared/context/summary';
import { clearingPoint, messageTokens, recentTurnsStart, viewMessages } from '../../../src/shared/context/view';
import { CONTEXT_1M_BETA, grantedWindow, modelWindow, parsePromptTooLong, promptTooLongMessage, resolveWindow, windowRefusal } from '../../../src/shared/context/windows';

describe('windows', () => {
  it.each([
    ['claude-sonnet-4-6', 1_000_000],
    ['claude-sonnet-4-5-20250929', 1_000_000],
    ['claude-sonnet-5-5', 1_000_000],
    ['claude-opus-4-6', 1_000_000],
    ['claude-opus-5-5', 1_000_000],
    ['claude-opus-4-5', undefined],
    ['claude-haiku-4-5', undefined],
    ['some-local-model', undefined],
  ])('%s: 200K, and a 1M window with the beta: %s', (model, extended) => {
    expect(modelWindow(model)).toEqual({ standard: 200_000, ...(extended ? { extended } : {}) });
    expect(grantedWindow(model, [CONTEXT_1M_BETA])).toBe(extended ?? 200_000);
    expect(grantedWindow(model, [])).toBe(200_000);
  });

  it('an override below the standard window plans against it; above it asks for the 1M window, which the model must have', () => {
    expect(resolveWindow('claude-sonnet-4-6')).toEqual({ tokens: 200_000, betas: [] });
    expect(resolveWindow('claude-sonnet-4-6', 20_000)).toEqual({ tokens: 20_000, betas: [] });
    expect(resolveWindow('claude-sonnet-4-6', 1_000_000)).toEqual({ tokens: 1_000_000, betas: [CONTEXT_1M_BETA] });
    expect(windowRefusal('claude-sonnet-4-6', 1_000_000)).toBeUndefined();
    expect(windowRefusal('claude-haiku-4-5', 500_000)).toMatch(/no 1M-token window/);
    expect(windowRefusal('claude-opus-4-6', 2_000_000)).toMatch(/1000000 with the context-1m-2025-08-07 beta/);
  });

  it("reads the API's refusal back", () => {
    expect(promptTooLongMessage(201_234, 200_000)).toBe('prompt is too long: 201234 tokens > 200000 maximum');
    expect(parsePromptTooLong('prompt is too long: 201234 tokens > 200000 maximum')).toEqual({ tokens: 201_234, window: 200_000 });
    expect(parsePromptTooLong('max_tokens: too large')).toBeUndefined();
  });
});

describe('policies', () => {
  it('defaults to forkflow compaction at 80% of the window, and reads shorthands and the object form', () => {
    expect(contextPolicyOf(undefined)).toEqual({ strategy: 'compact', by: 'forkflow', threshold: 0.8, keepRecent: 0.1, keepToolUses: 3 });
    expect(policyName(contextPolicyOf('provider'))).toBe('provider compaction');
    expect(policyName(contextPolicyOf('clear-tool-results'))).toBe('provider clear-tool-results');
    expect(policyName(contextPolicyOf('off'))).toBe('off');
    expect(contextPolicyOf({ strategy: 'clear-tool-results', threshold: 0.5, keepToolUses: 1 })).toMatchObject({ by: 'forkflow', threshold: 0.5, keepToolUses: 1 });
    expect(thresholdTokens(contextPolicyOf(undefined), 200_000)).toBe(160_000);
  });

  it('refuses what it cannot act on', () => {
    expect(contextManagementSchema.safeParse('squeeze').success).toBe(false);
    expect(contextManagementSchema.safeParse({ strategy: 'compact', threshold: 1 }).success).toBe(false);
    expect(contextManagementSchema.safeParse({ strategy: 'compact', keepRecent: 0.6 }).success).toBe(false);
    expect(contextManagementSchema.safeParse({ strategy: 'compact', extra: true }).success).toBe(false);
  });

  it("sends the provider's edits with their beta headers; its compaction trigger is never below the API's 50,000", () => {
    expect(providerEdits(contextPolicyOf(undefined), 200_000, false)).toEqual({ edits: [], betas: [] });
    expect(providerEdits(contextPolicyOf('provider'), 200_000, false)).toEqual({ edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 160_000 } }], betas: [COMPACT_BETA] });
    expect(providerTrigger(contextPolicyOf('provider'), 20_000)).toBe(50_000);
    const clearing = providerEdits(contextPolicyOf('clear-tool-results'), 100_000, true);
    expect(clearing.edits.map((e) => e.type)).toEqual(['clear_thinking_20251015', 'clear_tool_uses_20250919']);
    expect(clearing.edits[1]).toMatchObject({ trigger: { value: 80_000 }, keep: { type: 'tool_uses', value: 3 } });
    expect(clearing.betas).toEqual([CONTEXT_MANAGEMENT_BETA]);
  });
});

const exchange = (i: number, text = `result ${i}`): MessageParam[] => [
  { role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'Read', input: {} }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: text }] },
];
const conversation = (n: number): MessageParam[] => [{ role: 'user', content: 'go' }, ...Array.from({ length: n }, (_, i) => exchange(i)).flat()];

describe('the cut a request sends', () => {
  it('starts at the boundary and clears tool results before the clearing point, leaving the calls', () => {
    const all = conversation(4);
    expect(viewMessages(all, undefined)).toBe(all);
    expect(viewMessages(all, { from: 5 })).toEqual(all.slice(5));
    const cleared = viewMessages(all, { clearedThrough: 5 });
    expect(cleared.map((m) => (m.role === 'user' && Array.isArray(m.content) && m.content[0]?.type === 'tool_result' ? m.content[0].content : '·'))).toEqual(['·', '·', CLEARED_TOOL_RESULT, '·', CLEARED_TOOL_RESULT, '·', 'result 2', '·', 'result 3']);
    expect(cleared[1]).toBe(all[1]);
    expect(viewMessages(all, { from: 3, clearedThrough: 5 })[1]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: CLEARED_TOOL_RESULT }] });
  });

  it('the clearing point keeps the last results; where kept turns start fits their budget and begins with a reply', () => {
    const all = conversation(4);
    expect(clearingPoint(all, 0, 2)).toBe(5);
    expect(clearingPoint(all, 10, 0)).toBe(19);
    expect(clearingPoint(all, 0, 4)).toBeUndefined();
    const pair = messageTokens(all[7]!) + messageTokens(all[8]!);
    expect(recentTurnsStart(all, 0, 0, pair)).toBe(7);
    expect(recentTurnsStart(all, 0, 0, pair - 1)).toBe(9);
    expect(recentTurnsStart(all, 0, 0, 1_000_000)).toBe(1);
    // Something is always summarised: the kept turns start after the boundary.
    expect(recentTurnsStart(all, 0, 6, 1_000_000)).toBe(7);
  });
});

describe('summaries', () => {
  it('a summary message opens with a tagged notice that marks the boundary, then the summary', () => {
    const m = summaryMessage('  The work so far.  ', { compaction: 2, turn: 40, from: 3, to: 70 });
    expect(isSummaryMessage(m)).toBe(true);
    expect(JSON.stringify(m)).toContain('<forkflow-compacted compaction=\\"2\\" turn=\\"40\\" messages=\\"3-70\\">');
    expect((m.content[0] as { text: string }).text.endsWith('</forkflow-compacted>\nThe work so far.')).toBe(true);
    expect(isSummaryMessage({ role: 'user', content: 'hello' })).toBe(false);
    expect(compactionRequestBlock('the API keys').text).toMatch(/^<forkflow-compaction-request>[\s\S]*Left to do[\s\S]*Pay particular attention to: the API keys\n<\/forkflow-compaction-request>$/);
    expect(summaryMaxTokens(200_000)).toBe(8_192);
    expect(summaryMaxTokens(20_000)).toBe(2_000);
  });

  it('a snapshot over its forks’ threshold is compacted for them once; under it, or under `off`, it is not', () => {
    const snapshot = (tokens: number) => ({ system: 's', tools: [], model: 'claude-sonnet-5-5', messages: [{ role: 'user' as const, content: 'x'.repeat(tokens * 4) }] });
    expect(snapshotCompactionFor(snapshot(150_000), undefined)).toEqual({});
    expect(snapshotCompactionFor(snapshot(170_000), undefined)).toEqual({ compact: { window: 200_000, keepRecent: 0.1 } });
    expect(snapshotCompactionFor(snapshot(170_000), { contextManagement: 'off' })).toEqual({});
    expect(snapshotCompactionFor(snapshot(170_000), { contextWindow: 1_000_000 })).toEqual({});
    expect(snapshotCompactionFor(snapshot(30_000), { contextWindow: 20_000, contextManagement: { strategy: 'compact', instructions: 'keys' } })).toEqual({ compact: { window: 20_000, keepRecent: 0.1, instructions: 'keys' } });
  });
});
