/**
 * The emulated clock and the two TTLs: a 20-minute wait shown by advancing the clock (5m
 * entries gone, 1h entries read), reads refreshing expiry, write prices split by TTL, a
 * scaled clock, the TTL order the API demands, and the opt-in admin route.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { ADMIN_CLOCK_PATH, startOfflineModel } from '../../../src/offline';
import { OfflineClock } from '../../../src/offline/clock';
import { apiError, ask, clientFor, errorOf, filler, rawPost, useOfflineModel } from './helpers';

type Params = Anthropic.MessageCreateParamsNonStreaming;
const MINUTE = 60_000;

/** A long system prompt marked with `ttl`, and a short user turn. */
function withSystem(ttl: '5m' | '1h', seed: string): Params {
  return ask('@reply ok', { system: [{ type: 'text', text: filler(3000, seed), cache_control: { type: 'ephemeral', ttl } }] });
}

const readShare = (u: Anthropic.Usage): number =>
  (u.cache_read_input_tokens ?? 0) / (u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0));

describe('offline model: clock and TTLs', () => {
  const t = useOfflineModel();
  const usageOf = async (p: Params): Promise<Anthropic.Usage> => (await t.client.messages.create(p)).usage;

  it('shows a 20-minute wait by advancing the clock: a 5m prefix is written again, a 1h prefix is read', async () => {
    const five = await usageOf(withSystem('5m', 'a'));
    const hour = await usageOf(withSystem('1h', 'b'));
    expect(five.cache_creation).toEqual({ ephemeral_5m_input_tokens: five.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 });
    expect(hour.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: hour.cache_creation_input_tokens });
    const before = t.model.clock.now();
    expect(t.model.clock.advance(20 * MINUTE)).toBeGreaterThanOrEqual(before + 20 * MINUTE);

    const fiveAfter = await usageOf(withSystem('5m', 'a'));
    expect(fiveAfter.cache_read_input_tokens).toBe(0);
    expect(fiveAfter.cache_creation_input_tokens).toBe(five.cache_creation_input_tokens);
    const hourAfter = await usageOf(withSystem('1h', 'b'));
    expect(hourAfter.cache_read_input_tokens).toBe(hour.cache_creation_input_tokens);
    expect(hourAfter.cache_creation_input_tokens).toBe(0);
    expect(readShare(hourAfter)).toBeGreaterThan(0.9);
  });

  it('refreshes an entry on every read: reads 4 minutes apart keep a 5m prefix for 20 minutes', async () => {
    const first = await usageOf(withSystem('5m', 'c'));
    for (let i = 0; i < 5; i++) {
      t.model.clock.advance(4 * MINUTE);
      expect((await usageOf(withSystem('5m', 'c'))).cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    }
    // A 1h entry read at 50 minutes lives on to 50 + 60.
    const hour = await usageOf(withSystem('1h', 'd'));
    t.model.clock.advance(50 * MINUTE);
    expect((await usageOf(withSystem('1h', 'd'))).cache_read_input_tokens).toBe(hour.cache_creation_input_tokens);
    t.model.clock.advance(59 * MINUTE);
    expect((await usageOf(withSystem('1h', 'd'))).cache_read_input_tokens).toBe(hour.cache_creation_input_tokens);
  });

  it('refuses to move the clock back', () => {
    expect(() => t.model.clock.advance(-1)).toThrow(/only moves forward/);
    expect(() => t.model.clock.advance(Number.NaN)).toThrow(/only moves forward/);
  });

  it('rejects a 1h breakpoint after a 5m one, as the API does', async () => {
    const five: Anthropic.TextBlockParam = { type: 'text', text: filler(1500, 'e'), cache_control: { type: 'ephemeral' } };
    const hour: Anthropic.TextBlockParam = { type: 'text', text: filler(1500, 'f'), cache_control: { type: 'ephemeral', ttl: '1h' } };
    const p = ask('@reply ok', { system: [five, hour] });
    const err = await apiError(t.client.messages.create(p));
    expect(err.status).toBe(400);
    expect(errorOf(err).message).toMatch(/breakpoint 2 has ttl '1h' after a breakpoint with ttl '5m'/);
    // The allowed order: 1h first.
    const ok = ask('@reply ok', { system: [hour, five] });
    await expect(t.client.messages.create(ok)).resolves.toMatchObject({ type: 'message' });
  });

  it('has no admin route unless enabled', async () => {
    const res = await rawPost(t.model, ADMIN_CLOCK_PATH, JSON.stringify({ advanceMs: 1000 }));
    expect(res.status).toBe(404);
  });
});

describe('offline model: scaled clock and the admin route', () => {
  it('runs emulated time `scale` times faster than its base clock', async () => {
    let base = 1_000_000;
    const model = await startOfflineModel({ now: () => base, clockScale: 100 });
    try {
      const client = clientFor(model);
      const written = (await client.messages.create(withSystem('5m', 'g'))).usage;
      base += 2_900; // 4 min 50 s emulated
      expect((await client.messages.create(withSystem('5m', 'g'))).usage.cache_read_input_tokens).toBe(written.cache_creation_input_tokens);
      base += 3_000; // 5 min emulated since that read refreshed it
      expect((await client.messages.create(withSystem('5m', 'g'))).usage.cache_read_input_tokens).toBe(0);
      expect(model.log.entries().map((e) => e.receivedAt)).toEqual([1_000_000, 1_290_000, 1_590_000]);
    } finally {
      await model.close();
    }
    expect(() => new OfflineClock({ scale: 0.5 })).toThrow(/≥ 1/);
  });

  it('reads and advances the clock over HTTP when enabled, validating the body', async () => {
    let base = 5_000;
    const model = await startOfflineModel({ now: () => base, admin: true });
    try {
      const get = await fetch(`${model.url}${ADMIN_CLOCK_PATH}`);
      expect(await get.json()).toEqual({ now: 5_000, scale: 1 });
      const moved = await rawPost(model, ADMIN_CLOCK_PATH, JSON.stringify({ advanceMs: 20 * MINUTE }), { 'x-api-key': '', 'anthropic-version': '' });
      expect(moved.status).toBe(200);
      expect(JSON.parse(moved.text)).toEqual({ now: 5_000 + 20 * MINUTE, scale: 1 });
      base += 10;
      expect(model.clock.now()).toBe(5_010 + 20 * MINUTE);
      for (const bad of ['{"advanceMs":-5}', '{"advanceMs":1.5}', '{"advance":5}', '{"advanceMs":5,"x":1}', 'not json']) {
        const res = await rawPost(model, ADMIN_CLOCK_PATH, bad);
        expect(res.status).toBe(400);
        expect(JSON.parse(res.text)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      }
      expect(model.clock.now()).toBe(5_010 + 20 * MINUTE);
    } finally {
      await model.close();
    }
  });
});
