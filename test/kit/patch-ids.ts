/**
 * The patch ids forkflow's workflow code calls `patched()` or `deprecatePatch()` with, read
 * from src/workflows (each call names a `*_PATCH` constant declared in some workflow file).
 * Used by `npm run patches:inventory` and by the test that keeps docs/guides/patches.md whole.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** One patch id the workflow code uses: its constant, the files that call it, and how (the retirement step it is in). */
export interface DeclaredPatch {
  id: string;
  constant: string;
  files: string[];
  calls: ('patched' | 'deprecatePatch')[];
}

/** Every patch id a `patched(NAME)` or `deprecatePatch(NAME)` call in src/workflows uses. */
export function declaredPatches(): DeclaredPatch[] {
  const dir = join(ROOT, 'src', 'workflows');
  const texts = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => ({ file: relative(ROOT, join(dir, f)), text: readFileSync(join(dir, f), 'utf8') }));
  const ids = new Map<string, string>();
  for (const { text } of texts) for (const m of text.matchAll(/const ([A-Z_0-9]+_PATCH) = '([^']+)'/g)) ids.set(m[1]!, m[2]!);
  const found = new Map<string, DeclaredPatch>();
  for (const { file, text } of texts) {
    for (const m of text.matchAll(/\b(patched|deprecatePatch)\(([A-Z_0-9]+)\)/g)) {
      const call = m[1] as DeclaredPatch['calls'][number];
      const constant = m[2]!;
      const entry = found.get(constant) ?? { id: ids.get(constant) ?? `(${constant}: no declaration found)`, constant, files: [], calls: [] };
      if (!entry.files.includes(file)) entry.files.push(file);
      if (!entry.calls.includes(call)) entry.calls.push(call);
      found.set(constant, entry);
    }
  }
  return [...found.values()].sort((a, b) => a.id.localeCompare(b.id));
}
