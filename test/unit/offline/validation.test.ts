/**
 * Rejections: each one through the real SDK (or raw HTTP where the SDK cannot send the
 * request), checked as the SDK surfaces it: status, error type and message.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { MODEL, TOOLS, apiError, ask, errorOf, rawPost, useOfflineModel } from './helpers';

type Params = Anthropic.MessageCreateParamsNonStreaming;

const toolUse = (id: string): Anthropic.ToolUseBlockParam => ({ type: 'tool_use', id, name: 'Glob', input: { pattern: '*' } });
const toolResult = (id: string): Anthropic.ToolResultBlockParam => ({ type: 'tool_result', tool_use_id: id, content: 'a.ts' });

describe('offline model: request validation', () => {
  const t = useOfflineModel();

  async function rejection(params: unknown): Promise<{ status: number | undefined; type: string; message: string }> {
    const err = await apiError(t.client.messages.create(params as Params));
    return { status: err.status, ...errorOf(err) };
  }

  const cases: [string, unknown, RegExp | string][] = [
    ['a missing model', { max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, 'model: Field required'],
    ['an empty model', { model: '', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, /^model: Input should be a non-empty string/],
    ['a missing max_tokens', { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, 'max_tokens: Field required'],
    ['a zero max_tokens', { model: MODEL, max_tokens: 0, messages: [{ role: 'user', content: 'hi' }] }, /^max_tokens: Input should be an integer/],
    ['a fractional max_tokens', { model: MODEL, max_tokens: 1.5, messages: [{ role: 'user', content: 'hi' }] }, /^max_tokens: /],
    ['missing messages', { model: MODEL, max_tokens: 10 }, 'messages: Field required'],
    ['empty messages', { model: MODEL, max_tokens: 10, messages: [] }, 'messages: at least one message is required'],
    ['a system role', { model: MODEL, max_tokens: 10, messages: [{ role: 'system', content: 'hi' }] }, /^messages\.0\.role: Input should be 'user' or 'assistant'/],
    ['an unknown block type', { model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'video' }] }] }, /^messages\.0\.content\.0\.type: Invalid discriminator/],
    ['an empty user message', { model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: [] }] }, /^messages\.0: content must be non-empty/],
    ['temperature under 2026-10-21', { ...ask('hi'), temperature: 0.2 }, /^temperature: not supported with anthropic-version 2026-10-21/],
    ['top_p under 2026-10-21', { ...ask('hi'), top_p: 0.9 }, /^top_p: not supported/],
    ['top_k under 2026-10-21', { ...ask('hi'), top_k: 5 }, /^top_k: not supported/],
    ['a thinking budget not below max_tokens', { ...ask('hi'), max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } }, /max_tokens must be greater than thinking\.budget_tokens/],
    ['duplicate tool names', { ...ask('hi'), tools: [TOOLS[0], TOOLS[0]] }, /^tools: Tool names must be unique/],
    ['an unknown effort', { ...ask('hi'), output_config: { effort: 'extreme' } }, /^output_config\.effort: /],
    ['an unknown output_config key', { ...ask('hi'), output_config: { effort: 'low', verbosity: 2 } }, /^output_config: /],
  ];

  it.each(cases)('rejects %s', async (_name, params, message) => {
    const r = await rejection(params);
    expect(r.status).toBe(400);
    expect(r.type).toBe('invalid_request_error');
    if (typeof message === 'string') expect(r.message).toBe(message);
    else expect(r.message).toMatch(message);
    expect(t.model.log.entries()[0]).toMatchObject({ status: 400, outcome: 'rejected', error: { type: 'invalid_request_error' } });
  });

  it('takes every effort level in output_config and keeps it in the request log', async () => {
    for (const effort of ['low', 'medium', 'high', 'xhigh', 'max'] as const) {
      const reply = await t.client.messages.create({ ...ask('@reply ok'), output_config: { effort } } as Params);
      expect(reply.content).toEqual([{ type: 'text', text: 'ok' }]);
      expect(t.model.log.entries().at(-1)?.body).toMatchObject({ output_config: { effort } });
    }
  });

  it('allows at most 4 cache_control markers, counting the real number', async () => {
    const cc = { type: 'ephemeral' } as const;
    const block = (text: string): Anthropic.TextBlockParam => ({ type: 'text', text, cache_control: cc });
    const params: Params = {
      ...ask('hi'),
      system: [block('s1'), block('s2')],
      tools: [{ ...(TOOLS[0] as Anthropic.Tool), cache_control: cc }],
      messages: [{ role: 'user', content: [block('a'), block('b'), block('@reply ok')] }],
    };
    expect(await rejection(params)).toEqual({
      status: 400,
      type: 'invalid_request_error',
      message: 'A maximum of 4 blocks with cache_control may be provided. Found 6.',
    });
    const withTopLevel = { ...ask('@reply ok'), system: [block('s1'), block('s2'), block('s3'), block('s4')], cache_control: cc };
    expect((await rejection(withTopLevel)).message).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.');
    const four: Params = { ...ask('@reply ok'), system: [block('s1'), block('s2'), block('s3'), block('s4')] };
    expect((await t.client.messages.create(four)).content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('rejects a tool_result whose tool_use is not in the previous assistant message', async () => {
    const r = await rejection({
      ...ask('x'),
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [toolUse('toolu_a')] },
        { role: 'user', content: [toolResult('toolu_a'), toolResult('toolu_zzz')] },
      ],
    });
    expect(r).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect(r.message).toBe(
      'messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_zzz. ' +
        'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    );
    // Two messages back does not count: the tool_use must be in the message right before.
    const older = await rejection({
      ...ask('x'),
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [toolUse('toolu_a')] },
        { role: 'user', content: [toolResult('toolu_a')] },
        { role: 'assistant', content: 'done' },
        { role: 'user', content: [toolResult('toolu_a')] },
      ],
    });
    expect(older.message).toMatch(/^messages\.4\.content\.0: unexpected `tool_use_id`/);
  });

  it('rejects tool_use ids with no tool_result in the next user message', async () => {
    const r = await rejection({
      ...ask('x'),
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'text', text: 'looking' }, toolUse('toolu_a'), toolUse('toolu_b')] },
        { role: 'user', content: [toolResult('toolu_a'), { type: 'text', text: 'and?' }] },
      ],
    });
    expect(r.message).toBe(
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. ' +
        'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    );
  });

  it('rejects tool_result blocks after other content in a user message', async () => {
    const r = await rejection({
      ...ask('x'),
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [toolUse('toolu_a')] },
        { role: 'user', content: [{ type: 'text', text: 'first' }, toolResult('toolu_a')] },
      ],
    });
    expect(r.message).toBe('messages.2.content.1: tool_result blocks must come first in a user message, before any other content');
  });

  it('accepts consecutive same-role messages (the API merges them)', async () => {
    const msg = await t.client.messages.create({
      ...ask('x'),
      messages: [
        { role: 'user', content: 'context' },
        { role: 'user', content: '@reply merged' },
        { role: 'assistant', content: [toolUse('toolu_a')] },
        { role: 'assistant', content: [toolUse('toolu_b')] },
        { role: 'user', content: [toolResult('toolu_a'), toolResult('toolu_b'), { type: 'text', text: '@reply after tools' }] },
      ],
    });
    expect(msg.content).toEqual([{ type: 'text', text: 'after tools' }]);
  });

  it('rejects a body that is not JSON', async () => {
    const res = await rawPost(t.model, '/v1/messages', '{"model": "x",');
    expect(res.status).toBe(400);
    const body = JSON.parse(res.text) as { error: { type: string; message: string } };
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/^Request body is not valid JSON: /);
    expect(t.model.log.entries()[0]).toMatchObject({ body: undefined, rawBody: '{"model": "x",', outcome: 'rejected' });
  });

  it('accepts sampling parameters under 2023-06-01', async () => {
    const res = await rawPost(t.model, '/v1/messages', JSON.stringify({ ...ask('@reply sampled'), temperature: 0.2, top_k: 3 }));
    expect(res.status).toBe(200);
  });

  it('validates count_tokens requests too (without max_tokens)', async () => {
    const { input_tokens } = await t.client.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(input_tokens).toBeGreaterThan(0);
    const err = await apiError(t.client.messages.countTokens({ model: MODEL, messages: [] }));
    expect(err.status).toBe(400);
    expect(errorOf(err).message).toBe('messages: at least one message is required');
  });
});
