/**
 * Pure pieces of the scripted model: the instruction parser, reading the conversation
 * (latest user text, steps, the directive's first line) and the report helpers.
 */
import type { MessageParam } from '../../../src/shared/messages-api/anthropic';
import { directiveText } from '../../../src/shared/prefix/fork-messages';
import { directiveLine, exchangesAfter, finishedAssistantTurns, latestUserText, withoutInstructions } from '../../../src/offline/scripted/conversation';
import { ScriptError, parseScript } from '../../../src/offline/scripted/parse';
import { listedPaths } from '../../../src/offline/scripted/report';

describe('scripted model: parser', () => {
  it('reads modifiers then one action per instruction line, ignoring other lines', () => {
    const steps = parseScript(
      ['Do the thing.', '  @sleep 10 @fail 429 x2 retry-after=4 @stream-error @drop x3 @tool Read {"file_path":"a b.txt"}', 'prose @reply not an instruction', '@reply done'].join('\n'),
    );
    expect(steps).toEqual([
      {
        source: '@sleep 10 @fail 429 x2 retry-after=4 @stream-error @drop x3 @tool Read {"file_path":"a b.txt"}',
        line: '@sleep 10 @fail 429 x2 retry-after=4 @stream-error @drop x3 @tool Read {"file_path":"a b.txt"}',
        modifiers: [
          { kind: 'sleep', ms: 10 },
          { kind: 'fail', status: 429, times: 2, retryAfterSeconds: 4 },
          { kind: 'stream-error', times: 1 },
          { kind: 'drop', times: 3 },
        ],
        action: { kind: 'tool', calls: [{ name: 'Read', input: { file_path: 'a b.txt' } }] },
      },
      { source: '@reply done', line: '@reply done', modifiers: [], action: { kind: 'reply', text: 'done' } },
    ]);
  });

  it('expands @repeat and keeps the action text verbatim', () => {
    const steps = parseScript('@repeat 3 @sleep 1 @reply a @tool-like text');
    expect(steps).toHaveLength(3);
    expect(steps[2]?.action).toEqual({ kind: 'reply', text: 'a @tool-like text' });
    expect(steps[2]?.modifiers).toEqual([{ kind: 'sleep', ms: 1 }]);
    // The step alone, for a summary that re-writes what is left of a script.
    expect(steps[2]?.line).toBe('@sleep 1 @reply a @tool-like text');
  });

  it('reads @pace as a modifier with its delay', () => {
    expect(parseScript('@pace 25 @reply slowly')[0]?.modifiers).toEqual([{ kind: 'pace', ms: 25 }]);
  });

  it.each([
    ['@pace @reply x', /@pace needs a delay/],
    ['@repeat 0 @reply x', /@repeat needs a count/],
    ['@reply x @repeat 2', null],
    ['@sleep 1 @repeat 2 @reply x', /@repeat must come first/],
    ['@explore\n@explore', /must be the last step/],
    ['@repeat 2 @explore', /cannot be repeated/],
    ['@tools [{"name":"Read"}]', /@tools item 0 must be/],
    ['@tool Read', /@tool needs a tool name and a JSON object/],
    ['@drop twice @reply x', /@drop takes only an optional count/],
    ['@ reply x', /unknown instruction|expected an instruction/],
  ])('%j → %p', (script, error) => {
    if (error === null) expect(() => parseScript(script)).not.toThrow();
    else expect(() => parseScript(script)).toThrow(error);
  });

  it('names the line and lists the known instructions in every error', () => {
    let caught: unknown;
    try {
      parseScript('hello\n@bogus 1');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ScriptError);
    expect((caught as Error).message).toBe(
      'Offline model script error in "@bogus 1": unknown instruction "@bogus". Known instructions: ' +
        'actions @reply, @tool, @tools, @echo, @report, @recall, @explore; modifiers @sleep, @pace, @fail, @stream-error, @drop, @think; macro @repeat.',
    );
  });
});

describe('scripted model: reading the conversation', () => {
  const toolUse = (id: string, name = 'Glob'): MessageParam => ({ role: 'assistant', content: [{ type: 'tool_use', id, name, input: { pattern: '*' } }] });
  const result = (id: string, content: string, extra: MessageParam['content'] = []): MessageParam => ({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: id, content }, ...(extra as [])],
  });

  it('finds the latest user text, skipping tool_result-only messages', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
      toolUse('t1'),
      result('t1', 'x'),
      toolUse('t2'),
      result('t2', 'y'),
    ];
    expect(latestUserText(messages)).toEqual({ index: 0, text: 'a\nb' });
    expect(finishedAssistantTurns(messages, 0)).toEqual([1, 3]);
    expect(exchangesAfter(messages, 0).map((x) => [x.name, x.output, x.answered])).toEqual([
      ['Glob', 'x', true],
      ['Glob', 'y', true],
    ]);
    const withText = [...messages.slice(0, 4), result('t2', 'y', [{ type: 'text', text: 'new' }])];
    expect(latestUserText(withText)).toEqual({ index: 4, text: 'new' });
    expect(latestUserText([{ role: 'assistant', content: 'prefill' }])).toEqual({ index: -1, text: '' });
  });

  it('does not count a trailing assistant message (a prefill) as a finished step', () => {
    expect(finishedAssistantTurns([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Sure' }], 0)).toEqual([]);
  });

  it('takes the directive from the first line outside tag blocks and instructions', () => {
    expect(directiveLine('<rules a="1">\nignore me\n</rules>\n\n@reply x\n  Real task  \nmore')).toBe('Real task');
    expect(directiveLine('<note>one-liner</note>\nTask')).toBe('Task');
    expect(directiveLine('<open>\nTask after an unclosed tag')).toBe('Task after an unclosed tag');
    expect(directiveLine('<b>Bold</b> start is a directive')).toBe('<b>Bold</b> start is a directive');
    expect(directiveLine('@reply only\n\n')).toBeUndefined();
    expect(withoutInstructions('a\n @reply x\nb\n')).toBe('a\nb');
  });

  it('finds the directive after the fork boilerplate forkflow sends', () => {
    for (const worktree of [undefined, { parentRoot: '/repo', worktreeRoot: '/repo/.forkflow/worktrees/x' }]) {
      const text = directiveText('Map how the CLI starts.\nThen stop.', { worktree });
      expect(directiveLine(text)).toBe('Map how the CLI starts.');
      expect(parseScript(text)).toEqual([]);
    }
  });

  it('keeps only path-like lines of a listing', () => {
    expect(listedPaths('Found 2 files\nsrc/a.ts\n\n  b c.md  \n(results truncated)\nNo files found')).toEqual(['src/a.ts', 'b c.md']);
  });
});
