/**
 * The pure parts below the HTTP layer: flattening and cache keys, two-phase cache writes,
 * SSE chunking, output limits and the request log.
 */
import { PromptCache, defaultMinCacheableTokens } from '../../../src/offline/cache';
import { type CacheableRequest, countCacheMarkers, flattenRequest } from '../../../src/offline/flatten';
import { applyLimits } from '../../../src/offline/output';
import { RequestLog, type RequestLogEntry } from '../../../src/offline/log';
import { chunk } from '../../../src/offline/sse';

const cc = { type: 'ephemeral' } as const;
const long = 'lorem ipsum '.repeat(1000);

describe('flattenRequest', () => {
  const base: CacheableRequest = { model: 'm', system: long, messages: [{ role: 'user', content: 'hi' }] };

  it('reads a string and a single text block as the same prefix', () => {
    const a = flattenRequest(base);
    const b = flattenRequest({ ...base, system: [{ type: 'text', text: long }], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
    expect(b.keys).toEqual(a.keys);
    expect(b.cumulative).toEqual(a.cumulative);
  });

  it('ignores cache_control in keys and tokens, and keys the role and model', () => {
    const marked = flattenRequest({ ...base, system: [{ type: 'text', text: long, cache_control: cc }] });
    expect(marked.keys).toEqual(flattenRequest(base).keys);
    expect(marked.breakpoints).toEqual([{ index: 0, ttl: '5m' }]);
    expect(flattenRequest({ ...base, messages: [{ role: 'assistant', content: 'hi' }] }).keys[1]).not.toBe(marked.keys[1]);
    expect(flattenRequest({ ...base, model: 'other' }).keys[0]).not.toBe(marked.keys[0]);
  });

  it('places the automatic breakpoint on the last block, once', () => {
    const auto = flattenRequest({ ...base, cache_control: { type: 'ephemeral', ttl: '1h' } });
    expect(auto.breakpoints).toEqual([{ index: 1, ttl: '1h' }]);
    const both = { ...base, messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi', cache_control: cc }] }], cache_control: cc };
    expect(flattenRequest(both).breakpoints).toEqual([{ index: 1, ttl: '5m' }]);
    expect(countCacheMarkers(both)).toBe(2);
  });

  it('charges the per-message overhead to the first block of each message', () => {
    const one = flattenRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }] });
    const [first, second] = one.cumulative as [number, number];
    expect(first - (second - first)).toBe(3);
  });
});

describe('PromptCache', () => {
  const flat = flattenRequest({ model: 'm', system: [{ type: 'text', text: long, cache_control: cc }], messages: [{ role: 'user', content: 'hi' }] });

  it('keeps writes pending until committed, and forgets released ones', () => {
    const cache = new PromptCache(() => 0);
    const a = cache.plan(flat, 1024, 1);
    expect(a.accounting.read).toBe(0);
    expect(a.accounting.creation5m).toBe(flat.cumulative[0]);
    expect(cache.stats()).toEqual({ ready: 0, pending: 1 });
    // A second writer joins the pending entry; the first one giving up does not drop it.
    const b = cache.plan(flat, 1024, 2);
    expect(b.accounting.read).toBe(0);
    cache.release(a.ticket);
    expect(cache.stats()).toEqual({ ready: 0, pending: 1 });
    cache.release(b.ticket);
    expect(cache.stats()).toEqual({ ready: 0, pending: 0 });

    const c = cache.plan(flat, 1024, 3);
    cache.commit(c.ticket);
    expect(cache.stats()).toEqual({ ready: 1, pending: 0 });
    expect(cache.plan(flat, 1024, 4).accounting).toEqual({ read: flat.cumulative[0], creation5m: 0, creation1h: 0, input: flat.totalTokens - (flat.cumulative[0] as number) });
    cache.clear();
    expect(cache.size()).toBe(0);
  });

  it('writes nothing below the minimum', () => {
    const cache = new PromptCache(() => 0);
    const { accounting, ticket } = cache.plan(flat, flat.totalTokens + 1, 1);
    expect(accounting).toEqual({ read: 0, creation5m: 0, creation1h: 0, input: flat.totalTokens });
    expect(ticket.keys).toEqual([]);
  });

  it('has a per-model minimum table', () => {
    expect(defaultMinCacheableTokens('claude-sonnet-4-6')).toBe(1024);
    expect(defaultMinCacheableTokens('claude-opus-4-5-20251101')).toBe(4096);
    expect(defaultMinCacheableTokens('claude-opus-4-6')).toBe(4096);
    expect(defaultMinCacheableTokens('claude-haiku-4-5')).toBe(4096);
    expect(defaultMinCacheableTokens('claude-3-5-haiku-20241022')).toBe(2048);
    expect(defaultMinCacheableTokens('claude-3-haiku-20240307')).toBe(2048);
    expect(defaultMinCacheableTokens('some-local-model')).toBe(1024);
  });
});

describe('SSE chunks and output limits', () => {
  it('splits text into at most 3 chunks without breaking surrogate pairs', () => {
    expect(chunk('🚀🚀🚀🚀')).toEqual(['🚀🚀', '🚀🚀']);
    expect(chunk('abcdefg')).toEqual(['abc', 'def', 'g']);
    expect(chunk('')).toEqual([]);
  });

  it('cuts at the earliest stop sequence and leaves out tool calls that do not fit', () => {
    const content = [
      { type: 'text' as const, text: 'one END two' },
      { type: 'tool_use' as const, id: 't', name: 'Read', input: { file_path: 'x' } },
    ];
    expect(applyLimits(content, 'tool_use', 1000, ['two', 'END'])).toMatchObject({
      stopReason: 'stop_sequence',
      stopSequence: 'END',
      content: [{ type: 'text', text: 'one ' }],
    });
    const tight = applyLimits(content, 'tool_use', 3);
    expect(tight).toMatchObject({ stopReason: 'max_tokens', stopSequence: null, content: [{ type: 'text', text: 'one END two' }], outputTokens: 3 });
    expect(applyLimits(content, 'tool_use', 1000)).toMatchObject({ stopReason: 'tool_use', content });
  });
});

describe('RequestLog', () => {
  const entry = (seq: number): RequestLogEntry => ({
    seq,
    requestId: `r${seq}`,
    method: 'POST',
    path: '/v1/messages',
    headers: {},
    rawBody: '',
    body: undefined,
    stream: false,
    receivedAt: 0,
    outcome: 'pending',
  });

  it('stops announcing changes to entries removed by clear()', async () => {
    const log = new RequestLog();
    const inFlight = log.add(entry(1));
    const seen: number[] = [];
    log.on('update', (e) => void seen.push(e.seq));
    log.clear();
    const waiting = log.waitFor((e) => e.outcome === 'aborted', { timeoutMs: 30 });
    log.update(inFlight, { outcome: 'aborted' });
    await expect(waiting).rejects.toThrow('no matching entry after 30 ms. Log: (empty)');
    expect(seen).toEqual([]);
    log.add(entry(2));
    expect(seen).toEqual([2]);
    expect(log.entries().map((e) => e.seq)).toEqual([2]);
  });

  it('hands out snapshots, not the live entries', () => {
    const log = new RequestLog();
    const live = log.add(entry(1));
    const [snap] = log.entries();
    log.update(live, { outcome: 'completed' });
    expect(snap?.outcome).toBe('pending');
    expect(log.entries()[0]?.outcome).toBe('completed');
  });
});

describe('RequestLog.waitFor with a predicate that throws', () => {
  test('rejects that wait and leaves the server serving', async () => {
    const { startOfflineModel } = await import('../../../src/offline');
    const model = await startOfflineModel();
    try {
      const failing = model.log.waitFor((e) => {
        if (e.outcome === 'pending') throw new Error('predicate blew up');
        return false;
      });
      const rejected = expect(failing).rejects.toThrow('predicate blew up');
      const response = await fetch(`${model.url}/v1/messages/count_tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-sonnet-5-5', messages: [{ role: 'user', content: 'hi' }] }),
      });
      await rejected;
      expect(response.status).toBe(200);
    } finally {
      await model.close();
    }
  });
});
