/**
 * cacheWhileWaiting's pure parts: `ttl-1h` requests mark every breakpoint 1h (the caller's
 * own system/tool markers included, so no 1h entry follows a 5m one) with the same cache-key
 * bytes otherwise; keep-alive timing and max_tokens; 1-hour writes priced 2×; usage sums
 * keeping the 1h part apart; the option's validation.
 */
import { addUsage, subtractUsage, ZERO_USAGE, type Usage } from '../../../src/shared/messages-api/anthropic';
import { CACHE_TTL_MS, lastBreakpointTtl } from '../../../src/shared/prefix/cache-break';
import { KEEP_ALIVE_AT, keepAliveDueAt, keepAliveMaxTokens, ttlFor, ttlMsAt } from '../../../src/shared/prefix/cache-warmth';
import { validateForkInput } from '../../../src/shared/wire/fork-input-validation';
import type { RequestContext } from '../../../src/shared/wire/messages';
import { estimateCostUsd } from '../../../src/shared/providers/pricing';
import { buildMessagesRequest } from '../../../src/shared/messages-api/request';
import { newLedger } from '../../../src/shared/tree/tree-ledger';
import { chargeRequestSchema } from '../../../src/shared/tree/tree-ledger-requests';
import { charge } from '../../../src/shared/tree/tree-ledger-rules';
import { ledgerView } from '../../../src/shared/tree/tree-ledger-view';
import type { ModelCallInput, ModelCallResult } from '../../../src/shared/wire/activity-io';
import { parseCarriedState } from '../../../src/shared/wire/carried-state';
import { CacheWarmth } from '../../../src/workflows/fork/cache-warmth';
import { assistant, markerPaths, text, toolResult, toolUse, TOOLS, user } from './kit';

const ctxOf = (over: Partial<RequestContext> = {}): RequestContext => ({ model: 'm', system: 'sys', tools: TOOLS, maxTokens: 100, cacheKeyHash: 'k', ...over });
const conversation = [user(text('go')), assistant(toolUse('a')), user(toolResult('a')), assistant(toolUse('b')), user(toolResult('b'))];

/** The body with every marker removed: what the cache keys hash. */
const unmarked = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(unmarked) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).flatMap(([k, x]) => (k === 'cache_control' ? [] : [[k, unmarked(x)]]))) : v;

describe('ttl-1h requests', () => {
  it('mark the same blocks as 5m requests, each with ttl 1h, and are the same bytes without markers', () => {
    const five = buildMessagesRequest(ctxOf(), conversation);
    const hour = buildMessagesRequest(ctxOf(), conversation, { ttl: '1h' });
    expect(markerPaths(hour)).toEqual(markerPaths(five));
    expect(markerPaths(hour).length).toBeGreaterThan(1);
    expect(JSON.stringify(hour).match(/"cache_control":\{[^}]*\}/g)).toEqual(Array(markerPaths(hour).length).fill('"cache_control":{"type":"ephemeral","ttl":"1h"}'));
    expect(unmarked(hour)).toEqual(unmarked(five));
    expect(lastBreakpointTtl(hour)).toBe('1h');
    expect(lastBreakpointTtl(five)).toBe('5m');
  });

  it('turn the caller’s own 5m markers on system and tools into 1h ones (a 1h entry may not follow a 5m one)', () => {
    const system = [text('a', { type: 'ephemeral' }), text('b')];
    const tools = [{ ...TOOLS[0]!, cache_control: { type: 'ephemeral' as const } }, ...TOOLS.slice(1)];
    const body = buildMessagesRequest(ctxOf({ system, tools }), conversation, { ttl: '1h' });
    expect(body.tools![0]!.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(typeof body.system === 'string' ? undefined : body.system![0]!.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    // The caller's objects are not changed.
    expect(system[0]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(tools[0]!.cache_control).toEqual({ type: 'ephemeral' });
    // Without the option, nothing changes: the same objects go out.
    const plain = buildMessagesRequest(ctxOf({ system, tools }), conversation);
    expect(plain.system).toBe(system);
    expect(plain.tools).toBe(tools);
  });
});

describe('keep-alive timing and size', () => {
  it('is due at 80% of the TTL after the last call was scheduled; a worker clock scale shortens the TTL', () => {
    expect(KEEP_ALIVE_AT).toBe(0.8);
    expect(keepAliveDueAt(1_000, CACHE_TTL_MS['5m'])).toBe(1_000 + 4 * 60_000);
    expect(ttlMsAt('5m')).toBe(300_000);
    expect(ttlMsAt('5m', 100)).toBe(3_000);
    expect(ttlMsAt('1h', 100)).toBe(36_000);
    expect(ttlFor('ttl-1h')).toBe('1h');
    expect(ttlFor('keep-alive')).toBe('5m');
    expect(ttlFor(undefined)).toBe('5m');
  });

  it('asks for one token, or just over the thinking budget (thinking stays: it is part of the messages cache key)', () => {
    expect(keepAliveMaxTokens({})).toBe(1);
    expect(keepAliveMaxTokens({ thinking: { type: 'enabled', budget_tokens: 1024 } })).toBe(1025);
    expect(keepAliveMaxTokens({ thinking: { type: 'disabled' } })).toBe(1);
  });
});

describe('1-hour writes in usage and cost', () => {
  const u = (over: Partial<Usage>): Usage => ({ ...ZERO_USAGE, ...over });

  it('prices 1h writes at 2× input and 5m writes at 1.25×', () => {
    // sonnet: $3 per million input tokens.
    expect(estimateCostUsd('claude-sonnet-4-6', u({ cacheCreationInputTokens: 1_000_000 }))).toBe(3.75);
    expect(estimateCostUsd('claude-sonnet-4-6', u({ cacheCreationInputTokens: 1_000_000, cacheCreation1hInputTokens: 1_000_000 }))).toBe(6);
    expect(estimateCostUsd('claude-sonnet-4-6', u({ cacheCreationInputTokens: 1_000_000, cacheCreation1hInputTokens: 400_000 }))).toBe(0.6 * 3.75 + 0.4 * 6);
    expect(estimateCostUsd('claude-sonnet-4-6', u({ cacheReadInputTokens: 1_000_000 }))).toBe(0.3);
  });

  it('sums and subtracts the 1h part, and leaves it out when zero (older usage reads the same)', () => {
    expect(addUsage(u({ cacheCreationInputTokens: 5 }), u({ cacheCreationInputTokens: 7 }))).toEqual(u({ cacheCreationInputTokens: 12 }));
    expect(Object.keys(addUsage(ZERO_USAGE, ZERO_USAGE))).not.toContain('cacheCreation1hInputTokens');
    expect(addUsage(u({ cacheCreationInputTokens: 5, cacheCreation1hInputTokens: 5 }), u({ cacheCreationInputTokens: 7 }))).toEqual(u({ cacheCreationInputTokens: 12, cacheCreation1hInputTokens: 5 }));
    expect(subtractUsage(u({ cacheCreationInputTokens: 12, cacheCreation1hInputTokens: 5 }), u({ cacheCreationInputTokens: 7, cacheCreation1hInputTokens: 5 }))).toEqual(u({ cacheCreationInputTokens: 5 }));
  });
});

describe('the cacheWhileWaiting option', () => {
  it('takes the three policies, is absent by default, and refuses anything else', () => {
    for (const policy of ['off', 'ttl-1h', 'keep-alive'] as const) {
      const v = validateForkInput({ prompt: 'p', cacheWhileWaiting: policy });
      expect(v.ok && v.value.cacheWhileWaiting).toBe(policy);
    }
    const none = validateForkInput({ prompt: 'p' });
    expect(none.ok && none.value.cacheWhileWaiting).toBeUndefined();
    const bad = validateForkInput({ prompt: 'p', cacheWhileWaiting: '1h' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.issues.join('\n')).toMatch(/^cacheWhileWaiting: /m);
  });
});

describe('keep-alives in the tree ledger', () => {
  it('are charged once per number, count no turn, and leave turn charges as they were', () => {
    const ledger = newLedger({ agentId: 'root', model: 'claude-sonnet-4-6', budget: 1_000_000 }, { maxTreeRunning: 4, maxTreeSpawns: 4 });
    const usage: Usage = { ...ZERO_USAGE, inputTokens: 10, cacheCreationInputTokens: 20_000, outputTokens: 50 };
    expect(charge(ledger, { agentId: 'root', turn: 1, model: 'claude-sonnet-4-6', usage, toolUses: 0 })).toBe(true);
    const read: Usage = { ...ZERO_USAGE, inputTokens: 10, cacheReadInputTokens: 20_000 };
    const keep = { agentId: 'root', turn: 1, model: 'claude-sonnet-4-6', usage: read, toolUses: 0 };
    expect(chargeRequestSchema.safeParse({ ...keep, keepAlive: 1 }).success).toBe(true);
    expect(chargeRequestSchema.safeParse({ ...keep, keepAlive: 0 }).success).toBe(false);
    expect(charge(ledger, { ...keep, keepAlive: 1 })).toBe(true);
    expect(charge(ledger, { ...keep, keepAlive: 1 })).toBe(false); // a retried charge
    expect(charge(ledger, { ...keep, keepAlive: 2 })).toBe(true);
    const [root] = ledgerView(ledger);
    expect(root).toMatchObject({ turns: 1, keepAlives: 2, usage: addUsage(usage, addUsage(read, read)) });
    expect(root!.charged).toBe(10 + 20_000 + 50 + 2 * (10 + 2_000));
    // The next turn is charged as usual.
    expect(charge(ledger, { agentId: 'root', turn: 2, model: 'claude-sonnet-4-6', usage: read, toolUses: 0 })).toBe(true);
    expect(ledgerView(ledger)[0]).toMatchObject({ turns: 2, keepAlives: 2 });
  });
});

describe('CacheWarmth (the workflow’s keep-alive state, pure)', () => {
  const input: ModelCallInput = {
    run: { workflowId: 'w', runId: 'r1' },
    agentId: 'w',
    turn: 3,
    messageCount: 5,
    digest: 'd',
    contextKey: 'k',
    tail: { from: 4, messages: [user(toolResult('a'))] },
    prefixAt: 3,
    budget: { left: 100, ledger: { rootId: 'root', toolUses: 2 } },
  };
  const result: ModelCallResult = { message: { role: 'assistant', content: [] }, stopReason: 'end_turn', usage: ZERO_USAGE, model: 'm', ttlMs: 3_000 };

  it('keeps nothing unless its policy is keep-alive', () => {
    for (const policy of ['off', 'ttl-1h'] as const) {
      const w = new CacheWarmth(policy);
      w.called(input, 1_000, result);
      expect(w.dueAt()).toBeUndefined();
      expect(w.enter()).toBeUndefined();
      expect(w.carry()).toBeUndefined();
    }
    expect(new CacheWarmth('ttl-1h').cacheTtl).toBe('1h');
    expect(new CacheWarmth('keep-alive').cacheTtl).toBeUndefined();
  });

  it('repeats the last call without its cache-break facts, numbered over runs, due by the reported TTL', () => {
    const w = new CacheWarmth('keep-alive');
    w.called(input, 1_000, result);
    expect(w.dueAt()).toBe(1_000 + 2_400);
    const first = w.nextKeepAlive(0)!;
    expect(first).toEqual({ ...input, prefixAt: undefined, keepAlive: 1 } satisfies ModelCallInput);
    expect('prefixAt' in first).toBe(false);
    expect(w.nextKeepAlive(0)!.keepAlive).toBe(2); // two in flight never share a number
    expect(w.nextKeepAlive(7)!.keepAlive).toBe(8); // earlier runs sent 7
    w.refreshed(2_000, { ...result, ttlMs: undefined });
    expect(w.dueAt()).toBe(2_000 + 240_000); // no ttlMs: the provider's 5 minutes
  });

  it('starts one keep-alive loop per wait; a loop of an earlier wait stops', () => {
    const w = new CacheWarmth('keep-alive');
    const g1 = w.enter()!;
    expect(w.enter()).toBeUndefined(); // a second decision awaited in the same round
    expect(w.waiting(g1)).toBe(true);
    w.leave();
    w.leave();
    expect(w.waiting(g1)).toBe(false);
    const g2 = w.enter()!;
    expect(g2).not.toBe(g1);
    expect(w.waiting(g1)).toBe(false);
    expect(w.waiting(g2)).toBe(true);
  });

  it('crosses continue-as-new inside the carried state, parsed', () => {
    const w = new CacheWarmth('keep-alive');
    w.called(input, 1_000, result);
    const carried = w.carry()!;
    const state = parseCarriedState(JSON.parse(JSON.stringify({ v: 2, turns: 3, toolUses: 2, usage: ZERO_USAGE, budgetUsage: ZERO_USAGE, startedAt: 'now', inbox: [], inboxSeq: 0, children: [], childCounter: 0, touched: [], maxTurnsReached: false, warmth: carried })));
    expect(state.ok).toBe(true);
    const next = new CacheWarmth('keep-alive');
    next.adopt(state.ok ? state.state.warmth : undefined);
    expect(next.dueAt()).toBe(w.dueAt());
    expect(next.nextKeepAlive(4)).toEqual(w.nextKeepAlive(4));
    const bad = parseCarriedState({ v: 2, turns: 3, toolUses: 2, usage: ZERO_USAGE, budgetUsage: ZERO_USAGE, startedAt: 'now', inbox: [], inboxSeq: 0, children: [], childCounter: 0, touched: [], maxTurnsReached: false, warmth: { ...carried, input: { ...carried.input, digest: 7 } } });
    expect(bad.ok).toBe(false);
  });
});
