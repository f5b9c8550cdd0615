/**
 * Path resolution and containment, the checking half. Read paths are only resolved
 * against the workspace root (reading is never restricted). For writes: which directory
 * a write policy confines them to (canonicalised every call), and where a model-supplied
 * path really points
 * (symlinks resolved, `..` removed, for a new file the canonical parent plus the name).
 * The writing half, which closes the gap between this check and the write, is
 * `contained-write.ts`; both compare canonical paths byte for byte (no case folding, no
 * Unicode normalisation: on Linux `mem` and `MEM`, NFC and NFD are different names).
 */
import { realpath, lstat } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode, messageOf } from './outcome';
import type { WritePolicy } from './types';

/** The canonical directory writes are confined to, and what to call it in messages. */
export interface WriteScope {
  kind: 'workspace' | 'within';
  /** Canonical (realpath) form, taken at this call. */
  dir: string;
  label: 'workspace root' | 'memory directory';
}

/** The write scope, or why writes are disabled altogether. */
export type ScopeResult = { ok: true; scope: WriteScope } | { ok: false; message: string };

/** Where a write would land: an existing canonical parent, directories to create, a name. */
export interface WriteTarget {
  /** Canonical path of the deepest existing directory on the way to the file. */
  parent: string;
  /** Directories to create below `parent`, outermost first (workspace policy only). */
  missing: string[];
  name: string;
  /** Canonical path of the file. */
  canonical: string;
}

/** The planned write, or why this path is denied. */
export type TargetResult = ({ ok: true } & WriteTarget) | { ok: false; message: string };

/** Absolute form of a model-supplied read path (relative ones resolve against the root). */
export function resolveReadPath(root: string, given: string): { ok: true; path: string } | { ok: false; message: string } {
  if (given.includes('\0')) return { ok: false, message: 'The path contains a NUL byte.' };
  return { ok: true, path: path.resolve(root, given) };
}

/** True when `child` is `dir` or lies below it, comparing canonical strings exactly. */
export function isInside(child: string, dir: string): boolean {
  if (child === dir) return true;
  const prefix = dir.endsWith(path.sep) ? dir : dir + path.sep;
  return child.startsWith(prefix);
}

/** The byte-level `isInside`, for paths read back from the kernel (`/proc/self/fd`). */
export function isInsideBytes(child: Buffer, dir: Buffer): boolean {
  if (child.equals(dir)) return true;
  const slash = 0x2f;
  const prefixLength = dir[dir.length - 1] === slash ? dir.length : dir.length + 1;
  if (child.length <= prefixLength) return false;
  if (!child.subarray(0, dir.length).equals(dir)) return false;
  return dir[dir.length - 1] === slash || child[dir.length] === slash;
}

/**
 * Canonicalises the directory a policy confines writes to. Called at every write, so a
 * memory directory swapped for a symlink since the fork started is noticed; with a pinned
 * `canonicalDir` (see `pinWritePolicy`) such a change refuses the write.
 */
export async function resolveWriteScope(policy: WritePolicy, root: string): Promise<ScopeResult> {
  if (policy.kind === 'none') {
    return { ok: false, message: 'This agent may not write files. Use Read, Glob and Grep, and describe the change you would make in your report instead.' };
  }
  const label = policy.kind === 'workspace' ? 'workspace root' : 'memory directory';
  const given = policy.kind === 'workspace' ? root : policy.dir;
  if (typeof given !== 'string' || !path.isAbsolute(given)) {
    return { ok: false, message: `Writes are disabled: the ${label} is not configured as an absolute path.` };
  }
  let dir: string;
  try {
    dir = await realpath(given);
  } catch (err) {
    return { ok: false, message: `Writes are disabled: the ${label} ${given} cannot be resolved (${errnoCode(err) ?? messageOf(err)}).` };
  }
  if (policy.kind === 'within' && policy.canonicalDir !== undefined && policy.canonicalDir !== dir) {
    return {
      ok: false,
      message: `Writes are disabled: the memory directory ${given} now resolves to ${dir}, not ${policy.canonicalDir} as when this agent started.`,
    };
  }
  return { ok: true, scope: { kind: policy.kind, dir, label } };
}

/**
 * Returns the policy with the memory directory's canonical form pinned, so that a later
 * swap of that directory (or of a symlink on its path) refuses writes instead of
 * following it. Call once when a memory fork starts; other policies pass through.
 */
export async function pinWritePolicy(policy: WritePolicy): Promise<WritePolicy> {
  if (policy.kind !== 'within') return policy;
  return { kind: 'within', dir: policy.dir, canonicalDir: await realpath(policy.dir) };
}

function deny(scope: WriteScope, shown: string, canonical: string): { ok: false; message: string } {
  return {
    ok: false,
    message: `Denied: ${shown} resolves to ${canonical}, which is outside the ${scope.label} ${scope.dir}. Write only to files inside ${scope.dir}.`,
  };
}

/** Finds the deepest existing ancestor of `lexical` and the names below it. */
async function existingAncestor(lexical: string): Promise<{ parent: string; missing: string[] } | { error: string }> {
  const missing: string[] = [];
  let current = path.dirname(lexical);
  for (;;) {
    try {
      return { parent: await realpath(current), missing };
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT' || current === path.dirname(current)) {
        return { error: `cannot resolve ${current} (${errnoCode(err) ?? messageOf(err)})` };
      }
      missing.unshift(path.basename(current));
      current = path.dirname(current);
    }
  }
}

/**
 * Where a write of `rawPath` would land under `scope`, or why it is denied. `rawPath` is
 * whatever the model sent: non-strings, NUL bytes, and (for the memory directory)
 * non-absolute paths are denied. Pure checking: it creates and opens nothing.
 */
export async function planWriteTarget(scope: WriteScope, rawPath: unknown, root: string): Promise<TargetResult> {
  if (typeof rawPath !== 'string') {
    return { ok: false, message: `Denied: file_path must be a string, not ${rawPath === null ? 'null' : typeof rawPath}.` };
  }
  if (rawPath.length === 0 || rawPath.includes('\0')) {
    return { ok: false, message: 'Denied: file_path is empty or contains a NUL byte.' };
  }
  if (scope.kind === 'within' && !path.isAbsolute(rawPath)) {
    return { ok: false, message: `Denied: ${rawPath} is not an absolute path. Memory files must be given absolutely, e.g. ${path.join(scope.dir, 'notes.md')}.` };
  }
  const lexical = path.resolve(root, rawPath);
  if (lexical === path.dirname(lexical)) return { ok: false, message: `Denied: ${rawPath} is not a file path.` };

  try {
    // An existing path (or a symlink to one) is judged by where it really is.
    const canonical = await realpath(lexical);
    if (!isInside(canonical, scope.dir) || canonical === scope.dir) return deny(scope, rawPath, canonical);
    return { ok: true, parent: path.dirname(canonical), missing: [], name: path.basename(canonical), canonical };
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ELOOP') return { ok: false, message: `Denied: ${rawPath} is a symbolic link loop.` };
    if (code === 'ENOTDIR') return { ok: false, message: `Denied: a component of ${rawPath} is a file, not a directory.` };
    if (code !== 'ENOENT') return { ok: false, message: `Cannot resolve ${rawPath} (${code ?? messageOf(err)}).` };
  }

  // Missing target. A dangling symlink would point who knows where: refuse it.
  const dangling = await lstat(lexical).then((s) => s.isSymbolicLink(), () => false);
  if (dangling) return { ok: false, message: `Denied: ${rawPath} is a symbolic link to a missing target; write to a real path instead.` };

  const found = await existingAncestor(lexical);
  if ('error' in found) return { ok: false, message: `Cannot write ${rawPath}: ${found.error}.` };
  const name = path.basename(lexical);
  const canonical = path.join(found.parent, ...found.missing, name);
  if (!isInside(found.parent, scope.dir)) return deny(scope, rawPath, canonical);
  if (found.missing.length > 0 && scope.kind === 'within') {
    return {
      ok: false,
      message: `Denied: the parent directory ${path.dirname(lexical)} does not exist, and memory writes do not create directories. Write to a file in an existing directory inside ${scope.dir}.`,
    };
  }
  return { ok: true, parent: found.parent, missing: found.missing, name, canonical };
}
