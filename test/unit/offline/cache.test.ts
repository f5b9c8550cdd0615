/**
 * Prompt-cache accounting through the SDK: writes and reads, sibling forks, the look-back
 * window, per-model minimums, TTLs on an injected clock, level-scoped parameters, and
 * entries that only become readable once the writer's response has begun.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { startOfflineModel } from '../../../src/offline';
import { MODEL, TOOLS, ask, clientFor, filler, useOfflineModel } from './helpers';

type Params = Anthropic.MessageCreateParamsNonStreaming;
type Usage = Anthropic.Usage;

const cc = { type: 'ephemeral' } as const;
const cc1h = { type: 'ephemeral', ttl: '1h' } as const;

function split(u: Usage): { read: number; creation: number; input: number; c5m: number; c1h: number } {
  return {
    read: u.cache_read_input_tokens ?? 0,
    creation: u.cache_creation_input_tokens ?? 0,
    input: u.input_tokens,
    c5m: u.cache_creation?.ephemeral_5m_input_tokens ?? 0,
    c1h: u.cache_creation?.ephemeral_1h_input_tokens ?? 0,
  };
}

const total = (u: Usage): number => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);

/** A request with a long cached system prompt and a short user turn. */
function cachedSystem(reply = '@reply ok', extra: Partial<Params> = {}): Params {
  return ask(reply, { system: [{ type: 'text', text: filler(2000), cache_control: cc }], ...extra });
}

describe('offline model: prompt cache', () => {
  const t = useOfflineModel();
  const usageOf = async (p: Params): Promise<Usage> => (await t.client.messages.create(p)).usage;

  it('writes at a breakpoint, then reads the same prefix', async () => {
    const first = split(await usageOf(cachedSystem()));
    expect(first.read).toBe(0);
    expect(first.creation).toBeGreaterThanOrEqual(2000);
    expect(first.c5m).toBe(first.creation);
    expect(first.c1h).toBe(0);
    expect(first.input).toBeGreaterThan(0);
    expect(t.model.cache.size()).toBe(1);

    const second = split(await usageOf(cachedSystem()));
    expect(second).toEqual({ read: first.creation, creation: 0, input: first.input, c5m: 0, c1h: 0 });
    const { input_tokens } = await t.client.messages.countTokens(cachedSystem());
    expect(second.read + second.input).toBe(input_tokens);
    expect(t.model.log.entries()[1]?.usage?.cache_read_input_tokens).toBe(first.creation);
  });

  it('treats string content and a single text block as the same prefix (automatic caching)', async () => {
    const text = `${filler(1500)}\n@reply cached`;
    const a = split(await usageOf({ ...ask(text), cache_control: cc }));
    // The top-level marker applies to the last block: the whole prompt is written.
    expect(a).toMatchObject({ read: 0, input: 0 });
    expect(a.creation).toBeGreaterThan(1500);
    const b = split(await usageOf({ ...ask(''), messages: [{ role: 'user', content: [{ type: 'text', text }] }], cache_control: cc }));
    expect(b).toEqual({ read: a.creation, creation: 0, input: 0, c5m: 0, c1h: 0 });
  });

  it('lets 8 sibling forks share the parent prefix: the first writes, the others read >= 97%', async () => {
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: `${filler(3000, 'p')}\n@tools [{"name":"Glob","input":{"pattern":"*"}},{"name":"Grep","input":{"pattern":"x"}}]` },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'Glob', input: { pattern: '*' } },
          { type: 'tool_use', id: 'toolu_2', name: 'Grep', input: { pattern: 'x' } },
        ],
      },
    ];
    const sibling = (i: number): Params => ({
      ...ask(''),
      tools: TOOLS,
      system: 'You are a careful engineer.',
      messages: [
        ...history,
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Forked.' },
            // The last block all siblings share carries the breakpoint.
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'Forked.', cache_control: cc },
            { type: 'text', text: `Task ${i}: look at part ${i}.\n@reply done ${i}` },
          ],
        },
      ],
    });
    const first = split(await usageOf(sibling(0)));
    expect(first.read).toBe(0);
    expect(first.creation).toBeGreaterThan(3000);
    const rest = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((i) => usageOf(sibling(i))));
    for (const u of rest) {
      expect(split(u)).toMatchObject({ read: first.creation, creation: 0 });
      expect(split(u).read / total(u)).toBeGreaterThanOrEqual(0.97);
    }
  });

  it('looks back at most 20 blocks from a breakpoint', async () => {
    const blocks = (marked: number): Params => ({
      ...ask(''),
      system: filler(1500),
      messages: [
        {
          role: 'user',
          content: [
            ...Array.from({ length: 40 }, (_, i): Anthropic.TextBlockParam => ({
              type: 'text',
              text: `block ${i}`,
              ...(i === marked ? { cache_control: cc } : {}),
            })),
            { type: 'text', text: '@reply ok' },
          ],
        },
      ],
    });
    const written = split(await usageOf(blocks(5)));
    expect(written.creation).toBeGreaterThan(1500);
    // Block 24 is 19 blocks after block 5: the entry at block 5 is within its 20-block window.
    expect(split(await usageOf(blocks(24))).read).toBe(written.creation);

    t.model.cache.clear();
    expect(t.model.cache.size()).toBe(0);
    expect(split(await usageOf(blocks(5))).creation).toBe(written.creation);
    // Block 25 is 20 blocks after: out of reach, so nothing is read and all is written again.
    const far = split(await usageOf(blocks(25)));
    expect(far.read).toBe(0);
    expect(far.creation).toBeGreaterThan(written.creation);
  });

  it('does not cache prefixes shorter than the model minimum', async () => {
    // About 3000 tokens: enough for Sonnet (1024), not for Haiku 4.5 (4096).
    const params = (model: string): Params => ask('@reply ok', { model, system: [{ type: 'text', text: filler(3000), cache_control: cc }] });
    const sonnet = split(await usageOf(params(MODEL)));
    expect(sonnet.creation).toBeGreaterThan(3000);
    for (let i = 0; i < 2; i++) {
      const haiku = split(await usageOf(params('claude-haiku-4-5')));
      expect(haiku).toMatchObject({ read: 0, creation: 0 });
      expect(haiku.input).toBe(sonnet.creation + sonnet.input);
    }
    // Same prefix, different model: a different cache.
    expect(split(await usageOf(params('claude-opus-4-8'))).read).toBe(0);
  });

  it('takes the minimum from the option when given', async () => {
    const strict = await startOfflineModel({ minCacheableTokens: 10_000 });
    const perModel = await startOfflineModel({ minCacheableTokens: (m) => (m.includes('haiku') ? 0 : 10_000) });
    try {
      const p = (model: string): Params => ask('@reply ok', { model, system: [{ type: 'text', text: 'short system prompt', cache_control: cc }] });
      expect((await clientFor(strict).messages.create(p(MODEL))).usage.cache_creation_input_tokens).toBe(0);
      expect((await clientFor(perModel).messages.create(p(MODEL))).usage.cache_creation_input_tokens).toBe(0);
      expect((await clientFor(perModel).messages.create(p('claude-haiku-4-5'))).usage.cache_creation_input_tokens).toBeGreaterThan(0);
    } finally {
      await Promise.all([strict.close(), perModel.close()]);
    }
  });

  it('expires entries by TTL on the injected clock; reads refresh them', async () => {
    let now = 1_000_000;
    const model = await startOfflineModel({ now: () => now });
    try {
      const client = clientFor(model);
      const use = async (p: Params): Promise<ReturnType<typeof split>> => split((await client.messages.create(p)).usage);
      const written = await use(cachedSystem());
      now += 5 * 60_000 - 1;
      expect((await use(cachedSystem())).read).toBe(written.creation);
      // The read refreshed the entry: another 5 minutes minus 1 ms later it is still there.
      now += 5 * 60_000 - 1;
      expect((await use(cachedSystem())).read).toBe(written.creation);
      now += 5 * 60_000;
      expect(model.cache.size()).toBe(0);
      expect(await use(cachedSystem())).toMatchObject({ read: 0, creation: written.creation });

      const hour = cachedSystem('@reply ok', { system: [{ type: 'text', text: filler(2000, 'h'), cache_control: cc1h }] });
      const h = await use(hour);
      expect(h).toMatchObject({ c1h: h.creation, c5m: 0 });
      now += 59 * 60_000;
      expect((await use(hour)).read).toBe(h.creation);
      now += 61 * 60_000;
      expect((await use(hour)).read).toBe(0);
    } finally {
      await model.close();
    }
  });

  it('splits creation by TTL between a 1h and a 5m breakpoint', async () => {
    const p = ask('@reply ok', {
      system: [
        { type: 'text', text: filler(1500, 'a'), cache_control: cc1h },
        { type: 'text', text: filler(1500, 'b'), cache_control: cc },
      ],
    });
    const u = split(await usageOf(p));
    expect(u.c1h).toBeGreaterThanOrEqual(1500);
    expect(u.c5m).toBeGreaterThanOrEqual(1500);
    expect(u.creation).toBe(u.c1h + u.c5m);
  });

  it('scopes tool_choice and thinking to the messages level, tools to everything', async () => {
    const base = (extra: Partial<Params>): Params => ({
      ...ask(''),
      tools: TOOLS,
      system: [{ type: 'text', text: filler(2000), cache_control: cc }],
      messages: [{ role: 'user', content: [{ type: 'text', text: `${filler(1500, 'm')}\n@reply ok`, cache_control: cc }] }],
      ...extra,
    });
    const full = split(await usageOf(base({})));
    expect(split(await usageOf(base({}))).read).toBe(full.creation);
    const systemOnly = split(await usageOf(base({ tool_choice: { type: 'any' } })));
    expect(systemOnly.read).toBeGreaterThan(2000);
    expect(systemOnly.read).toBeLessThan(full.creation);
    expect(systemOnly.read + systemOnly.creation).toBe(full.creation);
    const thinking = split(await usageOf(base({ max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 } })));
    expect(thinking.read).toBe(systemOnly.read);
    const otherTools = split(await usageOf(base({ tools: TOOLS.slice(0, 2) })));
    expect(otherTools.read).toBe(0);
  });

  it('keeps a pending write unreadable: a parallel identical request misses', async () => {
    const controller = new AbortController();
    t.model.faults.add({ kind: 'latency', ms: 60_000, match: (e) => e.seq === 1 });
    const held = t.client.messages.create(cachedSystem(), { signal: controller.signal }).catch((e: unknown) => e);
    await t.model.log.waitFor((e) => e.seq === 1 && e.body !== undefined);

    // Request 1 has planned its write but its response has not begun.
    const parallel = split(await usageOf(cachedSystem()));
    expect(parallel.read).toBe(0);
    expect(parallel.creation).toBeGreaterThan(2000);
    // Request 2's response began, so its write is now readable.
    expect(split(await usageOf(cachedSystem())).read).toBe(parallel.creation);

    controller.abort();
    expect(await held).toBeInstanceOf(Error);
    expect((await t.model.log.waitFor((e) => e.seq === 1 && e.outcome !== 'pending')).outcome).toBe('aborted');
  });

  it('makes a streamed write readable as soon as message_start is sent', async () => {
    const slow = await startOfflineModel({ streamChunkDelayMs: 60_000 });
    try {
      const client = clientFor(slow);
      const controller = new AbortController();
      const stream = client.messages.stream(cachedSystem(), { signal: controller.signal });
      const ended = stream.finalMessage().catch((e: unknown) => e);
      const began = await slow.log.waitFor((e) => e.responseBeganAt !== undefined);
      expect(began.outcome).toBe('pending');
      const reader = split((await client.messages.create(cachedSystem())).usage);
      expect(reader.read).toBe(began.usage?.cache_creation_input_tokens);
      expect(reader.read).toBeGreaterThan(2000);
      controller.abort();
      expect(await ended).toBeInstanceOf(Error);
    } finally {
      await slow.close();
    }
  });
});
