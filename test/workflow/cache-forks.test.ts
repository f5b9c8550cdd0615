/**
 * Forks that keep the prompt cache: eight siblings from one parent turn send byte-identical
 * requests up to their directives, the first writes the shared prefix and the rest read it;
 * a fork whose system prompt was altered says so; budgets end a fork normally.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { blocksOf, totalInputTokens, type Usage } from '../../src/shared/messages-api/anthropic';
import type { RequestLogEntry } from '../../src/offline';
import { prefixRefQuery } from '../../src/shared/wire/messages';
import { startHarness, type Harness } from '../kit/env';
import { bodyOf, messageRequests } from '../kit/requests';
import { bigSnapshot, filler } from '../kit/snapshots';
import { recordHistory } from '../kit/histories';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'cache' });
  writeFileSync(join(h.workspaceRoot, 'big.txt'), (filler(30_000, 'big-file').match(/.{1,80}/g) ?? []).join('\n'));
});
afterAll(() => h.close());
beforeEach(() => h.model.log.clear());

const usageOf = (e: RequestLogEntry): Usage => ({
  inputTokens: e.usage!.input_tokens,
  outputTokens: e.usage!.output_tokens,
  cacheReadInputTokens: e.usage!.cache_read_input_tokens ?? 0,
  cacheCreationInputTokens: e.usage!.cache_creation_input_tokens ?? 0,
});

test('8 siblings from one parent turn: identical bytes up to the directive; the first writes, the others read ≥ 97%', async () => {
  const snapshot = bigSnapshot({ conversationBytes: 90_000, pendingToolUses: 8 }); // ≈ 24k tokens with system and tools
  const ref = await h.forkflow.recordSnapshot(snapshot);
  const directive = (i: number) => `Sibling ${i}: summarise part ${i}.\n@reply part ${i} done`;

  const first = await h.forkflow.start({ agentId: 'sib-0', parentRef: ref, prompt: directive(0), forkLabel: 'sibling' });
  // Siblings started after the first one's response began can read what it wrote.
  await h.model.log.waitFor((e) => e.responseBeganAt !== undefined && JSON.stringify(e.body ?? '').includes('Sibling 0'));
  const rest = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((i) => h.forkflow.start({ agentId: `sib-${i}`, parentRef: ref, prompt: directive(i), forkLabel: 'sibling' })));
  const results = await Promise.all([first, ...rest].map((f) => f.result()));
  expect(results.map((r) => r.status)).toEqual(Array(8).fill('completed'));

  const requests = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => messageRequests(h.model).find((e) => e.rawBody.includes(`Sibling ${i}:`))!);
  const cut = requests.map((e, i) => e.rawBody.indexOf(`Sibling ${i}:`));
  const prefixes = requests.map((e, i) => e.rawBody.slice(0, cut[i]));
  expect(new Set(prefixes).size).toBe(1);
  expect(prefixes[0]!.length).toBeGreaterThan(90_000);

  // Every sibling's opening answers all eight pending calls with the same placeholder.
  const opening = bodyOf(requests[3]!).messages.at(-1)!;
  expect(blocksOf(opening).filter((b) => b.type === 'tool_result')).toHaveLength(8);

  const usages = requests.map(usageOf);
  const total0 = totalInputTokens(usages[0]!);
  expect(total0).toBeGreaterThan(20_000);
  expect(usages[0]!.cacheCreationInputTokens / total0).toBeGreaterThanOrEqual(0.97);
  for (const u of usages.slice(1)) expect(u.cacheReadInputTokens / totalInputTokens(u)).toBeGreaterThanOrEqual(0.97);
  const statuses = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((i) => h.forkflow.status(`sib-${i}`)));
  expect(statuses.filter((s) => s.cacheBreak)).toEqual([]);
});

test('a fork whose system prompt was altered reports the cache break and why; an unaltered one does not', async () => {
  // A parent agent whose conversation is long enough to be cached (≥ 1024 tokens).
  const parent = await h.forkflow.fork({ agentId: 'break-parent', prompt: 'Read it.\n@tool Read {"file_path":"big.txt"}\n@reply read', toolFilter: 'readOnly' }, { mode: 'sync' });
  expect(parent.status).toBe('completed');
  const snapshot = await h.forkflow.snapshotOf('break-parent');

  const intact = await h.forkflow.fork({ agentId: 'break-intact', parent: snapshot, prompt: 'Go on.\n@reply fine' }, { mode: 'sync' });
  expect(intact.cacheBreak).toBeUndefined();
  expect(intact.usage.cacheReadInputTokens / totalInputTokens(intact.usage)).toBeGreaterThan(0.5);

  const altered = { ...snapshot, system: `${typeof snapshot.system === 'string' ? snapshot.system : ''}\nOne more rule.` };
  const broken = await h.forkflow.fork({ agentId: 'break-altered', parent: altered, prompt: 'Go on.\n@reply fine' }, { mode: 'sync' });
  expect(broken.cacheBreak).toMatchObject({ reason: 'system changed' });
  expect(broken.cacheBreak!.ratio).toBeLessThan(0.5);
  expect((await h.forkflow.status('break-altered')).cacheBreak?.reason).toBe('system changed');
  await recordHistory(h.client.workflow.getHandle('break-altered'), 'cache-break-system-changed');

  // A finished agent's reference comes from its result, and is exactly what its query answers.
  const ref = await h.forkflow.prefixRefOf('break-parent');
  expect(ref).toEqual(parent.conversation);
  expect(ref).toEqual(await h.client.workflow.getHandle('break-parent').query(prefixRefQuery));
  const byRef = await h.forkflow.forkFrom('break-parent', { agentId: 'break-byref', prompt: 'Go on.\n@reply fine' });
  expect((await byRef.result()).cacheBreak).toBeUndefined();
});

test('a killed fork reports its own partial text, never the parent’s', async () => {
  const snapshot = bigSnapshot({ conversationBytes: 8_000, pendingToolUses: 1 });
  const handle = await h.forkflow.start({ agentId: 'killed-own-text', parent: snapshot, prompt: 'Hang.\n@sleep 60000 @reply never' });
  await h.model.log.waitFor((e) => e.outcome === 'pending' && JSON.stringify(e.body ?? '').includes('Hang.'));
  await handle.cancel();
  const result = await handle.result();
  expect(result).toMatchObject({ status: 'killed', text: '' });
});

test('budgets: tokens and tool calls end the fork normally with budget_exhausted', async () => {
  const tokens = await h.forkflow.fork(
    { agentId: 'budget-tokens', prompt: 'Read a lot.\n@repeat 10 @tool Read {"file_path":"big.txt"}\n@reply done', budget: { maxTokens: 12_000 } },
    { mode: 'sync' },
  );
  expect(tokens).toMatchObject({ status: 'completed', stopReason: 'budget_exhausted' });
  expect(tokens.turns).toBeLessThan(10);
  const status = await h.forkflow.status('budget-tokens');
  expect(status.budgetUsed).toBeGreaterThanOrEqual(12_000);
  expect(status.budgetMax).toBe(12_000);

  const calls = await h.forkflow.fork(
    {
      agentId: 'budget-tools',
      prompt: 'Three at once.\n@tools [{"name":"Glob","input":{"pattern":"*"}},{"name":"Glob","input":{"pattern":"*.txt"}},{"name":"Read","input":{"file_path":"big.txt","limit":1}}]\n@reply done',
      budget: { maxTokens: 50_000, maxToolCalls: 2 },
    },
    { mode: 'sync' },
  );
  expect(calls).toMatchObject({ status: 'completed', stopReason: 'budget_exhausted', toolUses: 2, turns: 1 });
  const transcript = await h.forkflow.transcript('budget-tools');
  const results = blocksOf(transcript[2]!);
  expect(results.map((b) => (b.type === 'tool_result' ? Boolean(b.is_error) : null))).toEqual([false, false, true]);
  expect(JSON.stringify(results[2])).toContain('budget of 2 tool calls');
  await recordHistory(h.client.workflow.getHandle('budget-tools'), 'budget-tool-calls');
});
