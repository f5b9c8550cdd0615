/**
 * Cache breaks on every turn, with their reason in status and result: a later turn whose
 * cache entry was evicted (the offline model's cache emptied between two runs of one agent:
 * the expectation crosses the resume in the carried state), and a fork's first turn with a
 * changed system prompt, inline and by reference. The metric with its reason label is
 * checked where metrics are scraped (test/e2e/metrics.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { totalInputTokens } from '../../src/shared/messages-api/anthropic';
import type { ForkInputJson } from '../../src/shared/wire/fork-input';
import { UNKNOWN_CACHE_BREAK } from '../../src/shared/prefix/cache-break';
import { startHarness, type Harness } from '../kit/env';
import { recordCarriedState, recordHistory, startInputOf } from '../kit/histories';
import { bodyOf, messageRequests } from '../kit/requests';
import { filler } from '../kit/snapshots';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'cache-breaks' });
  writeFileSync(join(h.workspaceRoot, 'big.txt'), (filler(30_000, 'big-file').match(/.{1,80}/g) ?? []).join('\n'));
});
afterAll(() => h.close());

/** The offline model's requests whose first message mentions `marker`. */
const requestsOf = (marker: string) => messageRequests(h.model).filter((e) => JSON.stringify(bodyOf(e).messages[0] ?? '').includes(marker));

test('a later turn that finds its own previous request evicted is a break: expired / unknown, counted, across a resume', async () => {
  const first = await h.forkflow.fork({ agentId: 'cb-later', prompt: 'Later.\n@tool Read {"file_path":"big.txt"}\n@reply first' }, { mode: 'sync' });
  expect(first).toMatchObject({ status: 'completed', turns: 2 });
  // Turn 2 read what turn 1 wrote: the expectation holds, no break.
  expect(first.cacheBreak).toBeUndefined();
  expect(first.usage.cacheCreationInputTokens).toBeGreaterThan(0);
  expect((await h.forkflow.status('cb-later')).cacheBreaks).toBe(0);

  // Resumed with the cache intact: the new run reads the previous run's last request.
  expect(await h.forkflow.sendMessage('cb-later', { message: '@reply second' })).toBe('resumed');
  const second = await h.forkflow.result('cb-later');
  expect(second).toMatchObject({ status: 'completed', text: 'second', turns: 3 });
  expect(second.cacheBreak).toBeUndefined();

  // Evicted between runs (the provider may drop an entry before its TTL): the next call writes
  // everything again, and nothing in the request changed, within the TTL.
  h.model.cache.clear();
  expect(await h.forkflow.sendMessage('cb-later', { message: '@reply third' })).toBe('resumed');
  const third = await h.forkflow.result('cb-later');
  expect(third).toMatchObject({ status: 'completed', text: 'third', turns: 4, cacheBreaks: 1 });
  expect(third.cacheBreak).toEqual({ ratio: 0, reason: UNKNOWN_CACHE_BREAK, turn: 4 });
  const status = await h.forkflow.status('cb-later');
  expect(status).toMatchObject({ cacheBreaks: 1, cacheBreak: { reason: UNKNOWN_CACHE_BREAK, turn: 4 } });

  // What the provider reported for the four calls: the break is the fourth, and only it.
  const usages = requestsOf('Later.').map((e) => e.usage!);
  expect(usages).toHaveLength(4);
  expect(usages.map((u) => (u.cache_read_input_tokens ?? 0) > 0)).toEqual([false, true, true, false]);
  expect(usages[3]!.cache_creation_input_tokens).toBeGreaterThan(0);

  // The third run started from the second's carried state: no break yet, and the request to compare with.
  const resumed = await startInputOf<ForkInputJson>(h.client.workflow.getHandle('cb-later'));
  expect(resumed.continuation?.state).toMatchObject({ turns: 3, cache: { breaks: 0, previous: { messages: 5, ttl: '5m' } } });
  recordCarriedState(resumed.continuation?.state, 'v2-cache-resume');
  await recordHistory(h.client.workflow.getHandle('cb-later'), 'cache-break-later-turn');
});

test('a fork whose system prompt changed breaks on turn 1 with the reason, inline and by reference', async () => {
  const parent = await h.forkflow.fork({ agentId: 'cb-parent', prompt: 'Read it.\n@tool Read {"file_path":"big.txt"}\n@reply read', toolFilter: 'readOnly' }, { mode: 'sync' });
  expect(parent.status).toBe('completed');
  const snapshot = await h.forkflow.snapshotOf('cb-parent');
  expect(snapshot.requestHashes).toBeDefined();
  // The caller changed the system prompt after the parent sent its request (the recorded hashes stay the parent's).
  // Two different changes: each fork must miss on its own, not read what the other wrote.
  const alter = (rule: string) => ({ ...snapshot, system: `${typeof snapshot.system === 'string' ? snapshot.system : ''}\n${rule}` });

  const inline = await h.forkflow.fork({ agentId: 'cb-inline', parent: alter('One more rule.'), prompt: 'Go on.\n@reply fine' }, { mode: 'sync' });
  expect(inline).toMatchObject({ cacheBreaks: 1, cacheBreak: { reason: 'system changed', turn: 1 } });
  expect(inline.cacheBreak!.ratio).toBeLessThan(0.5);

  // By reference, from the recorded snapshot: before, such a fork could only say "expired / unknown".
  const ref = await h.forkflow.recordSnapshot(alter('Another rule.'));
  const byRef = await h.forkflow.start({ agentId: 'cb-byref', parentRef: ref, prompt: 'Go on.\n@reply fine' });
  const result = await byRef.result();
  expect(result).toMatchObject({ cacheBreaks: 1, cacheBreak: { reason: 'system changed', turn: 1 } });
  expect(result.usage.cacheReadInputTokens / totalInputTokens(result.usage)).toBeLessThan(0.5);
  expect(await h.forkflow.status('cb-byref')).toMatchObject({ cacheBreaks: 1, cacheBreak: { reason: 'system changed' } });

  // The same snapshot unaltered, by reference: no break (the hashes agree and the cache is hit).
  const intactRef = await h.forkflow.recordSnapshot(snapshot);
  const intact = await (await h.forkflow.start({ agentId: 'cb-byref-intact', parentRef: intactRef, prompt: 'Go on.\n@reply fine' })).result();
  expect(intact.cacheBreak).toBeUndefined();
  expect((await h.forkflow.status('cb-byref-intact')).cacheBreaks).toBe(0);
  await recordHistory(h.client.workflow.getHandle('cb-byref'), 'cache-break-by-reference');
});
