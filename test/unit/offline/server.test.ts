/**
 * The HTTP surface: JSON and SSE through the real SDK, headers, auth and versions,
 * routing, the request log (raw bytes, aborts) and closing.
 */
import { startOfflineModel } from '../../../src/offline';
import { MODEL, TOOLS, apiError, ask, clientFor, errorOf, rawPost, sseEvents, useOfflineModel } from './helpers';

describe('offline model: HTTP surface', () => {
  const t = useOfflineModel();

  it('answers a JSON request through the SDK, with the wire headers', async () => {
    const { data, response } = await t.client.messages.create(ask('@reply hello')).withResponse();
    expect(data).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [{ type: 'text', text: 'hello' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
    });
    expect(data.id).toMatch(/^msg_/);
    expect(response.headers.get('content-type')).toBe('application/json');
    const [entry] = t.model.log.entries();
    expect(response.headers.get('request-id')).toBe(entry?.requestId);
    expect(entry).toMatchObject({ seq: 1, method: 'POST', path: '/v1/messages', status: 200, outcome: 'completed', stream: false });
    expect(entry?.response).toEqual(data);
    // The 1.x SDK speaks the new wire.
    expect(entry?.headers['anthropic-version']).toBe('2026-10-21');
    expect(entry?.headers.authorization).toBe('Bearer test-key');
    expect(entry?.headers['x-api-key']).toBeUndefined();
  });

  it('streams: finalMessage() reassembles text and tool input from the deltas', async () => {
    const text = await t.client.messages.stream(ask('@reply one two three four five six seven')).finalMessage();
    expect(text.content).toEqual([{ type: 'text', text: 'one two three four five six seven' }]);

    const input = { file_path: 'docs/ünïcode 🚀.md', offset: 10, limit: 20 };
    const tool = await t.client.messages
      .stream(ask(`@tool Read ${JSON.stringify(input)}`, { tools: TOOLS }))
      .finalMessage();
    expect(tool.stop_reason).toBe('tool_use');
    expect(tool.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/) as unknown, name: 'Read', input }]);
    const usage = t.model.log.entries()[1]?.usage;
    expect(tool.usage).toMatchObject({ output_tokens: usage?.output_tokens, input_tokens: usage?.input_tokens });
    expect(t.model.log.entries().map((e) => [e.stream, e.outcome])).toEqual([
      [true, 'completed'],
      [true, 'completed'],
    ]);
  });

  it('sends the SSE event sequence with event lines and several deltas', async () => {
    const res = await rawPost(t.model, '/v1/messages', JSON.stringify({ ...ask('@reply abcdefghijkl'), stream: true }));
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sseEvents(res.text);
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events.every((e) => e.data.type === e.event)).toBe(true);
    const start = events[0]?.data.message as { content: unknown[]; usage: { input_tokens: number } };
    expect(start.content).toEqual([]);
    expect(start.usage.input_tokens).toBeGreaterThan(0);
    const delta = events[7]?.data as { delta: { stop_reason: string }; usage: { output_tokens: number } };
    expect(delta.delta.stop_reason).toBe('end_turn');
    expect(delta.usage.output_tokens).toBe(3);
  });

  it('accepts the 0.x wire (x-api-key, 2023-06-01) as well', async () => {
    const res = await rawPost(t.model, '/v1/messages', JSON.stringify(ask('@reply old wire')));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect((JSON.parse(res.text) as { content: unknown }).content).toEqual([{ type: 'text', text: 'old wire' }]);
  });

  it('rejects requests without a key, and unknown or missing versions', async () => {
    const body = JSON.stringify(ask('@reply x'));
    const noKey = await rawPost(t.model, '/v1/messages', body, { 'x-api-key': '' });
    expect(noKey.status).toBe(401);
    expect(JSON.parse(noKey.text)).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: expect.stringContaining('Missing API key') as unknown },
      request_id: noKey.headers.get('request-id'),
    });
    const badVersion = await rawPost(t.model, '/v1/messages', body, { 'anthropic-version': '2024-01-01' });
    expect(badVersion.status).toBe(400);
    expect((JSON.parse(badVersion.text) as { error: { message: string } }).error.message).toContain(
      '"2024-01-01" is not a supported version',
    );
    const noVersion = await rawPost(t.model, '/v1/messages', body, { 'anthropic-version': '' });
    expect(noVersion.status).toBe(400);
    expect(noVersion.text).toContain('anthropic-version: header is required');
    expect(t.model.log.entries().map((e) => e.outcome)).toEqual(['rejected', 'rejected', 'rejected']);
  });

  it('answers unknown paths with 404 not_found_error', async () => {
    const res = await rawPost(t.model, '/v1/complete', '{}');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = JSON.parse(res.text) as { error: { type: string }; request_id: string };
    expect(body.error.type).toBe('not_found_error');
    expect(body.request_id).toBe(res.headers.get('request-id'));
    const get = await fetch(`${t.model.url}/v1/messages`);
    expect(get.status).toBe(404);
  });

  it('counts tokens with the same estimate the usage reports', async () => {
    const params = ask('@reply counted', { system: 'You are terse.', tools: TOOLS });
    const { input_tokens } = await t.client.messages.countTokens({ model: params.model, messages: params.messages, system: params.system, tools: params.tools });
    const msg = await t.client.messages.create(params);
    const u = msg.usage;
    expect(input_tokens).toBeGreaterThan(0);
    expect(input_tokens).toBe(u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0));
  });

  it('logs the exact bytes received', async () => {
    const body = '{ "model" : "claude-sonnet-4-6",\n  "max_tokens": 64, "messages": [{"role":"user","content":"@reply \\u00e9 ✓ 🚀"}] }';
    const res = await rawPost(t.model, '/v1/messages', body);
    expect(res.status).toBe(200);
    const entry = t.model.log.entries()[0];
    expect(entry?.rawBody).toBe(body);
    expect(Buffer.from(entry?.rawBody ?? '', 'utf8').equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(entry?.body).toEqual(JSON.parse(body));
    expect((JSON.parse(res.text) as { content: unknown }).content).toEqual([{ type: 'text', text: 'é ✓ 🚀' }]);
  });

  it('is deterministic: the same request gets the same response bytes', async () => {
    const body = JSON.stringify(ask('@tool Glob {"pattern":"**/*.ts"}', { tools: TOOLS }));
    const a = await rawPost(t.model, '/v1/messages', body);
    const b = await rawPost(t.model, '/v1/messages', body);
    expect(a.text).toBe(b.text);
    expect(a.headers.get('request-id')).not.toBe(b.headers.get('request-id'));
  });

  it('logs a request whose client aborted as aborted', async () => {
    const controller = new AbortController();
    const pending = t.client.messages.create(ask('@sleep 60000 @reply too late'), { signal: controller.signal });
    const received = await t.model.log.waitFor((e) => e.body !== undefined);
    expect(received.outcome).toBe('pending');
    controller.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    const aborted = await t.model.log.waitFor((e) => e.outcome === 'aborted');
    expect(aborted.seq).toBe(received.seq);
    expect(aborted.responseBeganAt).toBeUndefined();
    expect(aborted.endedAt).toBeGreaterThanOrEqual(aborted.receivedAt);
  });

  it('logs a stream the client abandons halfway as aborted', async () => {
    const slow = await startOfflineModel({ streamChunkDelayMs: 60_000 });
    try {
      const controller = new AbortController();
      const stream = clientFor(slow).messages.stream(ask('@reply never finished'), { signal: controller.signal });
      stream.on('streamEvent', (event) => {
        if (event.type === 'message_start') controller.abort();
      });
      await expect(stream.finalMessage()).rejects.toThrow(/abort/i);
      const entry = await slow.log.waitFor((e) => e.outcome === 'aborted');
      expect(entry.status).toBe(200);
      expect(entry.responseBeganAt).toBeDefined();
    } finally {
      await slow.close();
    }
  });

  it('notifies update listeners and resolves waitFor on later changes', async () => {
    const seen: string[] = [];
    const listener = (e: { seq: number; outcome: string }): void => void seen.push(`${e.seq}:${e.outcome}`);
    t.model.log.on('update', listener);
    const done = t.model.log.waitFor((e) => e.outcome === 'completed');
    await t.client.messages.create(ask('@reply hi'));
    expect((await done).seq).toBe(1);
    t.model.log.off('update', listener);
    expect(seen[0]).toBe('1:pending');
    expect(seen[seen.length - 1]).toBe('1:completed');
    await expect(t.model.log.waitFor((e) => e.seq === 99, { timeoutMs: 20 })).rejects.toThrow(/no matching entry.*#1 POST/);
    t.model.log.clear();
    expect(t.model.log.entries()).toEqual([]);
    await t.client.messages.create(ask('@reply again'));
    expect(t.model.log.entries().map((e) => e.seq)).toEqual([2]);
  });

  it('trims the log to maxLogEntries, oldest first', async () => {
    const small = await startOfflineModel({ maxLogEntries: 2 });
    try {
      for (const word of ['a', 'b', 'c']) await clientFor(small).messages.create(ask(`@reply ${word}`));
      expect(small.log.entries().map((e) => e.seq)).toEqual([2, 3]);
    } finally {
      await small.close();
    }
  });

  it('enforces the apiKey option', async () => {
    const locked = await startOfflineModel({ apiKey: 'right' });
    try {
      const err = await apiError(clientFor(locked, 'wrong').messages.create(ask('@reply x')));
      expect(err.status).toBe(401);
      expect(errorOf(err).type).toBe('authentication_error');
      const ok = await clientFor(locked, 'right').messages.create(ask('@reply x'));
      expect(ok.content).toEqual([{ type: 'text', text: 'x' }]);
      const legacy = await rawPost(locked, '/v1/messages', JSON.stringify(ask('@reply y')), { 'x-api-key': 'right' });
      expect(legacy.status).toBe(200);
    } finally {
      await locked.close();
    }
  });

  it('close() ends in-flight requests and frees the port', async () => {
    const model = await startOfflineModel();
    const pending = clientFor(model).messages.create(ask('@sleep 60000 @reply x'));
    const caught = pending.catch((e: unknown) => e);
    await model.log.waitFor((e) => e.body !== undefined);
    await model.close();
    expect(await caught).toBeInstanceOf(Error);
    expect((await model.log.waitFor((e) => e.outcome !== 'pending')).outcome).toBe('aborted');
    await expect(fetch(`${model.url}/v1/messages`, { method: 'POST' })).rejects.toThrow();
  });
});
