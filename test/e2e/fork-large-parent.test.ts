/**
 * Forks of a parent at 190K tokens, over its forks' compaction threshold (160K of a 200K
 * window): the snapshot is compacted once where it is recorded — one summary call, however
 * many siblings — and every sibling starts from that summary by reference, sending the same
 * prefix byte for byte. Siblings that start after the first one's response began read that
 * prefix from the cache: the share of their first request's input read is measured.
 */
import { isSummaryRequest } from '../../src/offline';
import { estimateRequestTokens } from '../../src/shared/messages-api/request-tokens';
import { isSummaryMessage } from '../../src/shared/context/summary';
import { startHarness, type Harness } from '../kit/env';
import { bigSnapshot } from '../kit/snapshots';
import { bodyOf, messageRequests } from '../kit/requests';
import { inputTokensOf } from '../kit/long-agent';

jest.setTimeout(180_000);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'large-parent' });
});
afterAll(() => h.close());

const siblingRequests = (i: number) => messageRequests(h.model).filter((e) => e.outcome === 'completed' && JSON.stringify(bodyOf(e).messages.at(-1)).includes(`Sibling ${i} of the large parent.`));

test('forks of a parent at 190K tokens: compacted once, siblings share the compacted prefix and read it from the cache', async () => {
  const parent = bigSnapshot({ conversationBytes: 750_000, pendingToolUses: 3 });
  const size = estimateRequestTokens({ tools: parent.tools, system: parent.system, messages: parent.messages });
  expect(size).toBeGreaterThan(185_000);
  expect(size).toBeLessThan(195_000);
  const directive = (i: number) => ({ agentId: `large-sibling-${i}`, prompt: `Sibling ${i} of the large parent.\n@reply sibling ${i} done` });

  // The first sibling alone, then the other two once its response began (an entry is readable from then on).
  const [first] = await h.forkflow.forkMany(parent, [directive(0)]);
  await h.model.log.waitFor((e) => e.outcome === 'completed' && siblingRequests(0).some((s) => s.seq === e.seq), { timeoutMs: 120_000 });
  const rest = await h.forkflow.forkMany(parent, [directive(1), directive(2)]);
  const results = await Promise.all([first!, ...rest].map((s) => s.result()));
  expect(results.map((r) => [r.status, r.text])).toEqual([0, 1, 2].map((i) => ['completed', `sibling ${i} done`]));

  // One summary call for the three of them (the snapshot is recorded, and compacted, once).
  const summaries = messageRequests(h.model).filter((e) => isSummaryRequest(bodyOf(e).messages));
  expect(summaries.map((e) => e.outcome)).toEqual(['completed']);
  expect(inputTokensOf(summaries[0]!)).toBeGreaterThan(185_000);

  const firsts = [0, 1, 2].map((i) => siblingRequests(i)[0]!);
  const bodies = firsts.map((e) => bodyOf(e).messages);
  for (const messages of bodies) expect(isSummaryMessage(messages[0]!)).toBe(true);
  // Byte for byte: the siblings' requests differ only in their own directive, at the very end.
  const withoutDirective = (e: (typeof firsts)[number]) => e.rawBody.slice(0, e.rawBody.indexOf('Sibling '));
  expect(new Set(firsts.map(withoutDirective)).size).toBe(1);
  // Far below the window now, and the siblings after the first read the shared prefix from the cache.
  const shares = firsts.map((e) => e.usage!.cache_read_input_tokens / inputTokensOf(e));
  console.log(`fork of a 190K parent: first requests ${firsts.map(inputTokensOf).join(', ')} tokens; cache-read share ${shares.map((s) => s.toFixed(3)).join(', ')}`);
  for (const e of firsts) expect(inputTokensOf(e)).toBeLessThan(40_000);
  expect(shares[1]).toBeGreaterThan(0.8);
  expect(shares[2]).toBeGreaterThan(0.8);
  // Each sibling's status says where its context starts (the snapshot's compaction).
  const status = await h.forkflow.status('large-sibling-1');
  expect(status.context).toMatchObject({ compactions: 1, from: bigSnapshot({ conversationBytes: 750_000, pendingToolUses: 3 }).messages.length });
});
