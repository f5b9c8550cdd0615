/**
 * cacheKeyHash: the same in every process (it is recorded and compared across workers and
 * replays), changed by exactly what the provider's cache depends on — system and its block
 * cache policies, tools, model, thinking — and by nothing else.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { SystemParam } from '../../../src/shared/messages-api/anthropic';
import { cacheKeyHash, messagePrefixHash, type CacheKeyParts } from '../../../src/shared/prefix/cache-key';
import { fromParentRequest } from '../../../src/shared/prefix/snapshot';
import { parentBody, text, toolResult, TOOLS, user } from './kit';

const probe = join(__dirname, 'cache-key-probe.ts');

/** cacheKeyHash computed by a fresh Node process. */
function hashInChildProcess(parts: unknown): string {
  return execFileSync(process.execPath, ['-r', require.resolve('tsx/cjs'), probe], { input: JSON.stringify(parts), encoding: 'utf8' }).trim();
}

/** The same value with every object's keys in reverse order (canonical JSON must not care). */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reverseKeys(v)]));
}

const parts: CacheKeyParts = fromParentRequest(parentBody());

describe('cacheKeyHash', () => {
  it('is the same in separate processes, whatever the key order of the input', () => {
    const here = cacheKeyHash(parts);
    expect(here).toMatch(/^[0-9a-f]{64}$/);
    const first = hashInChildProcess(parts);
    const second = hashInChildProcess(reverseKeys(parts));
    expect(JSON.stringify(reverseKeys(parts))).not.toBe(JSON.stringify(parts));
    expect([first, second]).toEqual([here, here]);
  });

  it('keeps its recorded value (a change re-keys every recorded fork: bump `v` on purpose)', () => {
    const tools = [{ name: 'Read', description: 'Read a file', input_schema: { type: 'object' as const } }];
    expect(cacheKeyHash({ system: 'You are helpful.', tools, model: 'claude-sonnet-5-5' })).toBe('e456a354256e4c8b4e52857515a369345637e66f20289192e840d9408b743cf4');
  });

  const sys = parts.system as Exclude<SystemParam, string>;
  it.each<[string, Partial<CacheKeyParts>]>([
    ['a tool description', { tools: [{ ...TOOLS[0]!, description: 'Read a file (v2)' }, TOOLS[1]!] }],
    ['a tool schema', { tools: [TOOLS[0]!, { ...TOOLS[1]!, input_schema: { type: 'object', properties: {} } }] }],
    ['the tool order', { tools: [TOOLS[1]!, TOOLS[0]!] }],
    ['a system text', { system: [sys[0]!, text('Project rules: be bold.', sys[1]!.cache_control!)] }],
    ['a system block cache policy (ttl 1h → 5m)', { system: [sys[0]!, text(sys[1]!.text, { type: 'ephemeral', ttl: '5m' })] }],
    ['a system block cache policy (marker added)', { system: [text(sys[0]!.text, { type: 'ephemeral' }), sys[1]!] }],
    ['the model', { model: 'claude-opus-5' }],
    ['the thinking budget', { thinking: { type: 'enabled', budget_tokens: 4096 } }],
    ['thinking switched off', { thinking: undefined }],
  ])('changes with %s', (_what, change) => {
    expect(cacheKeyHash({ ...parts, ...change })).not.toBe(cacheKeyHash(parts));
  });

  it('ignores temperature, max tokens, messages and per-tool cache markers', () => {
    const base = cacheKeyHash(fromParentRequest(parentBody()));
    const other = fromParentRequest({
      ...parentBody(),
      temperature: 1,
      top_p: 0.1,
      top_k: 3,
      max_tokens: 17,
      messages: [{ role: 'user', content: 'a different conversation' }],
      tools: TOOLS.map((t) => ({ ...t, cache_control: { type: 'ephemeral' } })),
    });
    expect(cacheKeyHash(other)).toBe(base);
  });

  it('treats a string system prompt and one unmarked text block as the same prompt', () => {
    const asString = cacheKeyHash({ system: 'Be brief.', tools: [], model: 'm' });
    expect(cacheKeyHash({ system: [text('Be brief.')], tools: [], model: 'm' })).toBe(asString);
    expect(cacheKeyHash({ system: [{ type: 'text', text: 'Be brief.', cache_control: null }], tools: [], model: 'm' })).toBe(asString);
    expect(cacheKeyHash({ system: [text('Be brief.', { type: 'ephemeral' })], tools: [], model: 'm' })).not.toBe(asString);
  });
});

describe('messagePrefixHash', () => {
  it('ignores cache markers, nested ones in tool results included, but not content', () => {
    const plain = [user(toolResult('a', [text('x'), text('y')]), text('go'))];
    const marked = [user({ ...toolResult('a', [text('x', { type: 'ephemeral' }), text('y')]), cache_control: { type: 'ephemeral' } }, text('go', { type: 'ephemeral' }))];
    expect(messagePrefixHash(marked)).toBe(messagePrefixHash(plain));
    expect(messagePrefixHash([user(toolResult('a', [text('x'), text('z')]), text('go'))])).not.toBe(messagePrefixHash(plain));
    expect(messagePrefixHash([{ role: 'user', content: 'go' }])).toBe(messagePrefixHash([user(text('go'))]));
  });
});
