/**
 * Shared kit for the tests of src/shared: message builders, a parent request body shaped
 * like a real one (mid-round, with unanswered tool calls), a seeded random conversation
 * generator for property-style tests, and inspectors for request bodies.
 */
import type { CacheControl, ContentBlock, MessageParam, MessagesRequest, TextBlock, ToolDefinition, ToolResultBlock, ToolUseBlock } from '../../../src/shared/messages-api/anthropic';

export const text = (t: string, cache_control?: CacheControl): TextBlock => (cache_control ? { type: 'text', text: t, cache_control } : { type: 'text', text: t });
export const toolUse = (id: string, name = 'Read', input: unknown = { path: `/src/${id}.ts` }): ToolUseBlock => ({ type: 'tool_use', id, name, input });
export const toolResult = (id: string, content: ToolResultBlock['content'] = `contents of ${id}`): ToolResultBlock => ({ type: 'tool_result', tool_use_id: id, content });
export const user = (...content: ContentBlock[]): MessageParam => ({ role: 'user', content });
export const assistant = (...content: ContentBlock[]): MessageParam => ({ role: 'assistant', content });

export const TOOLS: ToolDefinition[] = [
  { name: 'Read', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'Grep', description: 'Search files', input_schema: { type: 'object', properties: { pattern: { type: 'string' } } } },
];

/**
 * A parent's last request body as a client sends it: snake_case, sampling settings from an
 * older caller, a marked system block, and a final assistant turn whose two tool calls have
 * no results yet (field order deliberately not alphabetical, to catch reordering).
 */
export function parentBody(): Record<string, unknown> {
  return {
    model: 'claude-sonnet-5-5',
    max_tokens: 4096,
    temperature: 0.3,
    top_p: 0.9,
    top_k: 40,
    system: [text('You are the main agent.'), text('Project rules: be careful.', { type: 'ephemeral', ttl: '1h' })],
    tools: TOOLS,
    thinking: { type: 'enabled', budget_tokens: 2048 },
    tool_choice: { type: 'auto' },
    messages: [
      { role: 'user', content: 'Find the flaky tests and fix them.' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Look at the test folder first.', signature: 'sig-1' },
          { type: 'tool_use', name: 'Grep', id: 'toolu_01', input: { pattern: 'retry', zeta: 1, alpha: [3, 2, 1] } },
        ],
      },
      { role: 'user', content: [{ tool_use_id: 'toolu_01', type: 'tool_result', content: 'test/a.test.ts\ntest/b.test.ts', cache_control: { type: 'ephemeral' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Two candidates; I will read both.' },
          { type: 'tool_use', id: 'toolu_02', name: 'Read', input: { path: 'test/a.test.ts', unicode: 'naïve — ✓ 🧪' } },
          { type: 'tool_use', id: 'toolu_03', name: 'Read', input: { path: 'test/b.test.ts' } },
        ],
      },
    ],
  };
}

/** Freezes a value and everything inside it: any later write throws (test modules are strict). */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Paths of every `cache_control` marker anywhere in a value (nested tool_result content included), sorted. */
export function markerPaths(value: unknown): string[] {
  const walk = (v: unknown, path: string): string[] => {
    if (Array.isArray(v)) return v.flatMap((x, i) => walk(x, `${path}[${i}]`));
    if (!v || typeof v !== 'object') return [];
    return Object.entries(v).flatMap(([k, x]) => (k === 'cache_control' && x ? [path] : walk(x, `${path}.${k}`)));
  };
  return walk(value, '$').sort();
}

/** Blocks of a request's message that carry a marker, as `m:b` strings. */
export function markedBlocks(body: MessagesRequest): string[] {
  return body.messages.flatMap((m, mi) =>
    typeof m.content === 'string' ? [] : m.content.flatMap((b, bi) => ('cache_control' in b && b.cache_control ? [`${mi}:${bi}`] : [])),
  );
}

/** A small deterministic PRNG (mulberry32), so a failing property case can be replayed by seed. */
export function rng(seed: number): { int(n: number): number; pick<T>(xs: readonly T[]): T; chance(p: number): boolean } {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return { int, pick: (xs) => xs[int(xs.length)]!, chance: (p) => next() < p };
}

const CC: CacheControl[] = [{ type: 'ephemeral' }, { type: 'ephemeral', ttl: '1h' }];

/**
 * A random but well-formed conversation: alternating turns that start with a user, string
 * and block content, thinking blocks, tool rounds whose results are sometimes missing
 * (a crash), nested markers inside tool results, stray markers from the parent's own requests.
 */
export function randomConversation(r: ReturnType<typeof rng>): MessageParam[] {
  const messages: MessageParam[] = [];
  const turns = 1 + r.int(9);
  let pending: string[] = [];
  let id = 0;
  for (let t = 0; t < turns; t++) {
    if (t % 2 === 0) {
      const blocks: ContentBlock[] = [];
      for (const u of pending) {
        if (r.chance(0.25)) continue; // lost result
        const nested = r.chance(0.3) ? [text(`out ${u}`, r.pick(CC)), text('more')] : `out ${u}`;
        blocks.push({ ...toolResult(u, nested), ...(r.chance(0.2) ? { cache_control: r.pick(CC) } : {}) });
      }
      pending = [];
      if (blocks.length === 0 || r.chance(0.5)) blocks.push(text(`user says ${t}`, r.chance(0.2) ? r.pick(CC) : undefined));
      const only = blocks.length === 1 ? blocks[0] : undefined;
      messages.push(only?.type === 'text' && r.chance(0.4) ? { role: 'user', content: only.text } : user(...blocks));
    } else {
      const blocks: ContentBlock[] = [];
      if (r.chance(0.4)) blocks.push({ type: 'thinking', thinking: `hmm ${t}`, signature: `s${t}` });
      if (r.chance(0.7)) blocks.push(text(`assistant ${t}`, r.chance(0.15) ? r.pick(CC) : undefined));
      const calls = r.int(4);
      for (let c = 0; c < calls; c++) {
        const u = `toolu_${++id}`;
        pending.push(u);
        blocks.push(toolUse(u, r.pick(['Read', 'Grep'])));
      }
      if (blocks.length === 0 || blocks.every((b) => b.type === 'thinking')) blocks.push(text('done'));
      messages.push(assistant(...blocks));
    }
  }
  return messages;
}
