/**
 * The scripted model through the SDK: every instruction, step selection, scripted faults,
 * loud failures on bad scripts, limits, and the default explore behaviour over
 * hand-built conversations.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { APIConnectionError } from '@anthropic-ai/sdk';
import { MODEL, TOOLS, apiError, ask, errorOf, useOfflineModel } from './helpers';
import { png } from '../../kit/media';

type Params = Anthropic.MessageCreateParamsNonStreaming;
type Message = Anthropic.Message;
type MessageParam = Anthropic.MessageParam;

/** The assistant message as the client would send it back. */
const asParam = (m: Message): MessageParam => ({ role: 'assistant', content: m.content as Anthropic.ContentBlockParam[] });

/** A user message answering every tool_use of `m` with `output`. */
function results(m: Message, output: (name: string) => string, isError = false): MessageParam {
  return {
    role: 'user',
    content: m.content.flatMap((b): Anthropic.ToolResultBlockParam[] =>
      b.type === 'tool_use' ? [{ type: 'tool_result', tool_use_id: b.id, content: output(b.name), ...(isError ? { is_error: true } : {}) }] : [],
    ),
  };
}

const texts = (m: Message): string[] => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : []));
const toolUses = (m: Message): Anthropic.ToolUseBlock[] => m.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');

describe('offline model: scripted model', () => {
  const t = useOfflineModel();
  const create = (p: Params): Promise<Message> => t.client.messages.create(p);

  /** Runs a conversation: each tool round answered by `output`, until end_turn. */
  async function converse(first: Params, output: (name: string) => string): Promise<Message[]> {
    const messages = [...first.messages];
    const replies: Message[] = [];
    for (let i = 0; i < 10; i++) {
      const m = await create({ ...first, messages });
      replies.push(m);
      if (m.stop_reason !== 'tool_use') return replies;
      messages.push(asParam(m), results(m, output));
    }
    throw new Error('conversation did not end');
  }

  it('@reply answers the text, with \\n as a newline', async () => {
    const m = await create(ask('Please say hi.\n  @reply Hi there!\\nSecond line.'));
    expect(m).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'Hi there!\nSecond line.' }] });
    expect(m.usage.output_tokens).toBe(Math.ceil(Buffer.byteLength('Hi there!\nSecond line.') / 4));
  });

  it('@tool calls one tool with a deterministic id derived from the conversation', async () => {
    const p = ask('@tool Grep {"pattern":"TODO","glob":"*.ts"}', { tools: TOOLS });
    const a = await create(p);
    expect(a.stop_reason).toBe('tool_use');
    expect(toolUses(a)).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/) as unknown, name: 'Grep', input: { pattern: 'TODO', glob: '*.ts' } }]);
    const b = await create(p);
    expect(toolUses(b)[0]?.id).toBe(toolUses(a)[0]?.id);
    expect(b.id).toBe(a.id);
    const other = await create(ask('@tool Grep {"pattern":"FIXME"}', { tools: TOOLS }));
    expect(toolUses(other)[0]?.id).not.toBe(toolUses(a)[0]?.id);
  });

  it('@tools makes parallel tool calls with distinct ids', async () => {
    const m = await create(ask('@tools [{"name":"Glob","input":{"pattern":"*.md"}},{"name":"Read","input":{"file_path":"a.txt"}}]', { tools: TOOLS }));
    const uses = toolUses(m);
    expect(uses.map((u) => [u.name, u.input])).toEqual([
      ['Glob', { pattern: '*.md' }],
      ['Read', { file_path: 'a.txt' }],
    ]);
    expect(new Set(uses.map((u) => u.id)).size).toBe(2);
  });

  it('@echo repeats the latest user text without instruction lines', async () => {
    const m = await create(ask('first line\n@echo\n  second line'));
    expect(texts(m)).toEqual(['first line\n  second line']);
  });

  it('runs one step per assistant message after the latest user text, then reports after a tool step', async () => {
    const replies = await converse(
      ask('Survey the repo.\n@tool Glob {"pattern":"*"}\n@tool Read {"file_path":"README.md"}', { tools: TOOLS }),
      (name) =>
        name === 'Glob'
          ? 'README.md\nsrc/index.ts\n[3 more files not shown (5 in total); narrow the pattern or the path.]'
          : '     1\t# Demo project\n     2\tMore text.\n[More lines follow. Continue with offset: 3.]',
    );
    expect(replies.map((m) => toolUses(m)[0]?.name ?? 'text')).toEqual(['Glob', 'Read', 'text']);
    expect(texts(replies[2] as Message)[0]).toBe(
      [
        'Scope: Survey the repo.',
        'Result: Ran 2 tool calls: Glob "*" listed 2 paths; read README.md (2 lines). README.md begins: "# Demo project".',
        'Key files: README.md, src/index.ts',
        'Files changed: none',
        'Issues: none',
      ].join('\n'),
    );
  });

  it('fails loudly when the steps are exhausted after a reply', async () => {
    const m = await create(ask('@reply one'));
    const err = await apiError(create({ ...ask(''), messages: [{ role: 'user', content: '@reply one' }, asParam(m), { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png(2, 2).toString('base64') } }] }] }));
    expect(err.status).toBe(400);
    expect(errorOf(err).message).toMatch(/^Offline model script exhausted: the latest user text has 1 step\(s\) and this request asks for step 2/);
  });

  it('@report summarises the tool calls since the latest user text', async () => {
    const text = [
      '<fork-rules>',
      'You are a worker, not the main agent.',
      '</fork-rules>',
      '',
      '  Check the build scripts.  ',
      'More detail here.',
      '@tool Read {"file_path":"package.json"}',
      '@report',
    ].join('\n');
    const replies = await converse(ask(text, { tools: TOOLS }), () => '{"name":"demo"}');
    expect(texts(replies[1] as Message)[0]).toBe(
      [
        'Scope: Check the build scripts.',
        'Result: Ran 1 tool call: read package.json (1 line). package.json begins: "{"name":"demo"}".',
        'Key files: package.json',
        'Files changed: none',
        'Issues: none',
      ].join('\n'),
    );
  });

  it('counts text in a message that also holds tool results as the new latest user text', async () => {
    const first = await create(ask('@tool Glob {"pattern":"*"}\n@reply never used', { tools: TOOLS }));
    const withText: MessageParam = {
      role: 'user',
      content: [...(results(first, () => 'a.ts').content as Anthropic.ToolResultBlockParam[]), { type: 'text', text: 'New orders.\n@reply switched' }],
    };
    const m = await create({ ...ask('', { tools: TOOLS }), messages: [{ role: 'user', content: '@tool Glob {"pattern":"*"}\n@reply never used' }, asParam(first), withText] });
    expect(texts(m)).toEqual(['switched']);
  });

  it('@repeat expands to N identical steps', async () => {
    const replies = await converse(ask('@repeat 3 @tool Glob {"pattern":"*.ts"}', { tools: TOOLS }), () => 'x.ts');
    expect(replies.map((m) => m.stop_reason)).toEqual(['tool_use', 'tool_use', 'tool_use', 'end_turn']);
    expect(texts(replies[3] as Message)[0]).toMatch(/^Scope: \(no directive\)\nResult: Ran 3 tool calls/);
  });

  it('@sleep holds the response', async () => {
    await create(ask('@sleep 120 @reply rested'));
    const [e] = t.model.log.entries();
    expect((e?.responseBeganAt ?? 0) - (e?.receivedAt ?? 0)).toBeGreaterThanOrEqual(115);
  });

  it('@fail fails the first N attempts of a step, with retry-after; the retry succeeds', async () => {
    const p = ask('@fail 429 x2 retry-after=3 @reply finally');
    for (let i = 1; i <= 2; i++) {
      const err = await apiError(create(p));
      expect(err.status).toBe(429);
      expect(errorOf(err)).toEqual({ type: 'rate_limit_error', message: `Scripted failure: @fail 429 (attempt ${i}).` });
      expect(err.headers?.get('retry-after')).toBe('3');
    }
    expect(texts(await create(p))).toEqual(['finally']);
    expect(t.model.log.entries().map((e) => e.outcome)).toEqual(['fault', 'fault', 'completed']);
  });

  it('@pace streams text in deltas of a few words', async () => {
    const text = 'one two three four five six seven eight nine ten';
    const deltas: string[] = [];
    const stream = t.client.messages.stream(ask(`@pace 5 @reply ${text}`));
    stream.on('text', (d) => deltas.push(d));
    expect(texts(await stream.finalMessage())).toEqual([text]);
    expect(deltas.join('')).toBe(text);
    expect(deltas.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...deltas.map((d) => d.length))).toBeLessThanOrEqual(12);
  });

  it('@stream-error breaks the stream once (529 for JSON); the retry succeeds', async () => {
    const p = ask('@stream-error @reply streamed');
    const err = await t.client.messages.stream(p).finalMessage().catch((e: unknown) => e);
    expect(errorOf(err as never).type).toBe('overloaded_error');
    expect(texts(await t.client.messages.stream(p).finalMessage())).toEqual(['streamed']);
    const json = await apiError(create(ask('@stream-error @reply json')));
    expect(json.status).toBe(529);
  });

  it('@drop drops the connection once; the retry succeeds', async () => {
    const p = ask('@drop x1 @reply survived');
    expect(await create(p).catch((e: unknown) => e)).toBeInstanceOf(APIConnectionError);
    expect(texts(await create(p))).toEqual(['survived']);
  });

  it('chains several scripted faults in order', async () => {
    const p = ask('@fail 500 @fail 503 @reply ok');
    expect((await apiError(create(p))).status).toBe(500);
    expect((await apiError(create(p))).status).toBe(503);
    expect(texts(await create(p))).toEqual(['ok']);
  });

  it.each([
    ['@frobnicate now', /unknown instruction "@frobnicate"\. Known instructions: actions @reply, @tool, @tools, @echo, @report, @recall, @explore; modifiers @sleep, @pace, @fail, @stream-error, @drop, @think; macro @repeat/],
    ['@tool Read {not json}', /@tool input is not valid JSON/],
    ['@tool Read [1]', /@tool input must be a JSON object/],
    ['@tools []', /@tools needs a non-empty JSON array/],
    ['@reply', /@reply needs the text/],
    ['@sleep @reply x', /@sleep needs a delay/],
    ['@fail 200 @reply x', /@fail needs an HTTP error status/],
    ['@sleep 5', /a step needs an action/],
    ['@reply x\n@explore\n@reply y', /@explore .* must be the last step/],
    ['@echo loudly', /@echo takes no arguments/],
  ])('rejects the script %j with a 400 naming the problem', async (script, message) => {
    const err = await apiError(create(ask(script)));
    expect(err.status).toBe(400);
    expect(errorOf(err).type).toBe('invalid_request_error');
    expect(errorOf(err).message).toMatch(message);
  });

  it('applies stop_sequences and max_tokens to the scripted output', async () => {
    const stopped = await create(ask('@reply alpha STOP beta', { stop_sequences: ['STOP'] }));
    expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'STOP', content: [{ type: 'text', text: 'alpha ' }] });
    const cut = await create(ask(`@reply ${'word '.repeat(40)}`, { max_tokens: 5 }));
    expect(cut.stop_reason).toBe('max_tokens');
    expect(texts(cut)[0]).toBe('word word word word ');
    expect(cut.usage.output_tokens).toBe(5);
  });

  describe('default behaviour (no instructions)', () => {
    const forkText = '<fork-boilerplate version="1">\nYou are a fork worker.\nBegin with Scope:.\n</fork-boilerplate>\nFind how the CLI starts.\nDetails follow.';

    it('Globs, Reads the README, then reports', async () => {
      const p: Params = { model: MODEL, max_tokens: 1024, tools: TOOLS, messages: [{ role: 'user', content: forkText }] };
      const m0 = await create(p);
      expect(toolUses(m0).map((u) => [u.name, u.input])).toEqual([['Glob', { pattern: '*' }]]);

      const h1: MessageParam[] = [...p.messages, asParam(m0), results(m0, () => 'src/cli.ts\ndocs/ReadMe.MD\npackage.json')];
      const m1 = await create({ ...p, messages: h1 });
      expect(toolUses(m1).map((u) => [u.name, u.input])).toEqual([['Read', { file_path: 'docs/ReadMe.MD' }]]);

      const h2: MessageParam[] = [...h1, asParam(m1), results(m1, () => '1\tforkflow runs forks.\n2\tSecond line.')];
      const m2 = await create({ ...p, messages: h2 });
      expect(m2.stop_reason).toBe('end_turn');
      expect(texts(m2)[0]).toBe(
        [
          'Scope: Find how the CLI starts.',
          'Result: Ran 2 tool calls: Glob "*" listed 3 paths; read docs/ReadMe.MD (2 lines). docs/ReadMe.MD begins: "forkflow runs forks.".',
          'Key files: docs/ReadMe.MD, src/cli.ts, package.json',
          'Files changed: none',
          'Issues: none',
        ].join('\n'),
      );
      const after = await apiError(create({ ...p, messages: [...h2, asParam(m2), { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png(2, 2).toString('base64') } }] }] }));
      expect(errorOf(after).message).toMatch(/default behaviour already answered/);
    });

    it('reads the first listed file when there is no README', async () => {
      const replies = await converse({ ...ask('Look around.'), tools: TOOLS }, (name) => (name === 'Glob' ? 'b.ts\na.ts' : 'content'));
      expect(toolUses(replies[1] as Message)[0]?.input).toEqual({ file_path: 'b.ts' });
    });

    it('skips to the report when a tool result is an error or empty', async () => {
      const p: Params = { ...ask('Look around.'), tools: TOOLS };
      const m0 = await create(p);
      const failed = await create({ ...p, messages: [...p.messages, asParam(m0), results(m0, () => 'Permission denied', true)] });
      expect(texts(failed)[0]).toMatch(/^Scope: Look around\.\nResult: Ran 1 tool call: Glob failed \(Permission denied\)\.\nKey files: none\n/);
      const empty = await create({ ...p, messages: [...p.messages, asParam(m0), results(m0, () => '')] });
      expect(empty.stop_reason).toBe('end_turn');
      expect(texts(empty)[0]).toMatch(/Glob "\*" listed 0 paths/);
      const none = await create({ ...p, messages: [...p.messages, asParam(m0), results(m0, () => 'No files match "*" in /work.')] });
      expect(texts(none)[0]).toMatch(/^Scope: Look around\.\nResult: Ran 1 tool call: Glob "\*" listed 0 paths\.\nKey files: none\n/);
    });

    it('reports straight away when no Glob tool is offered', async () => {
      const m = await create(ask('Just answer.'));
      expect(texts(m)[0]).toMatch(/^Scope: Just answer\.\nResult: No tools were run/);
    });

    it('@explore starts the default behaviour after scripted steps', async () => {
      const replies = await converse(ask('Do it.\n@tool Grep {"pattern":"x"}\n@explore', { tools: TOOLS }), (name) => (name === 'Glob' ? 'README.md' : 'text'));
      expect(replies.map((m) => toolUses(m)[0]?.name ?? 'report')).toEqual(['Grep', 'Glob', 'Read', 'report']);
    });
  });
});

describe('task notifications do not restart the script', () => {
  test('the step after a notification is the next step of the script that started the sub-agent', async () => {
    const { latestUserText } = await import('../../../src/offline/scripted/conversation');
    const messages = [
      { role: 'user' as const, content: 'Start.\n@tool Agent {"description":"x","prompt":"y"}\n@reply all done' },
      { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 't1', name: 'Agent', input: {} }] },
      { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 't1', content: 'launched' }] },
      { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'waiting' }] },
      { role: 'user' as const, content: [{ type: 'text' as const, text: '<task-notification>\n<status>completed</status>\n</task-notification>' }] },
    ];
    expect(latestUserText(messages)).toMatchObject({ index: 0 });
    const withMessage = [...messages, { role: 'assistant' as const, content: 'ok' }, { role: 'user' as const, content: 'Now this.\n@reply fresh' }];
    expect(latestUserText(withMessage)).toMatchObject({ index: 6 });
  });
});
