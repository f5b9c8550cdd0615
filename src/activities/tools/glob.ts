/**
 * Glob: files matching a pattern, newest first (recently touched files are usually the
 * relevant ones), as absolute paths so they can be passed straight to Read or FileEdit.
 * At most 200 are listed; the rest are counted on a visible last line.
 */
import type { GlobInput } from '../../shared/tools/schemas';
import { fail, messageOf, ok } from './outcome';
import { throttledHeartbeat } from './heartbeat';
import type { ToolContext, ToolOutcome } from './types';
import { resolveSearchPath, walkFiles } from './walk';
import { viewOf } from './visible';

/** Results listed before the "N more" line. */
export const GLOB_LIMITS = { maxResults: 200 } as const;

/** Runs Glob on parsed input. */
export async function runGlob(input: GlobInput, ctx: ToolContext): Promise<ToolOutcome> {
  const view = viewOf(ctx);
  const where = await resolveSearchPath(ctx.root, input.path, 'Glob', view);
  if (!where.ok) return where.outcome;
  if (where.isFile) return fail(`${input.path ?? ''} is a file, not a directory. Pass its parent directory as "path".`);
  const beat = throttledHeartbeat(ctx, 'Glob');
  const found: { path: string; mtimeMs: number }[] = [];
  try {
    for await (const file of walkFiles([input.pattern], { cwd: where.path, root: ctx.root, view, signal: ctx.signal, onEntry: () => beat({ seen: found.length }) })) {
      found.push({ path: file.path, mtimeMs: file.stats.mtimeMs });
    }
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return fail(`Glob pattern "${input.pattern}" failed: ${messageOf(err)}`);
  }
  if (found.length === 0) return ok(`No files match "${input.pattern}" in ${where.path}.`);
  found.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const shown = found.slice(0, GLOB_LIMITS.maxResults).map((f) => f.path);
  const hidden = found.length - shown.length;
  if (hidden > 0) shown.push(`[${hidden} more files not shown (${found.length} in total); narrow the pattern or the path.]`);
  return ok(shown.join('\n'));
}
