/**
 * The post-run audit of a memory fork: every path it wrote (the `touched` lists of its
 * tool outcomes) must still resolve, canonically, to a plain file inside the memory
 * directory. It fails closed: a path that cannot be verified counts as an escape.
 */
import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { isInside } from './paths';
import { errnoCode, messageOf } from './outcome';

/** Why a touched path fails the audit. */
export type EscapeReason =
  /** Resolves outside the directory (or was recorded as a non-absolute path). */
  | 'outside'
  /** Cannot be resolved any more (removed, or a component replaced), so cannot be vouched for. */
  | 'unverifiable'
  /** No longer a regular file. */
  | 'not-a-file'
  /** Has more than one hard link: the same content is reachable from elsewhere. */
  | 'hard-link';

/** One touched path that failed the audit. */
export interface PathEscape {
  path: string;
  reason: EscapeReason;
  detail: string;
}

async function auditOne(touched: string, dir: string): Promise<PathEscape | null> {
  if (!path.isAbsolute(touched)) return { path: touched, reason: 'outside', detail: 'recorded path is not absolute' };
  let canonical: string;
  try {
    canonical = await realpath(touched);
  } catch (err) {
    return { path: touched, reason: 'unverifiable', detail: `cannot resolve (${errnoCode(err) ?? messageOf(err)})` };
  }
  if (!isInside(canonical, dir) || canonical === dir) {
    return { path: touched, reason: 'outside', detail: `resolves to ${canonical}, outside ${dir}` };
  }
  const st = await lstat(canonical).catch(() => null);
  if (st === null) return { path: touched, reason: 'unverifiable', detail: `${canonical} vanished during the audit` };
  if (!st.isFile()) return { path: touched, reason: 'not-a-file', detail: `${canonical} is not a regular file` };
  if (st.nlink > 1) return { path: touched, reason: 'hard-link', detail: `${canonical} has ${st.nlink} hard links` };
  return null;
}

/**
 * Re-checks that every path a fork touched is (still) canonically inside `dir`, and
 * returns the ones that are not. An empty array means the audit passed.
 *
 * If `dir` itself cannot be resolved, every path is reported as `unverifiable`.
 *
 * @example
 * const escapes = await auditTouchedPaths(outcomes.flatMap((o) => o.touched ?? []), memoryDir);
 * if (escapes.length > 0) failTheRun(escapes);
 */
export async function auditTouchedPaths(paths: readonly string[], dir: string): Promise<PathEscape[]> {
  let canonicalDir: string;
  try {
    canonicalDir = await realpath(dir);
  } catch (err) {
    const detail = `memory directory ${dir} cannot be resolved (${errnoCode(err) ?? messageOf(err)})`;
    return paths.map((p) => ({ path: p, reason: 'unverifiable' as const, detail }));
  }
  const unique = [...new Set(paths)];
  const results = await Promise.all(unique.map((p) => auditOne(p, canonicalDir)));
  return results.filter((r): r is PathEscape => r !== null);
}
