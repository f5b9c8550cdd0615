/**
 * autoDream's file work on temporary directories: the state file (atomic, validated, updates
 * serialised), the memory manifest and its diff, retiring emptied files, and session rendering.
 */
import { mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diffManifests, indexLines, manifestOf, removeRetired } from '../../../src/activities/consolidation/memory-diff';
import { renderSession, RENDER_LIMITS } from '../../../src/activities/consolidation/render';
import { readDreamState, updateDreamState, writeDreamState } from '../../../src/activities/consolidation/state-file';
import { emptyDreamState } from '../../../src/shared/dream/state';

const temp = () => mkdtempSync(join(tmpdir(), 'forkflow-dream-unit-'));

test('state: missing is empty, written atomically, a corrupt or foreign file is refused', async () => {
  const dir = temp();
  expect(await readDreamState(dir, 'team')).toEqual(emptyDreamState('team'));
  await writeDreamState(dir, { ...emptyDreamState('team'), lastConsolidatedAt: '2026-01-01T00:00:00.000Z' });
  expect((await readDreamState(dir, 'team')).lastConsolidatedAt).toBe('2026-01-01T00:00:00.000Z');
  expect(readdirSync(dir)).toEqual(['state.json']);
  await expect(readDreamState(dir, 'other')).rejects.toThrow(/not a valid state of scope other/);
  writeFileSync(join(dir, 'state.json'), '{"version":1');
  await expect(readDreamState(dir, 'team')).rejects.toThrow(/fix it or delete it/);
});

test('state: concurrent read-modify-writes are serialised (none is lost)', async () => {
  const dir = temp();
  const stamps = Array.from({ length: 20 }, (_, i) => `2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z`);
  await Promise.all(
    stamps.map((at) =>
      updateDreamState(dir, 'team', async (s) => {
        await new Promise((r) => setImmediate(r));
        const seen = s.lastOutcome ? Number(s.lastOutcome.kind) : 0;
        return { state: { ...s, lastScanAt: at, lastOutcome: { kind: String(seen + 1), at, by: { workflowId: 'w', runId: 'r' } } }, value: undefined };
      }),
    ),
  );
  expect((await readDreamState(dir, 'team')).lastOutcome?.kind).toBe('20');
  expect(readdirSync(dir).sort()).toEqual(['state.json']);
});

test('manifest diff: created, updated, removed; a rewrite with the same bytes is no change', async () => {
  const dir = temp();
  writeFileSync(join(dir, 'a.md'), 'a');
  writeFileSync(join(dir, 'b.md'), 'b');
  writeFileSync(join(dir, 'same.md'), 'same');
  const before = await manifestOf(dir);
  writeFileSync(join(dir, 'a.md'), 'a2');
  writeFileSync(join(dir, 'same.md'), 'same');
  mkdirSync(join(dir, 'topics'));
  writeFileSync(join(dir, 'topics', 'c.md'), 'c');
  const removed = await removeRetired([join(dir, 'b.md')], dir, 'MEMORY.md'); // not empty: kept
  expect(removed).toEqual([]);
  writeFileSync(join(dir, 'b.md'), '');
  expect(await removeRetired([join(dir, 'b.md'), '/etc/passwd'], dir, 'MEMORY.md')).toEqual(['b.md']);
  expect(diffManifests(before, await manifestOf(dir))).toEqual({ created: ['topics/c.md'], updated: ['a.md'], removed: ['b.md'] });
});

test('retiring never removes the index, an untouched file, or a file with another link', async () => {
  const dir = temp();
  for (const f of ['MEMORY.md', 'untouched.md', 'linked.md']) writeFileSync(join(dir, f), '');
  symlinkSync(join(dir, 'linked.md'), join(dir, 'alias.md'));
  expect(await removeRetired([join(dir, 'MEMORY.md'), join(dir, 'alias.md')], dir, 'MEMORY.md')).toEqual([]);
  expect(readdirSync(dir).sort()).toEqual(['MEMORY.md', 'alias.md', 'linked.md', 'untouched.md']);
  writeFileSync(join(dir, 'MEMORY.md'), '- a\n- b\n');
  expect(await indexLines(dir, 'MEMORY.md')).toBe(2);
  expect(await indexLines(dir, 'NONE.md')).toBeNull();
});

test('a staged session drops the fork boilerplate, abbreviates tools and keeps head and tail of a long one', () => {
  const meta = { workflowId: 'w1', runId: 'r1', temporalStatus: 'COMPLETED', startedAt: 's', closedAt: 'c' };
  const text = renderSession(meta, [
    { role: 'user', content: '<forkflow-worker>\nrules\n</forkflow-worker>\nFix the build.' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'x'.repeat(1000) } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'y'.repeat(5000), is_error: true }] },
    { role: 'assistant', content: 'Done: '.concat('z'.repeat(RENDER_LIMITS.fileChars)) },
  ]);
  expect(text).not.toContain('rules');
  expect(text).toContain('Fix the build.');
  expect(text).toContain('[tool call Read]');
  expect(text).toContain('[tool result, error]');
  expect(text).toContain('characters of the middle of this session omitted');
  expect(text.length).toBeLessThan(RENDER_LIMITS.fileChars + 200);
  expect(renderSession(meta, undefined, 'refused')).toContain('Transcript not available: refused.');
});
