/**
 * fromParentRequest: the parent's request body becomes a snapshot without a byte changing
 * (a mid-round assistant turn included), bad bodies are refused in plain words, sampling
 * settings stay out of requests and the cache key; snapshot hashes explain cache breaks.
 */
import { cacheKeyHash } from '../../../src/shared/prefix/cache-key';
import { buildForkOpening } from '../../../src/shared/prefix/fork-messages';
import { SAMPLING_NOT_SENT, validateForkInput } from '../../../src/shared/wire/fork-input-validation';
import { buildMessagesRequest } from '../../../src/shared/messages-api/request';
import { diagnoseCacheBreak, UNKNOWN_CACHE_BREAK } from '../../../src/shared/prefix/cache-break';
import {
  fromParentRequest,
  InvalidSnapshotError,
  isInvalidSnapshotError,
  requestContextOf,
  snapshotHashes,
} from '../../../src/shared/prefix/snapshot';
import { deepFreeze, parentBody, text, TOOLS } from './kit';

function refusal(body: unknown, opts?: { strict?: boolean }): InvalidSnapshotError {
  try {
    fromParentRequest(body, opts);
  } catch (err) {
    if (err instanceof InvalidSnapshotError) return err;
    throw err;
  }
  throw new Error('expected fromParentRequest to refuse the body');
}

describe('fromParentRequest', () => {
  it('passes an assistant turn with unanswered tool_use blocks through bit for bit, by reference', () => {
    const body = deepFreeze(parentBody()); // any write into the caller's body would throw
    const before = JSON.stringify(body);
    const snapshot = fromParentRequest(body);

    expect(snapshot.messages).toBe(body.messages);
    expect(snapshot.system).toBe(body.system);
    expect(snapshot.tools).toBe(body.tools);
    expect(snapshot.thinking).toBe(body.thinking);
    expect(snapshot.toolChoice).toBe(body.tool_choice);
    expect(JSON.stringify(snapshot.messages)).toBe(JSON.stringify(body.messages));
    const last = snapshot.messages[snapshot.messages.length - 1]!;
    expect(JSON.stringify(last)).toBe(JSON.stringify((body.messages as unknown[])[3]));
    expect(JSON.stringify(body)).toBe(before);
  });

  it('keeps that assistant turn byte-identical in the fork request built from the snapshot', () => {
    const body = deepFreeze(parentBody());
    const snapshot = fromParentRequest(body);
    const opening = buildForkOpening(snapshot.messages, 'Fix test/a.test.ts');
    const request = buildMessagesRequest(requestContextOf(snapshot, 1024), opening.messages, { sharedPrefixEnd: opening.sharedPrefixEnd });
    const original = (body.messages as unknown[])[3];
    expect(opening.messages[3]).toBe(original);
    expect(JSON.stringify(request.messages[3])).toBe(JSON.stringify(original));
    // Both calls answered by the fork's placeholders, in order, and nothing else inserted.
    expect(request.messages).toHaveLength(5);
    expect((request.messages[4]!.content as { tool_use_id?: string }[]).map((b) => b.tool_use_id)).toEqual(['toolu_02', 'toolu_03', undefined]);
  });

  it('maps snake_case to the camelCase wrapper, keeping sampling settings as provenance', () => {
    const snapshot = fromParentRequest(parentBody());
    expect(snapshot).toMatchObject({ model: 'claude-sonnet-5-5', maxTokens: 4096, temperature: 0.3, topP: 0.9, topK: 40 });
    for (const snake of ['max_tokens', 'top_p', 'top_k', 'tool_choice']) expect(snapshot).not.toHaveProperty(snake);
  });

  it('reads an absent system as "" and absent tools as [], and omits absent optionals', () => {
    const snapshot = fromParentRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(snapshot).toEqual({ model: 'm', system: '', tools: [], messages: [{ role: 'user', content: 'hi' }] });
    expect(buildMessagesRequest(requestContextOf(snapshot, 10), snapshot.messages)).not.toHaveProperty('system');
  });

  it('never lets temperature, top_p or top_k reach a request or the cache key', () => {
    const snapshot = fromParentRequest(parentBody());
    const plain = fromParentRequest({ ...parentBody(), temperature: undefined, top_p: undefined, top_k: undefined });
    const opening = buildForkOpening(snapshot.messages, 'go');
    const json = JSON.stringify(buildMessagesRequest(requestContextOf(snapshot, 1024), opening.messages, { sharedPrefixEnd: opening.sharedPrefixEnd }));
    expect(json).not.toMatch(/"(temperature|top_p|top_k|topP|topK)"/);
    expect(JSON.stringify(buildMessagesRequest(requestContextOf(plain, 1024), opening.messages, { sharedPrefixEnd: opening.sharedPrefixEnd }))).toBe(json);
    expect(requestContextOf(snapshot, 1024)).not.toHaveProperty('temperature');
    expect(cacheKeyHash(snapshot)).toBe(cacheKeyHash(plain));
    expect(requestContextOf(snapshot, 1).cacheKeyHash).toBe(cacheKeyHash(plain));
  });

  it('refuses sampling settings asked of the fork itself by name: they are never sent (S4-03)', () => {
    for (const key of ['temperature', 'top_p', 'topP', 'top_k']) {
      const validated = validateForkInput({ prompt: 'go', [key]: 0.2 });
      expect(validated).toEqual({ ok: false, issues: [`${key}: ${SAMPLING_NOT_SENT}`] });
    }
    expect(SAMPLING_NOT_SENT).toContain('2026-10-21');
    expect(validateForkInput({ prompt: 'go' }).ok).toBe(true);
  });

  it('refuses a malformed body with a named error listing each problem in plain words', () => {
    const body = parentBody();
    body.model = '';
    (body.messages as unknown[]).push({ role: 'robot', content: 'x' });
    (body.tools as unknown[]) = [{ name: 'Read', input_schema: { type: 'array' } }];
    const err = refusal(body);
    expect(err.name).toBe('InvalidSnapshotError');
    expect(isInvalidSnapshotError(err)).toBe(true);
    expect(err.issues).toEqual(['model: must not be empty', 'messages[4].role: must be one of "user", "assistant"', 'tools[0].input_schema.type: must be "object"']);
    expect(err.message).toContain('- messages[4].role');
  });

  it('names the bad field inside a block list rather than the string/list union', () => {
    const err = refusal({ model: 'm', messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'x', name: 'Read' }] }] });
    expect(err.issues).toEqual(['messages[0].content[0].input: is missing']);
    expect(refusal('not a body').issues).toEqual(['the request: must be an object']);
  });

  it('refuses what the API itself would refuse: duplicate tool names, more than 4 kept markers', () => {
    expect(refusal({ ...parentBody(), tools: [TOOLS[0], TOOLS[1], TOOLS[0]] }).issues).toEqual([
      'tools[2].name: "Read" is used by an earlier tool; tool names must be unique',
    ]);
    const cc = { type: 'ephemeral' } as const;
    const system = [text('a', cc), text('b', cc), text('c', cc)];
    expect(() => fromParentRequest({ ...parentBody(), system, tools: [{ ...TOOLS[0]!, cache_control: cc }] })).not.toThrow();
    expect(refusal({ ...parentBody(), system, tools: TOOLS.map((t) => ({ ...t, cache_control: cc })) }).issues).toEqual([
      'system, tools: 5 blocks carry cache_control; the API accepts at most 4 in a request',
    ]);
  });

  it('ignores unknown top-level fields unless strict', () => {
    const body = { ...parentBody(), container: 'c-1', metadata: { user_id: 'u' }, stream: true };
    expect(fromParentRequest(body).model).toBe('claude-sonnet-5-5');
    expect(refusal(body, { strict: true }).issues).toEqual(['container: not carried into a fork, and may change the prompt (strict mode)']);
    expect(() => fromParentRequest({ ...parentBody(), metadata: {}, stream: true, cache_control: { type: 'ephemeral' }, output_config: { effort: 'low' } }, { strict: true })).not.toThrow();
  });

  it("carries the request's mcp_servers (the provider's MCP connector) into the fork's requests, unchanged, and into the cache key", () => {
    const servers = [{ type: 'url', url: 'https://mcp.example/sse', name: 'example', authorization_token: 't' }];
    const body = { ...parentBody(), mcp_servers: servers };
    const snapshot = fromParentRequest(body, { strict: true });
    expect(snapshot.mcpServers).toBe(servers);
    const ctx = requestContextOf(snapshot, 1024);
    expect(ctx.mcpServers).toBe(servers);
    expect(buildMessagesRequest(ctx, snapshot.messages).mcp_servers).toBe(servers);
    const without = requestContextOf(fromParentRequest(parentBody()), 1024);
    expect(buildMessagesRequest(without, snapshot.messages)).not.toHaveProperty('mcp_servers');
    expect(ctx.cacheKeyHash).not.toBe(without.cacheKeyHash);
    expect(without.cacheKeyHash).toBe(cacheKeyHash({ system: without.system, tools: without.tools, model: without.model, thinking: without.thinking }));
  });

  it('isInvalidSnapshotError recognises the error by name, and nothing else', () => {
    const foreign = Object.assign(new Error('x'), { name: 'InvalidSnapshotError', issues: ['a'] });
    expect(isInvalidSnapshotError(foreign)).toBe(true);
    expect(isInvalidSnapshotError(new Error('InvalidSnapshotError'))).toBe(false);
    expect(isInvalidSnapshotError({ name: 'InvalidSnapshotError', issues: [] })).toBe(false);
  });
});

describe('snapshotHashes and diagnoseCacheBreak', () => {
  const base = fromParentRequest(parentBody());
  const hashes = snapshotHashes(base);

  it('says "expired / unknown" when nothing the cache depends on changed', () => {
    const again = fromParentRequest(JSON.parse(JSON.stringify(parentBody())));
    expect(diagnoseCacheBreak(hashes, snapshotHashes(again))).toBe(UNKNOWN_CACHE_BREAK);
    expect(UNKNOWN_CACHE_BREAK).toBe('expired / unknown');
  });

  it.each([
    ['system', { system: 'another prompt' }, 'system changed'],
    ['a system block cache policy', { system: [text('You are the main agent.'), text('Project rules: be careful.', { type: 'ephemeral' })] }, 'system changed'],
    ['tools', { tools: TOOLS.slice(0, 1) }, 'tools changed'],
    ['model', { model: 'claude-opus-5' }, 'model changed'],
    ['thinking', { thinking: { type: 'disabled' } }, 'thinking changed'],
    ['a message', { messages: [{ role: 'user', content: 'something else' }] }, 'message prefix changed'],
  ])('names %s', (_what, change, reason) => {
    expect(diagnoseCacheBreak(hashes, snapshotHashes(fromParentRequest({ ...parentBody(), ...change })))).toBe(reason);
  });

  it('joins several reasons in a fixed order', () => {
    const changed = fromParentRequest({ ...parentBody(), model: 'other', system: 'x', thinking: undefined });
    expect(diagnoseCacheBreak(hashes, snapshotHashes(changed))).toBe('system changed, model changed, thinking changed');
  });

  it('ignores message cache markers and sampling settings', () => {
    const body = parentBody();
    const messages = JSON.parse(JSON.stringify(body.messages)) as { content: unknown }[];
    (messages[2]!.content as Record<string, unknown>[])[0]!.cache_control = { type: 'ephemeral', ttl: '1h' };
    const other = fromParentRequest({ ...body, messages, temperature: 1, max_tokens: 5 });
    expect(snapshotHashes(other)).toEqual(hashes);
  });

  it('compares a fork with its parent over the inherited prefix only', () => {
    // A parent that ended on a user turn: the fork rewrites that turn, so only inheritedCount counts.
    const history = [...base.messages.slice(0, 3)];
    const opening = buildForkOpening(history, 'check');
    const fork = { ...base, messages: opening.messages };
    expect(diagnoseCacheBreak(snapshotHashes({ ...base, messages: history }), snapshotHashes(fork))).toBe('message prefix changed');
    expect(diagnoseCacheBreak(snapshotHashes({ ...base, messages: history }, opening.inheritedCount), snapshotHashes(fork, opening.inheritedCount))).toBe(
      UNKNOWN_CACHE_BREAK,
    );
  });
});
