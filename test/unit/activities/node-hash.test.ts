import { chainDigestNative, chainUnmarkedNative } from '../../../src/activities/node-hash';
import { requestFacts } from '../../../src/shared/prefix/cache-break';
import { chainDigest, EMPTY_DIGEST } from '../../../src/shared/base/hash';

describe('native chained digest', () => {
  const items: unknown[] = [
    { role: 'user', content: 'plain' },
    { role: 'assistant', content: [{ type: 'text', text: 'ünïcødé 😀 and \u2028 separators' }] },
    { b: 1, a: [null, true, 2.5, { z: 'z', y: undefined }] },
    'a string',
    42,
  ];

  it('gives the pure-JS digest, item by item and chained', () => {
    let pure = EMPTY_DIGEST;
    let native = EMPTY_DIGEST;
    for (const item of items) {
      pure = chainDigest(pure, item);
      native = chainDigestNative(native, item);
      expect(native).toBe(pure);
    }
  });

  it('gives the same request facts as the workflow computes', () => {
    const context = { model: 'claude-sonnet-4-6', system: 'sys', tools: [], maxTokens: 100, cacheKeyHash: '' };
    const body = {
      system: 'sys',
      messages: [
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'q', cache_control: { type: 'ephemeral' as const } }] },
        { role: 'assistant' as const, content: 'a' },
        { role: 'user' as const, content: 'q2 ✓' },
      ],
    };
    expect(requestFacts(context as never, body as never, 2, chainUnmarkedNative)).toEqual(requestFacts(context as never, body as never, 2));
  });

  it("keeps each message object's hash: the next turn's request, sharing most of its objects, measures the same as from scratch", () => {
    const context = { model: 'claude-sonnet-4-6', system: 'sys', tools: [], maxTokens: 100, cacheKeyHash: '' };
    const conversation = Array.from({ length: 6 }, (_, i) => ({ role: i % 2 ? ('assistant' as const) : ('user' as const), content: [{ type: 'text' as const, text: `turn ${i} ✓` }] }));
    const turn1 = { system: 'sys', messages: conversation.slice(0, 4) };
    expect(requestFacts(context as never, turn1 as never, 3, chainUnmarkedNative)).toEqual(requestFacts(context as never, turn1 as never, 3));
    // Turn 2: the same objects, one of them now a marked copy, and two new ones.
    const marked = { ...conversation[3]!, content: [{ ...conversation[3]!.content[0]!, cache_control: { type: 'ephemeral' as const } }] };
    const turn2 = { system: 'sys', messages: [...conversation.slice(0, 3), marked, ...conversation.slice(4)] };
    const fresh = JSON.parse(JSON.stringify(turn2)) as typeof turn2;
    expect(requestFacts(context as never, turn2 as never, 4, chainUnmarkedNative)).toEqual(requestFacts(context as never, fresh as never, 4));
    expect(requestFacts(context as never, turn2 as never, 4, chainUnmarkedNative).prefixAt).toBe(requestFacts(context as never, turn1 as never, 4).prefix);
  });
});
