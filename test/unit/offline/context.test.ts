/**
 * The offline model's context window and context management, through the real SDK: windows
 * enforced with the API's status, type and message; the 1M beta; the `prompt_too_long` fault;
 * the compaction edit (summary block, the summarising pass's usage, the script going on from
 * the block); both context-editing edits; forkflow's compaction request; and output cut at the
 * window.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { CONTEXT_1M_BETA } from '../../../src/shared/context/windows';
import { CLEARED_TOOL_RESULT, COMPACT_BETA, CONTEXT_MANAGEMENT_BETA } from '../../../src/shared/context/edits';
import { compactionRequestBlock } from '../../../src/shared/context/summary';
import { MODEL, TOOLS, apiError, ask, errorOf, filler, useOfflineModel } from './helpers';

type Beta = Anthropic.Beta.Messages.BetaMessage;
type BetaParam = Anthropic.Beta.Messages.BetaMessageParam;

const toolUse = (m: Beta) => m.content.find((b): b is Anthropic.Beta.Messages.BetaToolUseBlock => b.type === 'tool_use');
const text = (m: { content: object[] }) => m.content.flatMap((b) => ('text' in b && typeof b.text === 'string' ? [b.text] : [])).join('');

describe('offline model: context windows', () => {
  const t = useOfflineModel({ contextWindow: (model) => (model.includes('small') ? 2_000 : 200_000) });

  it('refuses a prompt over the window as the API does: 400 invalid_request_error, prompt is too long: N tokens > M maximum', async () => {
    const p = ask(filler(2_500), { model: 'claude-small-test' });
    const counted = await t.client.messages.countTokens({ model: p.model, messages: p.messages });
    const err = await apiError(t.client.messages.create(p));
    expect(err.status).toBe(400);
    expect(errorOf(err)).toEqual({ type: 'invalid_request_error', message: `prompt is too long: ${counted.input_tokens} tokens > 2000 maximum` });
    expect(t.model.log.entries().at(-1)?.outcome).toBe('rejected');
  });

  it('answers a prompt that fits, and stops at the window when the output would pass it', async () => {
    const m = await t.client.messages.create(ask(`${filler(1_400)}\n@reply ${filler(500, 'y')}`, { model: 'claude-small-test', max_tokens: 1_000 }));
    expect(m.stop_reason).toBe('model_context_window_exceeded');
    expect(m.usage.input_tokens + m.usage.output_tokens).toBeLessThanOrEqual(2_000);
  });

  it('a prompt_too_long fault answers the same shape with the request\'s own count, and counts as a fault', async () => {
    t.model.faults.add({ kind: 'prompt_too_long' });
    const err = await apiError(t.client.messages.create(ask('@reply hi', { model: 'claude-small-test' })));
    expect(errorOf(err)).toEqual({ type: 'invalid_request_error', message: 'prompt is too long: 2001 tokens > 2000 maximum' });
    expect(t.model.log.entries().at(-1)?.outcome).toBe('fault');
    await expect(t.client.messages.create(ask('@reply hi', { model: 'claude-small-test' }))).resolves.toMatchObject({ content: [{ text: 'hi' }] });
  });
});

describe('offline model: the 1M window', () => {
  const t = useOfflineModel();
  const big = filler(201_000);

  it('is 200K without the beta header, 1M with it on a model that has one, and never on Haiku', async () => {
    const refused = await apiError(t.client.messages.create(ask(`${big}\n@reply ok`)));
    expect(errorOf(refused).message).toMatch(/^prompt is too long: \d+ tokens > 200000 maximum$/);
    const ok = await t.client.beta.messages.create({ ...ask(`${big}\n@reply ok`), betas: [CONTEXT_1M_BETA] });
    expect(text(ok)).toBe('ok');
    const haiku = await apiError(t.client.beta.messages.create({ ...ask(`${big}\n@reply ok`, { model: 'claude-haiku-4-5' }), betas: [CONTEXT_1M_BETA] }));
    expect(errorOf(haiku).message).toMatch(/> 200000 maximum$/);
  });
});

describe('offline model: compaction (compact_20260112)', () => {
  const t = useOfflineModel();
  const compact = { edits: [{ type: 'compact_20260112' as const, trigger: { type: 'input_tokens' as const, value: 50_000 } }] };
  const script = ['Read the notes many times.', '@repeat 3 @tool Read {"file_path":"notes.txt"}', '@recall code word'].join('\n');

  async function turn(messages: BetaParam[]): Promise<Beta> {
    return t.client.beta.messages.create({ model: MODEL, max_tokens: 1024, tools: TOOLS, messages, context_management: compact, betas: [COMPACT_BETA] });
  }

  it('needs its beta header, and a trigger of at least 50,000 tokens', async () => {
    const withoutBeta = await apiError(t.client.beta.messages.create({ ...ask('@reply hi'), context_management: compact }));
    expect(errorOf(withoutBeta).message).toMatch(/compact_20260112 edit needs the anthropic-beta header "compact-2026-01-12"/);
    const low = await apiError(t.client.beta.messages.create({ ...ask('@reply hi'), betas: [COMPACT_BETA], context_management: { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 1_000 } }] } }));
    expect(errorOf(low).message).toMatch(/greater than or equal to 50000/);
  });

  it('below its trigger changes nothing; past it, the reply opens with a compaction block and goes on from it', async () => {
    const messages: BetaParam[] = [{ role: 'user', content: `${script}\nFact: the code word is ORCHID-7` }];
    const first = await turn(messages);
    expect(first.content.map((b) => b.type)).toEqual(['tool_use']);
    messages.push({ role: 'assistant', content: first.content as Anthropic.Beta.Messages.BetaContentBlockParam[] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse(first)!.id, content: filler(52_000) }] });

    const compacted = await turn(messages);
    expect(compacted.content.map((b) => b.type)).toEqual(['compaction', 'tool_use']);
    const block = compacted.content[0] as Anthropic.Beta.Messages.BetaCompactionBlock;
    // The summary carries the directive, the fact, and what is left of the script (one Read done).
    expect(block.content).toContain('Read the notes many times.');
    expect(block.content).toContain('Fact: the code word is ORCHID-7');
    expect(block.content).toContain('@repeat 2 @tool Read {"file_path":"notes.txt"}\n@recall code word');
    // Usage as the API reports it: the summarising pass apart, the top level is the reply's pass alone.
    const [pass, reply] = compacted.usage.iterations!;
    expect(pass).toMatchObject({ type: 'compaction' });
    expect(reply).toMatchObject({ type: 'message', input_tokens: compacted.usage.input_tokens, output_tokens: compacted.usage.output_tokens });
    const passInput = pass!.input_tokens + pass!.cache_read_input_tokens + pass!.cache_creation_input_tokens;
    expect(passInput).toBeGreaterThan(52_000);
    expect(compacted.usage.input_tokens + (compacted.usage.cache_read_input_tokens ?? 0) + (compacted.usage.cache_creation_input_tokens ?? 0)).toBeLessThan(2_000);

    // The client drops what came before the block (as forkflow does): the script goes on.
    const next: BetaParam[] = [{ role: 'assistant', content: compacted.content as Anthropic.Beta.Messages.BetaContentBlockParam[] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse(compacted)!.id, content: 'short' }] }];
    const third = await turn(next);
    expect(third.content.map((b) => b.type)).toEqual(['tool_use']);
    next.push({ role: 'assistant', content: third.content as Anthropic.Beta.Messages.BetaContentBlockParam[] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse(third)!.id, content: 'short' }] });
    const last = await turn(next);
    expect(text(last)).toBe('Recalled: Fact: the code word is ORCHID-7');
    // Sending the whole conversation instead is the same to the model: it ignores what came before the block.
    const whole = await turn([...messages, ...next.slice(0, 2)]);
    expect(whole.content.map((b) => b.type)).toEqual(['tool_use']);
    expect(toolUse(whole)?.input).toEqual(toolUse(third)?.input);
  });

  it('streams the block as the SDK assembles it', async () => {
    const messages: BetaParam[] = [{ role: 'user', content: `${script}\n${filler(51_000)}` }];
    const final = await t.client.beta.messages.stream({ model: MODEL, max_tokens: 1024, tools: TOOLS, messages, context_management: compact, betas: [COMPACT_BETA] }).finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'compaction', content: expect.stringContaining('@repeat 3 @tool Read') as unknown });
    expect(final.usage.iterations?.map((i) => i.type)).toEqual(['compaction', 'message']);
  });

  it('refuses a compaction block without the beta header', async () => {
    const err = await apiError(t.client.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'assistant', content: [{ type: 'compaction', content: 'x' } as never] }, { role: 'user', content: '@reply hi' }] }));
    expect(errorOf(err).message).toMatch(/compaction blocks need the anthropic-beta header/);
  });
});

describe('offline model: context editing', () => {
  const t = useOfflineModel();

  it('clear_tool_uses_20250919 past its trigger clears all but the last results, and reports it', async () => {
    const messages: BetaParam[] = [{ role: 'user', content: '@repeat 5 @tool Read {"file_path":"a"}\n@echo' }];
    for (let i = 0; i < 5; i++) {
      messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'Read', input: { file_path: 'a' } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: filler(600, `r${i}`) }] });
    }
    const context_management = { edits: [{ type: 'clear_tool_uses_20250919' as const, trigger: { type: 'input_tokens' as const, value: 2_000 }, keep: { type: 'tool_uses' as const, value: 2 } }] };
    const params = { model: MODEL, max_tokens: 100, tools: TOOLS, messages, context_management, betas: [CONTEXT_MANAGEMENT_BETA] };
    const m = await t.client.beta.messages.create(params);
    expect(m.context_management?.applied_edits).toEqual([{ type: 'clear_tool_uses_20250919', cleared_tool_uses: 3, cleared_input_tokens: expect.any(Number) as unknown }]);
    const cleared = m.context_management!.applied_edits[0]!.cleared_input_tokens;
    expect(cleared).toBeGreaterThan(1_700);
    const counted = await t.client.beta.messages.countTokens({ model: MODEL, tools: TOOLS, messages, context_management, betas: [CONTEXT_MANAGEMENT_BETA] });
    expect(counted.context_management?.original_input_tokens).toBe(counted.input_tokens + cleared);
    const inputOf = (u: Anthropic.Beta.Messages.BetaUsage) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
    expect(inputOf(m.usage)).toBe(counted.input_tokens);
    expect(CLEARED_TOOL_RESULT).toMatch(/cleared/);
    const without = await apiError(t.client.beta.messages.create({ ...params, betas: [] }));
    expect(errorOf(without).message).toMatch(/needs the anthropic-beta header "context-management-2025-06-27"/);
  });

  it('clear_thinking_20251015 drops thinking from all but the last turn', async () => {
    const thinking = (n: number) => ({ type: 'thinking' as const, thinking: filler(300, `k${n}`), signature: `s${n}` });
    const messages: BetaParam[] = [
      { role: 'user', content: 'Think.\n@reply a\n@reply b\n@reply c' },
      { role: 'assistant', content: [thinking(1), { type: 'text', text: 'a' }] },
      { role: 'user', content: 'more' },
      { role: 'assistant', content: [thinking(2), { type: 'text', text: 'b' }] },
      { role: 'user', content: 'more\n@reply done' },
    ];
    const m = await t.client.beta.messages.create({ model: MODEL, max_tokens: 2048, messages, thinking: { type: 'enabled', budget_tokens: 1024 }, context_management: { edits: [{ type: 'clear_thinking_20251015' }] }, betas: [CONTEXT_MANAGEMENT_BETA] });
    expect(m.context_management?.applied_edits).toEqual([{ type: 'clear_thinking_20251015', cleared_thinking_turns: 1, cleared_input_tokens: expect.any(Number) as unknown }]);
    expect(m.context_management!.applied_edits[0]!.cleared_input_tokens).toBeGreaterThan(250);
  });
});

describe("offline model: forkflow's compaction request", () => {
  const t = useOfflineModel();

  it('answers with a deterministic summary: directive, what was done, files, facts, and the script left', async () => {
    const messages: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Audit the notes.\n@tool Read {"file_path":"notes.txt"}\n@repeat 4 @tool Grep {"pattern":"x"}\n@reply done' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'Read', input: { file_path: 'notes.txt' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'line one\nFact: the build number is 4711' }, compactionRequestBlock()] },
    ];
    const first = await t.client.messages.create({ model: MODEL, max_tokens: 1024, tools: TOOLS, messages });
    const again = await t.client.messages.create({ model: MODEL, max_tokens: 1024, tools: TOOLS, messages });
    expect(text(first)).toBe(text(again));
    expect(text(first).split('\n')).toEqual([
      'Audit the notes.',
      'Summary of 3 messages by the offline model: 1 of 6 scripted steps taken since the latest instructions; tool calls: Read ×1.',
      'Files: notes.txt',
      'Fact: the build number is 4711',
      'Left to do:',
      '@repeat 4 @tool Grep {"pattern":"x"}',
      '@reply done',
    ]);
  });
});
