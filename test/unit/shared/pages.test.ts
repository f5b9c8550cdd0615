/**
 * Page sizes of the conversation queries: ~1 MiB by default, up to 16 MiB when a reader with
 * external storage asks, never more whatever a caller sends, and one over-size message is a
 * page of its own.
 */
import type { MessageParam } from '../../../src/shared/messages-api/anthropic';
import { PAGE_BYTES, STORED_PAGE_BYTES } from '../../../src/shared/wire/messages';
import { messagesPage, type ConversationHolder } from '../../../src/workflows/conversation-queries';

const message = (i: number, bytes: number): MessageParam => ({ role: i % 2 ? 'assistant' : 'user', content: `${i} ${'x'.repeat(bytes)}` });
const holder = (messages: MessageParam[]): ConversationHolder => ({
  base: 0,
  messages,
  digest: '',
  summary: { from: { workflowId: 'w', runId: 'r' }, contextKey: '', model: 'm', cacheKeyHash: '', toolNames: [], maxTokens: 1 },
});

test('default pages stay near 1 MiB; larger ones only up to 16 MiB; bad sizes fall back to the default', () => {
  const h = holder(Array.from({ length: 200 }, (_, i) => message(i, 100_000)));
  const count = (maxBytes?: unknown) => messagesPage(h, 0, 200, maxBytes as number | undefined).messages.length;
  expect(count()).toBe(Math.floor(PAGE_BYTES / 100_020));
  expect(count(STORED_PAGE_BYTES)).toBe(Math.floor(STORED_PAGE_BYTES / 100_020));
  expect(count(1e12)).toBe(count(STORED_PAGE_BYTES));
  for (const bad of ['16777216', -1, 0, Number.NaN, Number.POSITIVE_INFINITY, null]) expect(count(bad)).toBe(count());
});

test('a message over the page size is a page of its own', () => {
  const h = holder([message(0, 10), message(1, 3 * PAGE_BYTES), message(2, 10)]);
  expect(messagesPage(h, 0, 3).messages).toHaveLength(1);
  expect(messagesPage(h, 1, 3).messages).toHaveLength(1);
  expect(messagesPage(h, 2, 3).messages).toHaveLength(1);
});
