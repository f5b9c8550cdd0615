import { Lru } from '../../../src/activities/lru';

describe('Lru', () => {
  it('drops the least recently used entry past its count', () => {
    const lru = new Lru<number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('c', 3);
    expect(lru.get('b')).toBeUndefined();
    expect([lru.get('a'), lru.get('c')]).toEqual([1, 3]);
  });

  it('drops the oldest entries past its total weight, and re-weighs an entry set again', () => {
    const lru = new Lru<{ bytes: number }>(100, { of: (v) => v.bytes, max: 10 });
    const a = { bytes: 4 };
    lru.set('a', a);
    lru.set('b', { bytes: 4 });
    expect(lru.totalWeight).toBe(8);
    a.bytes = 5;
    lru.set('a', a); // a grew: 9 in all, and a is the most recent
    expect(lru.totalWeight).toBe(9);
    lru.set('c', { bytes: 3 }); // 12 > 10: the oldest (b) goes
    expect(lru.get('b')).toBeUndefined();
    expect(lru.size).toBe(2);
    expect(lru.totalWeight).toBe(8);
  });

  it('keeps the newest entry even when it alone is over the weight bound', () => {
    const lru = new Lru<{ bytes: number }>(100, { of: (v) => v.bytes, max: 10 });
    lru.set('a', { bytes: 3 });
    lru.set('big', { bytes: 50 });
    expect(lru.get('a')).toBeUndefined();
    expect(lru.get('big')).toEqual({ bytes: 50 });
  });
});
