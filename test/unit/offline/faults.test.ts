/**
 * Programmatic faults and delays: error statuses with their types and retry-after, mid-
 * stream errors, dropped connections, latency, and how each shows up in the SDK and the log.
 */
import { APIConnectionError, APIError } from '@anthropic-ai/sdk';
import { startOfflineModel } from '../../../src/offline';
import { apiError, ask, clientFor, errorOf, useOfflineModel } from './helpers';

describe('offline model: faults', () => {
  const t = useOfflineModel();

  it('answers a status fault once, with retry-after visible to the SDK', async () => {
    t.model.faults.add({ kind: 'status', status: 429, retryAfterSeconds: 7 });
    const err = await apiError(t.client.messages.create(ask('@reply hi')));
    expect(err.status).toBe(429);
    expect(err.headers?.get('retry-after')).toBe('7');
    expect(errorOf(err)).toEqual({ type: 'rate_limit_error', message: expect.stringContaining('injected') as unknown });
    expect(err.requestID).toBe(t.model.log.entries()[0]?.requestId);
    expect(t.model.log.entries()[0]).toMatchObject({ status: 429, outcome: 'fault', error: { type: 'rate_limit_error' } });
    // Used up: the next request succeeds.
    expect((await t.client.messages.create(ask('@reply hi'))).content).toEqual([{ type: 'text', text: 'hi' }]);
    expect(t.model.faults.size()).toBe(0);
  });

  it.each([
    [500, 'api_error'],
    [529, 'overloaded_error'],
    [504, 'timeout_error'],
    [413, 'request_too_large'],
    [403, 'permission_error'],
    [503, 'api_error'],
  ])('maps status %i to %s', async (status, type) => {
    t.model.faults.add({ kind: 'status', status, message: `boom ${status}` });
    const err = await apiError(t.client.messages.create(ask('@reply hi')));
    expect(err.status).toBe(status);
    expect(errorOf(err)).toEqual({ type, message: `boom ${status}` });
    expect(err.headers?.get('retry-after')).toBeNull();
  });

  it('honours times and match', async () => {
    t.model.faults.add({ kind: 'status', status: 500, times: 2, match: (e) => JSON.stringify(e.body).includes('target') });
    expect((await t.client.messages.create(ask('@reply other'))).content).toEqual([{ type: 'text', text: 'other' }]);
    expect((await apiError(t.client.messages.create(ask('@reply target')))).status).toBe(500);
    expect((await apiError(t.client.messages.create(ask('@reply target')))).status).toBe(500);
    expect((await t.client.messages.create(ask('@reply target'))).content).toEqual([{ type: 'text', text: 'target' }]);
  });

  it('a fault window ends at its clock time: an outage of 30 s emulated, over once the clock passes it', async () => {
    const until = t.model.clock.now() + 30_000;
    t.model.faults.add({ kind: 'status', status: 529, times: Infinity, until });
    expect((await apiError(t.client.messages.create(ask('@reply one')))).status).toBe(529);
    expect((await apiError(t.client.messages.create(ask('@reply two')))).status).toBe(529);
    t.model.clock.advance(29_000);
    expect((await apiError(t.client.messages.create(ask('@reply three')))).status).toBe(529);
    t.model.clock.advance(1_000);
    expect((await t.client.messages.create(ask('@reply four'))).content).toEqual([{ type: 'text', text: 'four' }]);
    expect(t.model.faults.size()).toBe(0);
    expect(() => t.model.faults.add({ kind: 'drop', until: Number.NaN })).toThrow(/finite clock time/);
  });

  it('clear() removes queued faults', async () => {
    t.model.faults.add({ kind: 'drop', times: Infinity });
    t.model.faults.clear();
    expect((await t.client.messages.create(ask('@reply fine'))).content).toEqual([{ type: 'text', text: 'fine' }]);
    expect(() => t.model.faults.add({ kind: 'status', status: 200 })).toThrow(/HTTP error status/);
  });

  it('makes the SDK throw on a mid-stream overloaded_error, after the given number of events', async () => {
    t.model.faults.add({ kind: 'stream_error', afterEvents: 3 });
    const seen: string[] = [];
    const stream = t.client.messages.stream(ask('@reply a fairly long answer'));
    stream.on('streamEvent', (e) => void seen.push(e.type));
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBeUndefined();
    expect(errorOf(err as APIError).type).toBe('overloaded_error');
    expect(seen).toEqual(['message_start', 'content_block_start']);
    expect(t.model.log.entries()[0]).toMatchObject({ status: 200, outcome: 'fault', stream: true, error: { type: 'overloaded_error' } });
  });

  it('answers a stream_error fault on a JSON request with 529', async () => {
    t.model.faults.add({ kind: 'stream_error' });
    const err = await apiError(t.client.messages.create(ask('@reply hi')));
    expect(err.status).toBe(529);
    expect(errorOf(err).type).toBe('overloaded_error');
  });

  it('drops the connection: the SDK reports a connection error', async () => {
    t.model.faults.add({ kind: 'drop' });
    const err = await t.client.messages.create(ask('@reply hi')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    const entry = await t.model.log.waitFor((e) => e.outcome !== 'pending');
    expect(entry.outcome).toBe('fault');
    expect(entry.status).toBeUndefined();
    expect(entry.responseBeganAt).toBeUndefined();
  });

  it('adds latency from a fault and from the latencyMs option', async () => {
    t.model.faults.add({ kind: 'latency', ms: 150 });
    t.model.faults.add({ kind: 'status', status: 500 });
    // A latency fault delays and combines with the terminal fault queued after it.
    expect((await apiError(t.client.messages.create(ask('@reply hi')))).status).toBe(500);
    const [delayed] = t.model.log.entries();
    expect((delayed?.responseBeganAt ?? 0) - (delayed?.receivedAt ?? 0)).toBeGreaterThanOrEqual(145);

    const slow = await startOfflineModel({ latencyMs: 120 });
    try {
      await clientFor(slow).messages.create(ask('@reply hi'));
      const [e] = slow.log.entries();
      expect((e?.responseBeganAt ?? 0) - (e?.receivedAt ?? 0)).toBeGreaterThanOrEqual(115);
    } finally {
      await slow.close();
    }
  });

  it('spaces SSE events by streamChunkDelayMs', async () => {
    const slow = await startOfflineModel({ streamChunkDelayMs: 20 });
    try {
      const msg = await clientFor(slow).messages.stream(ask('@reply spaced out')).finalMessage();
      expect(msg.content).toEqual([{ type: 'text', text: 'spaced out' }]);
      const [e] = slow.log.entries();
      // 9 events (start, ping, block start, 3 deltas, block stop, delta, stop): 8 gaps.
      expect((e?.endedAt ?? 0) - (e?.responseBeganAt ?? 0)).toBeGreaterThanOrEqual(8 * 20 - 10);
    } finally {
      await slow.close();
    }
  });
});

describe('latency options', () => {
  it('adds a uniformly drawn delay of at most latencyJitterMs on top of latencyMs, per request', async () => {
    const jittery = await startOfflineModel({ latencyMs: 20, latencyJitterMs: 40 });
    try {
      const client = clientFor(jittery);
      for (let i = 0; i < 6; i++) await client.messages.create(ask('@reply hi'));
      const delays = jittery.log.entries().map((e) => e.delayMs!);
      expect(delays).toHaveLength(6);
      for (const d of delays) {
        expect(d).toBeGreaterThanOrEqual(20);
        expect(d).toBeLessThanOrEqual(60);
      }
      // Drawn per request: six equal draws from a continuous range do not happen.
      expect(new Set(delays).size).toBeGreaterThan(1);
    } finally {
      await jittery.close();
    }
  });

  it('refuses a delay option that is negative or not a finite number', async () => {
    await expect(startOfflineModel({ latencyJitterMs: -1 })).rejects.toThrow(/latencyJitterMs.*≥ 0/);
    await expect(startOfflineModel({ latencyMs: Number.NaN })).rejects.toThrow(/latencyMs/);
    await expect(startOfflineModel({ streamChunkDelayMs: Infinity })).rejects.toThrow(/streamChunkDelayMs/);
  });
});
