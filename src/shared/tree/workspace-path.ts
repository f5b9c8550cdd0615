/**
 * Where a sub-agent started with the Agent tool's `cwd` may work, decided lexically (pure,
 * workflow-safe: the workflow cannot see the filesystem): the path, resolved against the
 * caller's workspace with `.` and `..` removed, must stay inside it. The tool activities
 * check the same again canonically, symlinks resolved (src/activities/tools/workspace.ts).
 */

/** `p` with `.`, `..` and repeated slashes removed (POSIX); `..` above the root stays at the root. */
export function normalizePosix(p: string): string {
  const absolute = p.startsWith('/');
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!absolute) out.push('..');
      continue;
    }
    out.push(part);
  }
  const joined = out.join('/');
  return absolute ? `/${joined}` : joined || '.';
}

/** The sub-agent's workspace root, or why `cwd` is refused. `parentRoot` undefined: the caller works in the worker's own root. */
export function confineCwd(parentRoot: string | undefined, cwd: string): { ok: true; root: string } | { ok: false; message: string } {
  const rule = "an Agent's cwd must lie inside your own workspace";
  if (cwd.includes('\0')) return { ok: false, message: `Refused: ${rule}, and cwd contains a NUL byte.` };
  if (parentRoot === undefined) {
    if (cwd.startsWith('/')) return { ok: false, message: `Refused: ${rule}; give cwd relative to it (e.g. "packages/api"), not the absolute path ${cwd}.` };
    const root = normalizePosix(cwd);
    if (root === '..' || root.startsWith('../')) return { ok: false, message: `Refused: ${rule}, and ${cwd} leads out of it.` };
    return { ok: true, root };
  }
  const base = normalizePosix(parentRoot);
  const root = normalizePosix(cwd.startsWith('/') ? cwd : `${base}/${cwd}`);
  const inside = root === base || root.startsWith(base === '/' ? '/' : `${base}/`);
  return inside ? { ok: true, root } : { ok: false, message: `Refused: ${rule} (${base}), and ${cwd} resolves to ${root}.` };
}
