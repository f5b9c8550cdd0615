/**
 * `npm run patches:inventory`: measures, for every patch id in src/workflows, which committed
 * histories (test/fixtures/histories/) carry its marker, which reach its `patched()` call and
 * get true (the new branch), and which get false (the old branch). The numbers in
 * docs/guides/patches.md come from this; re-run it before retiring a patch.
 *
 * Prints JSON: { patches: [{ id, constant, files, markers, newBranch, oldBranch }], failures }.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { HISTORY_FIXTURES } from '../test/kit/histories';
import { bundleProbe, patchMarkers, readHistories, replayWithProbe } from '../test/kit/patch-probe';

const ROOT = join(__dirname, '..');

/** Every patch id a `patched(NAME)` or `deprecatePatch(NAME)` call in src/workflows uses, with the files that call it. */
function declaredPatches(): { id: string; constant: string; files: string[] }[] {
  const dir = join(ROOT, 'src', 'workflows');
  const texts = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => ({ file: relative(ROOT, join(dir, f)), text: readFileSync(join(dir, f), 'utf8') }));
  const ids = new Map<string, string>();
  for (const { text } of texts) for (const m of text.matchAll(/const ([A-Z_0-9]+_PATCH) = '([^']+)'/g)) ids.set(m[1]!, m[2]!);
  const found = new Map<string, { id: string; constant: string; files: string[] }>();
  for (const { file, text } of texts) {
    for (const m of text.matchAll(/(?:patched|deprecatePatch)\(([A-Z_0-9]+)\)/g)) {
      const constant = m[1]!;
      const entry = found.get(constant) ?? { id: ids.get(constant) ?? `(${constant}: no declaration found)`, constant, files: [] };
      if (!entry.files.includes(file)) entry.files.push(file);
      found.set(constant, entry);
    }
  }
  return [...found.values()].sort((a, b) => a.id.localeCompare(b.id));
}

async function main(): Promise<void> {
  const histories = readHistories(HISTORY_FIXTURES);
  const bundle = await bundleProbe({}, { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: (m: string) => console.error(m) });
  const { calls, outcomes } = await replayWithProbe(bundle, histories);
  const markers = new Map(histories.map((h) => [h.name, patchMarkers(h.history)]));
  const patches = declaredPatches().map((p) => {
    const reached = (answer: boolean): string[] => [...new Set(calls.filter((c) => c.patchId === p.id && c.answer === answer).map((c) => c.history))].sort();
    return { ...p, markers: [...markers].filter(([, m]) => m.has(p.id)).map(([name]) => name), newBranch: reached(true), oldBranch: reached(false) };
  });
  const unknown = [...new Set(calls.map((c) => c.patchId))].filter((id) => !patches.some((p) => p.id === id));
  console.log(JSON.stringify({ histories: histories.length, patches, unknownIds: unknown, failures: outcomes.filter((o) => o.error) }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
