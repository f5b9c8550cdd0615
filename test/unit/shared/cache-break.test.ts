/**
 * Cache-break diagnosis, pure: when a call counts as a break (first turn of a fork against
 * its whole input, later turns against what the previous call left cached), and why (what
 * changed between the two requests; TTL expiry only when nothing did and the TTL passed).
 */
import type { MessageParam, MessagesRequest, Usage } from '../../../src/shared/messages-api/anthropic';
import {
  CACHE_TTL_MS,
  diagnoseFirstTurn,
  diagnoseLaterTurn,
  lastBreakpointTtl,
  previousRequest,
  requestFacts,
  TTL_EXPIRED,
  UNKNOWN_CACHE_BREAK,
  type RequestFacts,
} from '../../../src/shared/prefix/cache-break';
import type { RequestContext } from '../../../src/shared/wire/messages';
import { buildMessagesRequest } from '../../../src/shared/messages-api/request';
import { snapshotHashes } from '../../../src/shared/prefix/snapshot';
import { assistant, text, TOOLS, user } from './kit';

const ctx: RequestContext = { model: 'claude-sonnet-4-6', system: 'You are careful.', tools: TOOLS, maxTokens: 100, cacheKeyHash: 'k' };
const usage = (read: number, creation: number, input = 10): Usage => ({ inputTokens: input, outputTokens: 5, cacheReadInputTokens: read, cacheCreationInputTokens: creation });

const turn1 = [user(text('start'))];
const turn2 = [...turn1, assistant(text('one')), user(text('go on'))];
const T0 = 1_000_000;

/** The facts of `conversation` sent with `context`, chained at the previous request's length. */
function factsOf(context: RequestContext, conversation: MessageParam[], prefixAt?: number): RequestFacts {
  return requestFacts(context, buildMessagesRequest(context, conversation), prefixAt);
}

describe('requestFacts', () => {
  it('chains the same prefix at the previous length whatever cache markers moved', () => {
    const first = factsOf(ctx, turn1);
    const second = factsOf(ctx, turn2, first.messages);
    // The request end marker moved from turn1's last message to turn2's: ignored.
    expect(second.prefixAt).toBe(first.prefix);
    expect(second.prefix).not.toBe(first.prefix);
    expect(second.messages).toBe(3);
    expect(second.ttl).toBe('5m');
  });

  it('hashes the context as the parent snapshot hashes do, so a fork compares with its parent', () => {
    const facts = factsOf(ctx, turn1);
    const parent = snapshotHashes({ ...ctx, messages: turn1 });
    expect({ system: facts.system, tools: facts.tools, model: facts.model, thinking: facts.thinking }).toEqual({ system: parent.system, tools: parent.tools, model: parent.model, thinking: parent.thinking });
  });

  it('leaves prefixAt out when the request is shorter than asked', () => {
    expect(factsOf(ctx, turn1, 3).prefixAt).toBeUndefined();
  });

  it('reads the TTL of the last breakpoint: 1h only when that one asks for it', () => {
    const body = (sys: MessagesRequest['system'], last: boolean): Pick<MessagesRequest, 'system' | 'tools' | 'messages'> => ({
      system: sys,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'x', ...(last ? { cache_control: { type: 'ephemeral' } } : {}) }] }],
    });
    const hourSystem = [{ type: 'text' as const, text: 's', cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }];
    expect(lastBreakpointTtl(body(hourSystem, false))).toBe('1h');
    expect(lastBreakpointTtl(body(hourSystem, true))).toBe('5m');
    expect(lastBreakpointTtl(body('plain', false))).toBe('5m');
  });
});

describe('diagnoseFirstTurn', () => {
  const parent = snapshotHashes({ ...ctx, messages: turn1 });

  it('is quiet when half or more of the input was read, or nothing was written', () => {
    expect(diagnoseFirstTurn(usage(500, 400, 100), parent, parent)).toBeUndefined();
    expect(diagnoseFirstTurn(usage(0, 0, 900), parent, parent)).toBeUndefined();
  });

  it('names what changed, or expired / unknown without the parent hashes', () => {
    const altered = snapshotHashes({ ...ctx, system: 'Another system.', messages: turn1 });
    expect(diagnoseFirstTurn(usage(0, 900), parent, altered)).toEqual({ ratio: 0, reason: 'system changed' });
    expect(diagnoseFirstTurn(usage(100, 900), undefined, altered)?.reason).toBe(UNKNOWN_CACHE_BREAK);
  });
});

describe('diagnoseLaterTurn', () => {
  const first = factsOf(ctx, turn1);
  const previous = previousRequest(first, usage(0, 2000), T0);
  const next = factsOf(ctx, turn2, first.messages);

  it('expects what the previous call left cached: read + creation', () => {
    expect(previous.cached).toBe(2000);
    // Read it all and wrote the new turn: no break.
    expect(diagnoseLaterTurn(previous, usage(2000, 50), next, T0 + 1000)).toBeUndefined();
    // Read exactly half: not a break (the rule is "below half").
    expect(diagnoseLaterTurn(previous, usage(1000, 1050), next, T0 + 1000)).toBeUndefined();
    // Wrote nothing: no break whatever was read.
    expect(diagnoseLaterTurn(previous, usage(0, 0, 2050), next, T0 + 1000)).toBeUndefined();
    // The previous call cached nothing (below the minimum): nothing was expected.
    expect(diagnoseLaterTurn(previousRequest(first, usage(0, 0, 500), T0), usage(0, 900), next, T0 + 1000)).toBeUndefined();
  });

  it('below half read with cache written is a break; same request, within the TTL: expired / unknown', () => {
    expect(diagnoseLaterTurn(previous, usage(999, 1100), next, T0 + 1000)).toEqual({ ratio: 999 / 2000, reason: UNKNOWN_CACHE_BREAK });
  });

  it('same request, after the TTL: TTL expired (5 min unless the last breakpoint asked 1 h)', () => {
    expect(diagnoseLaterTurn(previous, usage(0, 2100), next, T0 + CACHE_TTL_MS['5m'] + 1)?.reason).toBe(TTL_EXPIRED);
    expect(diagnoseLaterTurn(previous, usage(0, 2100), next, T0 + CACHE_TTL_MS['5m'])?.reason).toBe(UNKNOWN_CACHE_BREAK);
    const hourly = { ...previous, ttl: '1h' as const };
    expect(diagnoseLaterTurn(hourly, usage(0, 2100), next, T0 + CACHE_TTL_MS['5m'] + 1)?.reason).toBe(UNKNOWN_CACHE_BREAK);
    expect(diagnoseLaterTurn(hourly, usage(0, 2100), next, T0 + CACHE_TTL_MS['1h'] + 1)?.reason).toBe(TTL_EXPIRED);
  });

  it('names what changed between the two requests, before any TTL', () => {
    const late = T0 + CACHE_TTL_MS['1h'] * 2;
    expect(diagnoseLaterTurn(previous, usage(0, 2100), factsOf({ ...ctx, model: 'claude-opus-4-6' }, turn2, first.messages), late)?.reason).toBe('model changed');
    expect(diagnoseLaterTurn(previous, usage(0, 2100), factsOf({ ...ctx, tools: TOOLS.slice(1) }, turn2, first.messages), late)?.reason).toBe('tools changed');
    const rewritten = [user(text('start, rewritten')), ...turn2.slice(1)];
    expect(diagnoseLaterTurn(previous, usage(0, 2100), factsOf(ctx, rewritten, first.messages), late)?.reason).toBe('message prefix changed');
    const both = factsOf({ ...ctx, system: 'Other.', thinking: { type: 'enabled', budget_tokens: 1024 } }, turn2, first.messages);
    expect(diagnoseLaterTurn(previous, usage(0, 2100), both, late)?.reason).toBe('system changed, thinking changed');
  });

  it('a request shorter than the previous one changed its prefix; without facts the reason is unknown', () => {
    const longer = previousRequest(next, usage(0, 2000), T0);
    expect(diagnoseLaterTurn(longer, usage(0, 900), factsOf(ctx, turn1, next.messages), T0 + 1)?.reason).toBe('message prefix changed');
    expect(diagnoseLaterTurn(longer, usage(0, 900), undefined, T0 + CACHE_TTL_MS['1h'] * 2)?.reason).toBe(UNKNOWN_CACHE_BREAK);
  });
});
