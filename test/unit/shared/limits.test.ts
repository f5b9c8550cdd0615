/**
 * The limits on JSON inputs (src/shared/wire/limits.ts) as validation applies them: a fork input
 * or snapshot nested 5,000 deep, over the size or count limits, or with a 50 MB prompt is
 * refused by `validateForkInput` / `validateSnapshot` with the limit named, before zod or any
 * hash sees it; inputs at the limits pass. The byte-level depth scan agrees with the walk.
 */
import { jsonLimitIssue, jsonTextDepth, MAX_BLOCKS, MAX_INPUT_CHARS, MAX_JSON_DEPTH, MAX_MESSAGES, MAX_PROMPT_CHARS, MAX_TOOLS } from '../../../src/shared/wire/limits';
import { validateForkInput, validateSnapshot } from '../../../src/shared/wire/fork-input-validation';
import { undecodable } from '../../../src/shared/wire/undecodable';

/** `{"a":{"a":…1…}}` nested `depth` objects deep. */
const nested = (depth: number): unknown => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
const snapshot = (extra: Record<string, unknown> = {}) => ({ system: 'sys', tools: [], model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'hi' }], ...extra });
const tool = (schema: unknown) => ({ name: 'deep', description: 'x', input_schema: { type: 'object', properties: { p: schema } } });

test('nesting: 5,000 levels in a tool schema or a message block are refused by name, before zod', () => {
  const deepTool = validateForkInput({ prompt: 'go', tools: [tool(nested(5000))] });
  expect(deepTool).toEqual({ ok: false, issues: [`(input): the forkWorkflow input is nested deeper than ${MAX_JSON_DEPTH} levels (MAX_JSON_DEPTH)`] });
  const deepBlock = validateForkInput({ prompt: 'go', parent: snapshot({ messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'x', input: nested(5000) }] }] }) });
  expect(deepBlock.ok ? [] : deepBlock.issues).toEqual([expect.stringContaining('MAX_JSON_DEPTH')]);
  expect(validateSnapshot(snapshot({ tools: [tool(nested(5000))] }))).toEqual({ ok: false, issues: [`(input): the snapshot is nested deeper than ${MAX_JSON_DEPTH} levels (MAX_JSON_DEPTH)`] });
  // At the limit it is an ordinary input (the tool and its schema take 5 of the levels).
  expect(validateForkInput({ prompt: 'go', tools: [tool(nested(MAX_JSON_DEPTH - 6))] }).ok).toBe(true);
  expect(validateForkInput({ prompt: 'go', tools: [tool(nested(MAX_JSON_DEPTH - 4))] }).ok).toBe(false);
});

test('a depth of a million costs a walk of one path, not a stack', () => {
  expect(jsonLimitIssue(JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`))).toMatch(/MAX_JSON_DEPTH/);
});

test('size: a 50 MB prompt, and 33 MB of anything, are refused by name', () => {
  const prompt = 'x'.repeat(50 * 1024 * 1024);
  expect(validateForkInput({ prompt })).toEqual({ ok: false, issues: [`prompt: longer than ${MAX_PROMPT_CHARS.toLocaleString('en-US')} characters (MAX_PROMPT_CHARS)`] });
  const many = Array.from({ length: 33 }, () => ({ role: 'user', content: 'y'.repeat(1024 * 1024) }));
  const big = validateForkInput({ prompt: 'go', parent: snapshot({ messages: many }) });
  expect(big).toEqual({ ok: false, issues: [`(input): the forkWorkflow input is larger than ${MAX_INPUT_CHARS.toLocaleString('en-US')} characters (MAX_INPUT_CHARS)`] });
  expect(validateForkInput({ prompt: 'x'.repeat(MAX_PROMPT_CHARS) }).ok).toBe(true);
});

test('counts: messages, blocks and tools past their limits are refused by zod with the limit named', () => {
  const messages = validateSnapshot(snapshot({ messages: Array.from({ length: MAX_MESSAGES + 1 }, () => ({ role: 'user', content: '' })) }));
  expect(messages.ok ? [] : messages.issues).toEqual([expect.stringMatching(/^messages: at most 100000 messages \(MAX_MESSAGES\)/)]);
  const blocks = validateSnapshot(snapshot({ messages: [{ role: 'user', content: Array.from({ length: MAX_BLOCKS + 1 }, () => ({ type: 'text', text: '' })) }] }));
  expect(blocks.ok ? [] : blocks.issues).toEqual([expect.stringMatching(/MAX_BLOCKS/)]);
  const tools = validateForkInput({ prompt: 'go', tools: Array.from({ length: MAX_TOOLS + 1 }, (_, i) => ({ name: `t${i}`, input_schema: { type: 'object' } })) });
  expect(tools.ok ? [] : tools.issues).toEqual([expect.stringMatching(/MAX_TOOLS/)]);
});

test('an input its worker could not decode fails validation with the reason', () => {
  expect(validateForkInput(undecodable('it cannot be decrypted (unknown key)'))).toEqual({ ok: false, issues: ['(input): its payload could not be decoded: it cannot be decrypted (unknown key)'] });
});

test('the byte scan: depth of JSON text, strings (with escaped quotes and brackets) skipped, stopping past the limit', () => {
  const bytes = (s: string) => new TextEncoder().encode(s);
  expect(jsonTextDepth(bytes('{"a":[1,{"b":"]]]}}}"}],"c":"\\"[[["}'), 10)).toBe(3);
  expect(jsonTextDepth(bytes('"[[[[["'), 2)).toBe(0);
  expect(jsonTextDepth(bytes('['.repeat(5000)), MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1);
  const text = JSON.stringify(nested(40));
  expect(jsonTextDepth(bytes(text), 100)).toBe(40);
});
