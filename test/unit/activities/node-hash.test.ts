import { chainDigestNative } from '../../../src/activities/node-hash';
import { requestFacts } from '../../../src/shared/cache-break';
import { chainDigest, EMPTY_DIGEST } from '../../../src/shared/hash';

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
    expect(requestFacts(context as never, body as never, 2, chainDigestNative)).toEqual(requestFacts(context as never, body as never, 2));
  });
});
