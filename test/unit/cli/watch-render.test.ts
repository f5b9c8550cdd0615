/**
 * `forkflow watch` rendering: text written as it streams, marker lines never glued onto text,
 * a retried call announced, and `--tree`'s one line per agent with children under parents.
 */
import type { AgentRow } from '../../../src/client/rows';
import { StreamRenderer, treeLines } from '../../../src/cli/watch/render';
import { parseStreamEvent } from '../../../src/shared/streams/stream-events';

function rendered(events: Record<string, unknown>[]): string {
  let out = '';
  const r = new StreamRenderer((s) => (out += s));
  events.forEach((e, seq) => r.render(parseStreamEvent({ v: 1, agentId: 'a', ...e }, seq)));
  return out;
}

test('renders a turn: text as it streams, then the tool call, its result and the turn end on lines of their own', () => {
  const out = rendered([
    { type: 'turn-start', turn: 1, attempt: 1, model: 'claude-test' },
    { type: 'text-delta', turn: 1, attempt: 1, index: 0, text: 'Let me ' },
    { type: 'text-delta', turn: 1, attempt: 1, index: 0, text: 'look.' },
    { type: 'tool-input-delta', turn: 1, attempt: 1, index: 1, partialJson: '{"file' },
    { type: 'tool-use', turn: 1, toolUseId: 't1', name: 'Read', input: { file_path: 'a.txt' } },
    { type: 'turn-end', turn: 1, stopReason: 'tool_use', usage: { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 } },
    { type: 'tool-result', turn: 1, toolUseId: 't1', name: 'Read', isError: false, preview: 'line one\nline two', chars: 17 },
    { type: 'done', turn: 2, status: 'completed', stopReason: 'end_turn' },
  ]);
  expect(out).toBe(
    [
      '── turn 1 · claude-test ──',
      'Let me look.',
      '→ Read {"file_path":"a.txt"}',
      '· turn 1 tool_use · in 10 · cache read 0 · out 5',
      '← Read: line one line two',
      '■ completed (end_turn)',
      '',
    ].join('\n'),
  );
});

test("a turn whose deltas this subscriber missed shows the reply turn-end carries, once; a streamed turn does not repeat it", () => {
  const out = rendered([
    { type: 'turn-end', turn: 1, stopReason: 'end_turn', text: 'All done here.', textChars: 14 },
    { type: 'turn-start', turn: 2, attempt: 1 },
    { type: 'text-delta', turn: 2, attempt: 1, index: 0, text: 'Streamed.' },
    { type: 'turn-end', turn: 2, stopReason: 'end_turn', text: 'Streamed.', textChars: 9 },
    { type: 'turn-end', turn: 3, stopReason: 'end_turn', text: 'x'.repeat(5), textChars: 9000 },
  ]);
  expect(out).toBe(['All done here.', '· turn 1 end_turn', '── turn 2 ──', 'Streamed.', '· turn 2 end_turn', 'xxxxx … (9000 chars)', '· turn 3 end_turn', ''].join('\n'));
});

test('says when a retried call abandons the text above it', () => {
  const out = rendered([
    { type: 'turn-start', turn: 2, attempt: 1 },
    { type: 'text-delta', turn: 2, attempt: 1, index: 0, text: 'half' },
    { type: 'turn-start', turn: 2, attempt: 2 },
    { type: 'attempt-abandoned', turn: 2, attempt: 2, abandonedAttempt: 1 },
    { type: 'text-delta', turn: 2, attempt: 2, index: 0, text: 'whole' },
    { type: 'thinking-delta', turn: 2, attempt: 2, index: 1, thinking: 'hmm' },
  ]);
  expect(out).toBe('── turn 2 ──\nhalf\n── turn 2, attempt 2 ──\n(the model call was retried: the text of attempt 1 above is abandoned)\nwhole\n(thinking) hmm');
});

test('tree lines: children indented under their parent, the focused agent marked', () => {
  const row = (agentId: string, startTime: string, parentId?: string, state = 'running'): AgentRow => ({ agentId, workflowId: agentId, runId: 'r', temporalStatus: 'RUNNING', startTime, state, ...(parentId ? { parentId } : {}), turns: 1 });
  expect(treeLines([row('child-b', '3', 'root'), row('root', '1'), row('grandchild', '4', 'child-a', 'completed'), row('child-a', '2', 'root')], 'child-a')).toEqual([
    '  root · running · 1 turns',
    '▶   child-a · running · 1 turns',
    '      grandchild · completed · 1 turns',
    '    child-b · running · 1 turns',
  ]);
});

test('a turn whose last deltas were missed gets the rest of its text from turn-end, on the same line', () => {
  const out = rendered([
    { type: 'turn-start', turn: 1, attempt: 1 },
    { type: 'text-delta', turn: 1, attempt: 1, index: 0, text: 'The answer ' },
    { type: 'turn-end', turn: 1, stopReason: 'end_turn', text: 'The answer is 42.', textChars: 17 },
  ]);
  expect(out).toBe(['── turn 1 ──', 'The answer is 42.', '· turn 1 end_turn', ''].join('\n'));
});

test('a compaction gets a line of its own: who, why, the sizes, where requests start now, what summarising cost', () => {
  const out = rendered([
    { type: 'text-delta', turn: 40, attempt: 1, index: 0, text: 'Reading' },
    { type: 'compaction', turn: 41, by: 'forkflow', reason: 'threshold', at: 82, compaction: 1, tokensBefore: 161_000, usage: { inputTokens: 10, outputTokens: 900, cacheReadInputTokens: 160_000, cacheCreationInputTokens: 990 } },
    { type: 'compaction', turn: 90, by: 'provider', reason: 'provider', at: 180, compaction: 2, tokensBefore: 160_500, tokensAfter: 4_200 },
  ]);
  expect(out).toBe(
    [
      'Reading',
      '⇣ context compacted by forkflow (threshold) before turn 41: 161000 tokens; requests start at message 82 · summarising: in 161000 · out 900',
      '⇣ context compacted by provider (provider) before turn 90: 160500 tokens → 4200; requests start at message 180',
      '',
    ].join('\n'),
  );
});

test('a failover gets a line of its own: where calls went, from where, and why; the move back too', () => {
  const out = rendered([
    { type: 'failover', turn: 3, from: { provider: 'anthropic', model: 'claude-sonnet-4-6' }, to: { provider: 'openai', model: 'gpt-4.1' }, reason: 'claude-sonnet-4-6 unavailable after 3 attempts: Overloaded', until: 1_000 },
    { type: 'failover', turn: 7, from: { provider: 'openai', model: 'gpt-4.1' }, to: { provider: 'anthropic', model: 'claude-sonnet-4-6' }, reason: 'recovered' },
  ]);
  expect(out).toBe(
    [
      '⇄ failover to openai/gpt-4.1 from anthropic/claude-sonnet-4-6 (turn 3): claude-sonnet-4-6 unavailable after 3 attempts: Overloaded',
      '⇄ back on anthropic/claude-sonnet-4-6 from openai/gpt-4.1 (turn 7): recovered',
      '',
    ].join('\n'),
  );
});
