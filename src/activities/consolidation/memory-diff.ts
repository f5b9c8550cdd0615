/**
 * What a consolidation changed in the memory directory: a content-hash manifest taken before
 * the fork and compared after it (a write that left a file as it was is not a change), and
 * the retirement of topic files the fork emptied.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { MemoryChanges } from '../../shared/dream/outcome';
import { isInside } from '../tools/paths';

/** Relative path → sha256 of the content, regular files only. */
export type MemoryManifest = Record<string, string>;

/** A memory directory is a handful of markdown files; this bounds a pathological one. */
const MAX_FILES = 5_000;

/** Hashes every regular file under `dir` (symlinks are listed by their target text, not followed). */
export async function manifestOf(dir: string): Promise<MemoryManifest> {
  const out: MemoryManifest = {};
  let count = 0;
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => []);
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (++count > MAX_FILES) return;
      const child = rel ? path.join(rel, e.name) : e.name;
      if (e.isDirectory()) await walk(child);
      else if (e.isFile()) out[child] = createHash('sha256').update(await readFile(path.join(dir, child))).digest('hex');
      else if (e.isSymbolicLink()) out[child] = 'symlink';
    }
  };
  await walk('');
  return out;
}

export function diffManifests(before: MemoryManifest, after: MemoryManifest): MemoryChanges {
  const created: string[] = [];
  const updated: string[] = [];
  const removed: string[] = [];
  for (const [file, hash] of Object.entries(after)) {
    if (!(file in before)) created.push(file);
    else if (before[file] !== hash) updated.push(file);
  }
  for (const file of Object.keys(before)) if (!(file in after)) removed.push(file);
  return { created: created.sort(), updated: updated.sort(), removed: removed.sort() };
}

/**
 * Deletes topic files the fork emptied (its way of retiring one: it has no delete tool).
 * Only paths it touched, canonically inside `canonicalDir`, plain empty files, never the index.
 */
export async function removeRetired(touched: readonly string[], canonicalDir: string, indexFile: string): Promise<string[]> {
  const removed: string[] = [];
  for (const file of new Set(touched)) {
    if (!isInside(file, canonicalDir) || file === canonicalDir || file === path.join(canonicalDir, indexFile)) continue;
    const st = await lstat(file).catch(() => null);
    if (!st?.isFile() || st.size !== 0 || st.nlink > 1) continue;
    await unlink(file);
    removed.push(path.relative(canonicalDir, file));
  }
  return removed;
}

/** Lines of the index file, or null when there is none. */
export async function indexLines(dir: string, indexFile: string): Promise<number | null> {
  const text = await readFile(path.join(dir, indexFile), 'utf8').catch(() => null);
  if (text === null) return null;
  const trimmed = text.replace(/\n$/, '');
  return trimmed === '' ? 0 : trimmed.split('\n').length;
}
