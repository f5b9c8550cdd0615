/**
 * The next request's size, asked once per agent a turn starts (src/workflows/fork/context-keeper.ts
 * `expectedAgain`): a root whose turn launched a thousand agents counted that turn's thousand
 * Agent calls again for each admission, and its workflow task ran past the SDK's 5 s limit
 * (bench:tree at N = 1,000). Asked again with nothing changed, it answers without counting;
 * with a message added or a request measured since, it counts afresh, and always answers what
 * `expected` would.
 */
import type { MessageParam } from '../../../src/shared/messages-api/anthropic';
import type { ModelCallResult } from '../../../src/shared/wire/activity-io';
import { ContextKeeper } from '../../../src/workflows/fork/context-keeper';

/** A message whose content counts how often it is read. */
function counted(text: string, reads: { n: number }): MessageParam {
  const content = [{ type: 'tool_use' as const, id: `t-${text}`, name: 'Agent', input: { prompt: text } }];
  return { role: 'assistant', get content() {
    reads.n += 1;
    return content;
  } };
}

const measured = (tokens: number) => ({ usage: { inputTokens: tokens, outputTokens: 10, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 } }) as unknown as ModelCallResult;

test('asked again with nothing changed, it answers without counting; after a change it counts, and agrees with expected', () => {
  const keeper = new ContextKeeper(undefined);
  const reads = { n: 0 };
  const messages: MessageParam[] = [{ role: 'user', content: 'Start.' }];
  keeper.called(1, measured(1_000));
  messages.push(counted('a thousand agents', reads));

  const first = keeper.expectedAgain(messages, 0);
  expect(first).toBe(keeper.expected(messages, 0));
  expect(first).toBeGreaterThan(1_000);
  const afterFirst = reads.n;
  expect(afterFirst).toBeGreaterThan(0);
  for (let i = 0; i < 999; i++) expect(keeper.expectedAgain(messages, 0)).toBe(first);
  expect(reads.n).toBe(afterFirst);

  // A message added: counted afresh.
  messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't-x', content: 'a long result '.repeat(50) }] });
  const second = keeper.expectedAgain(messages, 0);
  expect(second).toBe(keeper.expected(messages, 0));
  expect(second).toBeGreaterThan(first!);

  // A request measured since: counted from it.
  keeper.called(messages.length, measured(5_000));
  expect(keeper.expectedAgain(messages, 0)).toBe(5_000);
});
