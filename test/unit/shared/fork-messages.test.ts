/**
 * buildForkOpening's three parent-history shapes (and the empty history): what a fork's
 * first conversation looks like, and that siblings from one parent turn send the same
 * bytes up to the first byte of their directive.
 */
import { blocksOf, type MessageParam } from '../../../src/shared/messages-api/anthropic';
import { FORK_QUERY_SOURCE } from '../../../src/shared/wire/constants';
import { buildForkOpening, directiveText, FORK_TAG, hasForkTag, PLACEHOLDER_RESULT } from '../../../src/shared/prefix/fork-messages';
import { buildMessagesRequest } from '../../../src/shared/messages-api/request';
import { fromParentRequest, requestContextOf } from '../../../src/shared/prefix/snapshot';
import { assistant, deepFreeze, parentBody, text, toolResult, toolUse, user } from './kit';

const snapshot = fromParentRequest(deepFreeze(parentBody()));
const ctx = requestContextOf(snapshot, 2048);

function noTwoTurnsInARow(messages: MessageParam[]): boolean {
  return messages.every((m, i) => i === 0 || messages[i - 1]!.role !== m.role);
}

describe('buildForkOpening', () => {
  describe('history ends with an assistant turn with tool calls', () => {
    const history = snapshot.messages;
    const a = buildForkOpening(history, 'Audit test/a.test.ts');
    const b = buildForkOpening(history, 'Rewrite test/b.test.ts');

    it('keeps the history and appends one placeholder result per call, then the directive', () => {
      expect(a.inheritedCount).toBe(history.length);
      a.messages.slice(0, history.length).forEach((m, i) => expect(m).toBe(history[i]));
      const opening = a.messages[history.length]!;
      expect(opening.role).toBe('user');
      const blocks = blocksOf(opening);
      expect(blocks).toEqual([
        toolResult('toolu_02', [text(PLACEHOLDER_RESULT)]),
        toolResult('toolu_03', [text(PLACEHOLDER_RESULT)]),
        text(directiveText('Audit test/a.test.ts')),
      ]);
      expect(a.sharedPrefixEnd).toEqual({ messageIndex: history.length, blockIndex: 1 });
    });

    it('gives siblings openings that differ only in the last text block', () => {
      expect(b.messages.slice(0, -1)).toEqual(a.messages.slice(0, -1));
      expect(blocksOf(b.messages.at(-1)!).slice(0, -1)).toEqual(blocksOf(a.messages.at(-1)!).slice(0, -1));
      expect(blocksOf(b.messages.at(-1)!).at(-1)).not.toEqual(blocksOf(a.messages.at(-1)!).at(-1));
      expect(b.sharedPrefixEnd).toEqual(a.sharedPrefixEnd);
    });

    it('makes sibling request bodies byte-identical up to the first byte of the directive', () => {
      const bodyA = JSON.stringify(buildMessagesRequest(ctx, a.messages, { sharedPrefixEnd: a.sharedPrefixEnd }));
      const bodyB = JSON.stringify(buildMessagesRequest(ctx, b.messages, { sharedPrefixEnd: b.sharedPrefixEnd }));
      const at = bodyA.indexOf('Audit test/a.test.ts');
      expect(at).toBeGreaterThan(0);
      expect(bodyB.indexOf('Rewrite test/b.test.ts')).toBe(at);
      expect(bodyB.slice(0, at)).toBe(bodyA.slice(0, at));
      expect(bodyB[at]).not.toBe(bodyA[at]);
      // The boilerplate (worker rules) is part of the shared bytes, not of what differs.
      expect(bodyA.slice(0, at)).toContain(`<${FORK_TAG}>`);
    });
  });

  it('history ends with an assistant turn without tool calls: appends a user turn with the directive', () => {
    const history = [user(text('Summarise the repo.')), assistant({ type: 'thinking', thinking: 't', signature: 's' }, text('It is a TS library.'))];
    const opening = buildForkOpening(history, 'List the exports');
    expect(opening.messages).toEqual([...history, user(text(directiveText('List the exports')))]);
    expect(opening.messages[1]).toBe(history[1]);
    expect(opening.inheritedCount).toBe(2);
    expect(opening.sharedPrefixEnd).toEqual({ messageIndex: 1, blockIndex: 1 });
  });

  describe('history ends with a user turn', () => {
    const last = deepFreeze(user(toolResult('t1'), text('Also look at the CI config.')));
    const history = [user(text('Start.')), assistant(toolUse('t1')), last];
    const opening = buildForkOpening(history, 'Check CI');

    it('merges the directive into that turn: no two user turns in a row, nothing dropped', () => {
      expect(opening.messages).toHaveLength(3);
      expect(noTwoTurnsInARow(opening.messages)).toBe(true);
      expect(opening.messages[2]).toEqual(user(toolResult('t1'), text('Also look at the CI config.'), text(directiveText('Check CI'))));
      expect(opening.inheritedCount).toBe(2);
      expect(opening.sharedPrefixEnd).toEqual({ messageIndex: 2, blockIndex: 1 });
    });

    it('keeps string content as its text block, first', () => {
      const merged = buildForkOpening([{ role: 'user', content: 'Plain question' }], 'Answer it');
      expect(merged.messages).toEqual([user(text('Plain question'), text(directiveText('Answer it')))]);
      expect(merged.sharedPrefixEnd).toEqual({ messageIndex: 0, blockIndex: 0 });
    });
  });

  it('empty history: one user turn with the directive and no shared prefix', () => {
    const opening = buildForkOpening([], 'Do the thing');
    expect(opening).toEqual({ messages: [user(text(directiveText('Do the thing')))], inheritedCount: 0 });
  });

  it('wraps the directive in tagged boilerplate the recursion guard recognises, and only there', () => {
    const body = directiveText('Fix it', { worktree: { parentRoot: '/repo', worktreeRoot: '/repo/.forkflow/worktrees/a' } });
    expect(body.startsWith(`<${FORK_TAG}>\n`)).toBe(true);
    expect(body.endsWith(`</${FORK_TAG}>\nFix it`)).toBe(true);
    for (const line of ['Scope:', 'Result:', 'Key files:', 'Files changed:', 'Issues:', 'worktree', '/repo/.forkflow/worktrees/a', 'directory, /repo:']) expect(body).toContain(line);
    expect(directiveText('Fix it')).not.toContain('worktree');
    const opening = buildForkOpening(snapshot.messages, 'x');
    expect(hasForkTag(opening.messages.at(-1)!)).toBe(true);
    expect(snapshot.messages.some(hasForkTag)).toBe(false);
    expect(FORK_QUERY_SOURCE).toBe('agent:builtin:fork');
  });
});
