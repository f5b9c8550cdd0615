/**
 * docs/guides/patches.md stays whole: every patch id the workflow code uses has a row in its
 * inventory, in the step the code is in (`patched` or `deprecatePatch`), and no retired id is
 * used again. The measured counts in the rows come from `npm run patches:inventory`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { declaredPatches } from '../../kit/patch-ids';

const page = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'guides', 'patches.md'), 'utf8');
const section = (title: string): string => {
  const start = page.indexOf(`### ${title}`);
  if (start < 0) throw new Error(`docs/guides/patches.md has no section "${title}"`);
  const next = page.indexOf('\n#', start + 4);
  return page.slice(start, next < 0 ? undefined : next);
};
/** Inventory rows: patch id → the step its last column names. */
const rows = new Map(
  [...section('Guarding histories').matchAll(/^\| `([^`]+)` \|.*\| (\d) `(patched|deprecatePatch)` \|$/gm)].map((m) => [m[1]!, m[3]!]),
);
const retired = new Set([...section('Retired').matchAll(/`(forkflow-[^`]+|read-tools-[^`]+|wake-[^`]+)`/g)].map((m) => m[1]!));

test('every patch the workflow code uses has an inventory row in the step the code is in', () => {
  const declared = declaredPatches();
  expect(declared.length).toBeGreaterThan(0);
  const inCode = Object.fromEntries(declared.map((p) => [p.id, p.calls.includes('patched') ? 'patched' : 'deprecatePatch']));
  expect(Object.fromEntries(rows)).toEqual(inCode);
});

test('no retired patch id is used again', () => {
  expect(retired.size).toBe(29);
  expect(declaredPatches().filter((p) => retired.has(p.id))).toEqual([]);
});
