/**
 * buildMessagesRequest and repairToolPairing: pairing repaired the same way for a parent
 * and its forks, never more than 4 cache markers, never sampling settings, and breakpoints
 * where siblings and later turns can reuse them.
 */
import { blocksOf, type MessageParam, type ToolResultBlock } from '../../../src/shared/messages-api/anthropic';
import { buildForkOpening } from '../../../src/shared/prefix/fork-messages';
import type { RequestContext } from '../../../src/shared/wire/messages';
import { buildMessagesRequest, INTERRUPTED_RESULT, MAX_CACHE_BREAKPOINTS, repairToolPairing } from '../../../src/shared/messages-api/request';
import { fromParentRequest, requestContextOf } from '../../../src/shared/prefix/snapshot';
import { assistant, deepFreeze, markedBlocks, markerPaths, parentBody, randomConversation, rng, text, toolResult, toolUse, TOOLS, user } from './kit';

const cc = { type: 'ephemeral' } as const;
const ctxOf = (over: Partial<RequestContext> = {}): RequestContext => ({ model: 'm', system: 'sys', tools: TOOLS, maxTokens: 100, cacheKeyHash: 'k', ...over });

describe('repairToolPairing', () => {
  // A parent history with a crash mid-conversation (t1 never answered, t2 answered) and a
  // final round (t4, t5) whose results the parent is about to send.
  const history = deepFreeze([
    user(text('start')),
    assistant(toolUse('t1'), toolUse('t2')),
    user(text('where was I?'), toolResult('t2')),
    assistant(toolUse('t3')),
    assistant(text('resumed'), toolUse('t4'), toolUse('t5')),
  ]);

  it('answers unanswered calls with an error result, and leaves a trailing assistant turn alone', () => {
    const repaired = repairToolPairing(history);
    expect(repaired[2]).toEqual(user(toolResult('t2'), { type: 'tool_result', tool_use_id: 't1', content: INTERRUPTED_RESULT, is_error: true }, text('where was I?')));
    expect(repaired[4]).toEqual(user({ type: 'tool_result', tool_use_id: 't3', content: INTERRUPTED_RESULT, is_error: true }));
    expect(repaired).toHaveLength(6);
    expect(repaired[5]).toBe(history[4]);
    expect(repairToolPairing(repaired)).toEqual(repaired); // idempotent
  });

  it('repairs the shared prefix to the same bytes for the parent and its fork', () => {
    const parentNext = [...history, user(toolResult('t4', 'real a'), toolResult('t5', 'real b'))];
    const fork = buildForkOpening(history, 'Take t4 further').messages;
    const parentRepaired = repairToolPairing(parentNext);
    const forkRepaired = repairToolPairing(fork);
    // Everything up to and including the final assistant turn (index 5 after repair).
    expect(JSON.stringify(forkRepaired.slice(0, 6))).toBe(JSON.stringify(parentRepaired.slice(0, 6)));
    expect(forkRepaired).toHaveLength(7);
    // And the request bodies agree on the repaired messages too (markers apart).
    const strip = (m: MessageParam[]) => JSON.stringify(m.slice(0, 6), (k, v: unknown) => (k === 'cache_control' ? undefined : v));
    expect(strip(buildMessagesRequest(ctxOf(), fork).messages)).toBe(strip(buildMessagesRequest(ctxOf(), parentNext).messages));
  });

  it('repairs a parent that ended on a partial result turn the same way as the fork merged into it', () => {
    const partial = [user(text('go')), assistant(toolUse('a'), toolUse('b')), user(toolResult('a'), text('and then?'))];
    const parent = repairToolPairing(partial);
    const fork = repairToolPairing(buildForkOpening(partial, 'dig').messages);
    expect(JSON.stringify(blocksOf(fork[2]!).slice(0, 3))).toBe(JSON.stringify(blocksOf(parent[2]!)));
  });
});

describe('buildMessagesRequest', () => {
  it('never emits more than 4 cache markers, sampling settings, or markers on thinking blocks (300 random conversations)', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      const conversation = deepFreeze(randomConversation(r));
      // System and tools may arrive with markers of their own (at most 4, as the API allows).
      const systemMarkers = r.int(5);
      const toolMarkers = r.int(MAX_CACHE_BREAKPOINTS - systemMarkers + 1);
      const system = r.chance(0.3) && systemMarkers === 0 ? 'a string prompt' : Array.from({ length: Math.max(1, systemMarkers) }, (_, i) => text(`s${i}`, i < systemMarkers ? cc : undefined));
      const tools = TOOLS.concat(TOOLS.map((t) => ({ ...t, name: `${t.name}2` }))).map((t, i) => (i < toolMarkers ? { ...t, cache_control: cc } : t));
      const ctx = { ...ctxOf({ system, tools }), temperature: 0.5, top_p: 0.9, top_k: 5 } as RequestContext;
      const opening = r.chance(0.5) ? buildForkOpening(conversation, `directive ${seed}`) : undefined;
      const messages = opening?.messages ?? conversation;
      const body = buildMessagesRequest(ctx, messages, { sharedPrefixEnd: opening?.sharedPrefixEnd });
      const context = `seed ${seed}`;

      expect([context, markerPaths(body).length <= MAX_CACHE_BREAKPOINTS]).toEqual([context, true]);
      expect([context, Object.keys(body).filter((k) => /temperature|top_/.test(k))]).toEqual([context, []]);
      const onThinking = body.messages.flatMap((m) => blocksOf(m)).filter((b) => (b.type === 'thinking' || b.type === 'redacted_thinking') && 'cache_control' in b);
      expect([context, onThinking]).toEqual([context, []]);
      // While there is room after the shared-prefix marker (which comes first), the request's
      // end always gets one: every turn writes its own prefix for the next.
      if (systemMarkers + toolMarkers + (opening?.sharedPrefixEnd ? 1 : 0) < MAX_CACHE_BREAKPOINTS) {
        const last = body.messages.length - 1;
        const blocks = blocksOf(body.messages[last]!);
        let end = blocks.length - 1;
        while (end >= 0 && (blocks[end]!.type === 'thinking' || blocks[end]!.type === 'redacted_thinking')) end--;
        expect([context, markedBlocks(body)]).toEqual([context, expect.arrayContaining([`${last}:${end}`])]);
      }
      // Every call but a trailing one is answered in the very next message.
      body.messages.forEach((m, i) => {
        if (m.role !== 'assistant' || i === body.messages.length - 1) return;
        const answered = blocksOf(body.messages[i + 1]!).filter((b): b is ToolResultBlock => b.type === 'tool_result').map((b) => b.tool_use_id);
        const calls = blocksOf(m).flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
        expect([context, calls.filter((id) => !answered.includes(id))]).toEqual([context, []]);
      });
    }
  });

  it('drops the parent’s own message markers, nested ones in tool results included', () => {
    const conversation = [
      user(text('a', cc)),
      assistant(toolUse('x')),
      user({ ...toolResult('x', [text('r1', cc), text('r2', cc)]), cache_control: cc }),
      assistant(toolUse('y')),
      user(toolResult('y', [text('r3', cc)])),
    ];
    const body = buildMessagesRequest(ctxOf(), conversation);
    expect(markerPaths(body)).toEqual(['$.messages[2].content[0]', '$.messages[4].content[0]', '$.system[0]']);
  });

  it('keeps system and tool markers it was given, and adds none there then', () => {
    const system = [text('a', { type: 'ephemeral', ttl: '1h' }), text('b')];
    const body = buildMessagesRequest(ctxOf({ system }), [user(text('hi'))]);
    expect(body.system).toBe(system);
    expect(body.tools).toBe(TOOLS);
    expect(markerPaths(body)).toEqual(['$.messages[0].content[0]', '$.system[0]']);
  });

  describe('breakpoints of sibling forks', () => {
    const snapshot = fromParentRequest(deepFreeze(parentBody()));
    const ctx = requestContextOf(snapshot, 1024);
    const siblings = ['one', 'two'].map((d) => {
      const opening = buildForkOpening(snapshot.messages, `directive ${d}`);
      return { opening, body: buildMessagesRequest(ctx, opening.messages, { sharedPrefixEnd: opening.sharedPrefixEnd }) };
    });

    it('put the shared-prefix marker on the same block: the last placeholder result', () => {
      const [a, b] = siblings.map((s) => s.body);
      // The parent's system carries a marker already, so the request adds 3: shared prefix, end, previous end.
      expect(markerPaths(a)).toEqual(['$.messages[2].content[0]', '$.messages[4].content[1]', '$.messages[4].content[2]', '$.system[1]']);
      expect(markerPaths(b)).toEqual(markerPaths(a));
      const shared = blocksOf(a!.messages[4]!)[1]!;
      expect(shared).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_03', cache_control: cc });
    });

    it('keep a marker on the first request’s end in the second turn, and on the second’s in the third', () => {
      const { opening, body: first } = siblings[0]!;
      const turn2 = [...opening.messages, assistant(text('Reading.'), toolUse('f1')), user(toolResult('f1'))];
      const second = buildMessagesRequest(ctx, turn2, { sharedPrefixEnd: opening.sharedPrefixEnd });
      const firstEnd = '4:2'; // the directive block: where the first request ended
      expect(markedBlocks(first)).toContain(firstEnd);
      expect(markedBlocks(second)).toEqual(['4:1', firstEnd, '6:0']);
      expect(markerPaths(second)).toHaveLength(MAX_CACHE_BREAKPOINTS);

      const turn3 = [...turn2, assistant(toolUse('f2')), user(toolResult('f2'))];
      const third = buildMessagesRequest(ctx, turn3, { sharedPrefixEnd: opening.sharedPrefixEnd });
      expect(markedBlocks(third)).toEqual(['4:1', '6:0', '8:0']);
    });

    it('find the last placeholder even when repair inserts messages and moves blocks before it', () => {
      // A crash left t1 unanswered (repair inserts a user turn) and the parent ended on a
      // partial result turn (repair moves the missing result before the text).
      const history = [user(text('s')), assistant(toolUse('t1')), assistant(toolUse('a'), toolUse('b')), user(toolResult('a'), text('note'))];
      const opening = buildForkOpening(history, 'go');
      const body = buildMessagesRequest(ctxOf(), opening.messages, { sharedPrefixEnd: opening.sharedPrefixEnd });
      // After repair: [user, asst(t1), user(t1 error), asst(a,b), user(a, b error, note, directive)].
      expect(blocksOf(body.messages[4]!).map((b) => b.type)).toEqual(['tool_result', 'tool_result', 'text', 'text']);
      expect(markedBlocks(body)).toContain('4:2'); // `note`, the last block siblings share
    });
  });
});
