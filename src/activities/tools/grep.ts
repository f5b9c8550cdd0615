/**
 * Grep: a ripgrep-like search in JavaScript (no ripgrep binary is assumed). Skips what
 * ripgrep skips by default (ignored, binary and very large files), prints absolute paths
 * with `path:line:text` for matches and `path-line-text` for context, and bounds its
 * output. Regex matching runs in a worker with a time budget (see `line-matcher.ts`).
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { GrepInput } from '../../shared/tools/schemas';
import { compilePattern, LineMatcher } from './line-matcher';
import { fail, isAbortError, messageOf, ok, ToolAbortError } from './outcome';
import { throttledHeartbeat } from './heartbeat';
import { READ_LIMITS } from './read';
import type { ToolContext, ToolOutcome } from './types';
import { resolveSearchPath, walkFiles } from './walk';
import { descriptorVisible, viewOf } from './visible';
import type { FsView } from './sandbox/view';

/** Grep's limits; `runGrep` takes them as a parameter so tests can shrink them. */
export interface GrepLimits {
  /** Files larger than this are skipped (and counted). */
  maxFileBytes: number;
  /** Output lines (or files) shown when `head_limit` is not given. */
  defaultHeadLimit: number;
  /** Time one file's matching may take before the pattern is given up. */
  regexBudgetMs: number;
}

/** The limits used by `runBuiltinTool`. */
export const GREP_LIMITS: GrepLimits = { maxFileBytes: 1024 * 1024, defaultHeadLimit: 1000, regexBudgetMs: 10_000 };

interface FileHits {
  path: string;
  lines: string[];
  hits: number[];
}

function display(line: string): string {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  return text.length > READ_LIMITS.maxLineChars ? `${text.slice(0, READ_LIMITS.maxLineChars)} [... line truncated: ${text.length} chars]` : text;
}

/** `path:n:text` for hits, `path-n-text` for context, `--` between separate groups. */
function contentLines(file: FileHits, context: number, out: string[]): void {
  const isHit = new Set(file.hits);
  let lastShown = -2;
  for (const hit of file.hits) {
    const from = Math.max(hit - context, lastShown + 1);
    const to = Math.min(hit + context, file.lines.length - 1);
    if (context > 0 && out.length > 0 && from > lastShown + 1) out.push('--');
    for (let i = from; i <= to; i++) {
      out.push(`${file.path}${isHit.has(i) ? ':' : '-'}${i + 1}${isHit.has(i) ? ':' : '-'}${display(file.lines[i] ?? '')}`);
    }
    lastShown = Math.max(lastShown, to);
  }
}

/** Lines of a text; a final newline does not start another (empty) line. */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function globPatterns(glob: string | undefined): string[] {
  if (glob === undefined || glob === '') return ['**/*'];
  if (!glob.startsWith('!')) return [glob];
  // fast-glob turns negative patterns into ignores, where baseNameMatch does not apply.
  const excluded = glob.slice(1);
  return ['**/*', excluded.includes('/') ? glob : `!**/${excluded}`];
}

/** Runs Grep on parsed input; `limits` is for tests. */
export async function runGrep(input: GrepInput, ctx: ToolContext, limits: GrepLimits = GREP_LIMITS): Promise<ToolOutcome> {
  const compiled = compilePattern(input.pattern, input.case_insensitive ?? false);
  if (!compiled.ok) {
    return fail(`Invalid regular expression ${JSON.stringify(input.pattern)}: ${compiled.message}. Patterns use JavaScript syntax; escape literal ( ) [ ] { } . * + ? with a backslash.`);
  }
  const view = viewOf(ctx);
  const where = await resolveSearchPath(ctx.root, input.path, 'Grep', view);
  if (!where.ok) return where.outcome;
  const beat = throttledHeartbeat(ctx, 'Grep');

  let files: string[];
  if (where.isFile) {
    files = [where.path];
  } else {
    files = [];
    try {
      for await (const f of walkFiles(globPatterns(input.glob), { cwd: where.path, root: ctx.root, view, signal: ctx.signal, baseNameMatch: true, onEntry: () => beat() })) {
        files.push(f.path);
      }
    } catch (err) {
      if (isAbortError(err)) throw err;
      return fail(`Grep could not list files (glob ${JSON.stringify(input.glob ?? '')}): ${messageOf(err)}`);
    }
    files.sort();
  }

  const mode = input.output_mode ?? 'files_with_matches';
  const out: string[] = [];
  let skippedLarge = 0;
  let matcher: LineMatcher | undefined; // started on the first file: a worker costs ~20 ms
  try {
    for (const file of files) {
      beat({ file });
      let data: Buffer | 'large' | undefined;
      try {
        data = await readVisible(file, view, limits.maxFileBytes);
      } catch {
        if (ctx.signal.aborted) throw new ToolAbortError();
        continue; // vanished or unreadable: ripgrep also moves on
      }
      if (ctx.signal.aborted) throw new ToolAbortError();
      if (data === 'large') skippedLarge += 1;
      if (data === undefined || data === 'large') continue;
      if (data.subarray(0, READ_LIMITS.sniffBytes).includes(0)) continue;
      const text = data.toString('utf8');
      matcher ??= new LineMatcher(compiled);
      const result = await matcher.match(text, limits.regexBudgetMs, ctx.signal);
      if (result.kind === 'timeout') {
        return fail(`The pattern ${JSON.stringify(input.pattern)} took more than ${limits.regexBudgetMs} ms on ${file} and was stopped. Nested quantifiers such as (a+)+ backtrack exponentially; simplify the pattern.`);
      }
      if (result.lines.length === 0) continue;
      if (mode === 'files_with_matches') out.push(file);
      else if (mode === 'count') out.push(`${file}:${result.lines.length}`);
      else contentLines({ path: file, lines: splitLines(text), hits: result.lines }, input.context ?? 0, out);
    }
  } finally {
    await matcher?.close();
  }
  return ok(render(out, input, limits, skippedLarge));
}

/**
 * A file's bytes, read through one descriptor whose real location is checked against the
 * view (a symlink in the workspace pointing outside it is skipped); 'large' past the limit.
 */
async function readVisible(file: string, view: FsView, maxBytes: number): Promise<Buffer | 'large' | undefined> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!descriptorVisible(view, handle.fd)) return undefined;
    const st = await handle.stat();
    if (!st.isFile()) return undefined;
    if (st.size > maxBytes) return 'large';
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

function render(out: string[], input: GrepInput, limits: GrepLimits, skippedLarge: number): string {
  const notes: string[] = [];
  if (skippedLarge > 0) notes.push(`[${skippedLarge} file${skippedLarge === 1 ? '' : 's'} over ${limits.maxFileBytes / 1024 / 1024} MiB not searched; use Read with offset/limit on them.]`);
  if (out.length === 0) return [`No matches for ${JSON.stringify(input.pattern)}.`, ...notes].join('\n');
  const limit = input.head_limit ?? limits.defaultHeadLimit;
  const shown = out.slice(0, limit);
  if (out.length > limit) shown.push(`[${out.length - limit} more ${input.output_mode === 'content' ? 'lines' : 'entries'} not shown; raise head_limit or narrow the search.]`);
  return [...shown, ...notes].join('\n');
}
