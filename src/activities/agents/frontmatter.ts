/**
 * Splits an agent file into its YAML frontmatter (parsed with the `yaml` package) and its
 * markdown body. Pure: the caller reads the file.
 */
import { LineCounter, parseDocument } from 'yaml';

export type SplitFile =
  | { ok: true; data: Record<string, unknown>; body: string }
  | { ok: false; problem: string; fix: string };

const FENCE = /^---[ \t]*$/;

/**
 * Finds the `---` fenced block at the very top of the file and parses it. Anything else
 * (no opening fence, no closing fence, YAML errors, a block that is not a mapping) is an
 * explained failure, never a throw.
 */
export function splitFrontmatter(text: string): SplitFile {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (!FENCE.test(lines[0] ?? '')) {
    return {
      ok: false,
      problem: 'the file does not start with a frontmatter block',
      fix: 'Begin the file with a line "---", then name: and description: lines, then "---", then the system prompt.',
    };
  }
  const close = lines.findIndex((line, i) => i > 0 && FENCE.test(line));
  if (close < 0) {
    return { ok: false, problem: 'the frontmatter block is never closed', fix: 'Add a line "---" after the last frontmatter field.' };
  }

  const source = lines.slice(1, close).join('\n');
  const lineCounter = new LineCounter();
  let doc = parseDocument(source, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const [error] = doc.errors;
  if (error?.code === 'BLOCK_AS_IMPLICIT_KEY') {
    // Agent files are often written with an unquoted ": " in a one-line value
    // ("description: Use when: ..."), which YAML rejects. Quoting those values and
    // trying once more reads them as their authors meant.
    const retry = parseDocument(quoteColonValues(source), { prettyErrors: false, uniqueKeys: true });
    if (retry.errors.length === 0) doc = retry;
  }
  if (doc.errors.length && error) {
    // +1: line 1 of the YAML is line 2 of the file (after the opening fence).
    const line = lineCounter.linePos(error.pos[0]).line + 1;
    const quoteHint = error.code === 'BLOCK_AS_IMPLICIT_KEY' ? ' A value that contains ": " must be quoted.' : '';
    return {
      ok: false,
      problem: `the frontmatter is not valid YAML (line ${line}: ${error.message})`,
      fix: `Correct the YAML on that line.${quoteHint}`,
    };
  }

  let data: unknown;
  try {
    data = doc.toJS();
  } catch (err) {
    // Alias bombs and similar are refused by the library with an exception.
    return { ok: false, problem: `the frontmatter could not be read (${(err as Error).message})`, fix: 'Simplify the YAML: no aliases or custom tags.' };
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return {
      ok: false,
      problem: data === null ? 'the frontmatter is empty' : 'the frontmatter is not a list of field: value lines',
      fix: 'Write one "field: value" per line, at least name: and description:.',
    };
  }
  return { ok: true, data: data as Record<string, unknown>, body: lines.slice(close + 1).join('\n').trim() };
}

/** `key: plain text with: a colon` at the top level becomes `key: 'plain text with: a colon'`. */
function quoteColonValues(source: string): string {
  return source
    .split('\n')
    .map((line) => {
      const match = /^([A-Za-z][\w-]*):[ \t]+(.*\S)[ \t]*$/.exec(line);
      const value = match?.[2];
      if (!match || value === undefined || !value.includes(': ') || /^['"[{|>&*!#]/.test(value)) return line;
      return `${match[1]}: '${value.replace(/'/g, "''")}'`;
    })
    .join('\n');
}
