/**
 * The fork report the scripted model writes at the end of a task: the five lines a fork
 * worker is asked for (Scope / Result / Key files / Files changed / Issues), built from
 * the directive and from what the tools returned.
 */
import type { ToolExchange } from './conversation';

const MAX_PARTS = 5;
const MAX_KEY_FILES = 8;
const MAX_QUOTE = 100;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

function nonBlankLines(text: string): string[] {
  return text.split(/\r?\n/).filter((l) => l.trim() !== '');
}

/** Read output may carry line numbers ("  12→text", "12\ttext"); the quote drops them. */
export function withoutLineNumber(line: string): string {
  return line.replace(/^\s*\d+(?:\t|→|:|\|)\s?/, '').trim();
}

/** Lines of a listing that look like paths (not headers such as "Found 3 files"). */
export function listedPaths(output: string): string[] {
  return nonBlankLines(output)
    .map((l) => l.trim())
    .filter((l) => !/^(found \d+|no (files|matches))/i.test(l) && !/^[([]/.test(l));
}

function inputField(input: unknown, field: string): string | undefined {
  const v = input && typeof input === 'object' ? (input as Record<string, unknown>)[field] : undefined;
  return typeof v === 'string' ? v : undefined;
}

function describe(x: ToolExchange): string {
  if (!x.answered) return `${x.name} got no result`;
  if (x.isError) return `${x.name} failed (${clip(nonBlankLines(x.output)[0]?.trim() ?? 'no message', 80)})`;
  if (x.name === 'Glob') return `Glob "${inputField(x.input, 'pattern') ?? '?'}" listed ${plural(listedPaths(x.output).length, 'path')}`;
  if (x.name === 'Read') {
    // Bracketed lines are the tool's own notes ("[More lines follow…]"), not file content.
    const lines = nonBlankLines(x.output).filter((l) => !/^\[/.test(l.trim())).length;
    return `read ${inputField(x.input, 'file_path') ?? '?'} (${plural(lines, 'line')})`;
  }
  return `${x.name} returned ${plural(nonBlankLines(x.output).length, 'line')}`;
}

function resultSentences(exchanges: ToolExchange[]): string {
  if (exchanges.length === 0) return 'No tools were run, so nothing was inspected.';
  const parts = exchanges.slice(0, MAX_PARTS).map(describe);
  if (exchanges.length > MAX_PARTS) parts.push(`${exchanges.length - MAX_PARTS} more`);
  let text = `Ran ${plural(exchanges.length, 'tool call')}: ${parts.join('; ')}.`;
  const lastRead = [...exchanges].reverse().find((x) => x.name === 'Read' && x.answered && !x.isError);
  const firstLine = lastRead && nonBlankLines(lastRead.output).map(withoutLineNumber).find((l) => l !== '');
  if (lastRead && firstLine) {
    text += ` ${inputField(lastRead.input, 'file_path') ?? 'The file'} begins: "${clip(firstLine, MAX_QUOTE)}".`;
  }
  return text;
}

function keyFiles(exchanges: ToolExchange[]): string {
  const ok = exchanges.filter((x) => x.answered && !x.isError);
  const read = ok.flatMap((x) => (x.name === 'Read' ? [inputField(x.input, 'file_path')] : [])).filter((p): p is string => !!p);
  const listed = ok.flatMap((x) => (x.name === 'Glob' ? listedPaths(x.output) : []));
  const all = [...new Set([...read, ...listed])];
  if (all.length === 0) return 'none';
  const shown = all.slice(0, MAX_KEY_FILES).join(', ');
  return all.length > MAX_KEY_FILES ? `${shown} (+${all.length - MAX_KEY_FILES} more)` : shown;
}

/** The report text, one field a line. */
export function buildReport(directive: string | undefined, exchanges: ToolExchange[]): string {
  return [
    `Scope: ${directive ? clip(directive, 200) : '(no directive)'}`,
    `Result: ${resultSentences(exchanges)}`,
    `Key files: ${keyFiles(exchanges)}`,
    'Files changed: none',
    'Issues: none',
  ].join('\n');
}
