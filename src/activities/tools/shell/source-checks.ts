/**
 * Checks on the raw command text, for the places where tree-sitter-bash and bash could
 * read the same bytes differently. The tree walk is only as good as the agreement
 * between the two, so anything that could make them disagree is refused:
 *  - control characters (a carriage return or NUL is a word character to bash but may
 *    be whitespace or an end of input elsewhere);
 *  - non-ASCII text outside quotes and comments (look-alike spaces and letters);
 *  - a backslash-newline that is not plain whitespace between words: bash joins the
 *    lines before it splits words (`-del\<newline>ete` is `-delete`), while tree-sitter
 *    may keep two words, and in an unquoted here-document it can even move the end line;
 *  - a `$'...'` string whose extent differs from bash's: tree-sitter-bash mis-reads some
 *    backslash escapes there (`$'\\' ; rm x ; '...'`), so every such string is re-scanned
 *    with bash's own rule (a backslash escapes the next character, `'` ends the string),
 *    and a `$` that tree-sitter left in front of a quote outside double quotes is refused.
 */
import type { Node } from 'web-tree-sitter';
import { deny } from './deny';

/** Longest command classified; longer ones are refused rather than parsed. */
export const MAX_COMMAND_LENGTH = 20_000;

/** Leaves whose text is quoted or ignored by bash, where any character is literal. */
const QUOTED_LEAVES = new Set(['string_content', 'raw_string', 'heredoc_body', 'heredoc_content', 'comment', 'ansi_c_string']);

/** Checks that need only the text. */
export function checkText(source: string): void {
  if (source.length > MAX_COMMAND_LENGTH) deny(`the command is longer than ${MAX_COMMAND_LENGTH} characters; split it up`);
  // Tab and newline are the only control characters a command needs.
  for (let i = 0; i < source.length; i++) {
    const code = source.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a) || code === 0x7f) {
      deny('the command contains control characters (such as a carriage return); remove them');
    }
  }
}

/** Checks that need the parse tree: non-ASCII placement, line continuations, `$'...'`. */
export function checkTextAgainstTree(source: string, root: Node): void {
  checkAnsiCStrings(source, root);
  for (let i = 0; i < source.length; i++) {
    const code = source.charCodeAt(i);
    if (code > 0x7e) {
      const leaf = root.descendantForIndex(i, i + 1);
      if (!leaf || !QUOTED_LEAVES.has(leaf.type)) {
        deny('the command contains non-ASCII characters outside quotes; put such text in quotes');
      }
    } else if (code === 0x5c && source[i + 1] === '\n') {
      checkContinuation(source, root, i);
      i++;
    } else if (code === 0x5c) {
      i++; // an escaped character is never the start of a continuation
    }
  }
}

function checkContinuation(source: string, root: Node, at: number): void {
  const node = root.descendantForIndex(at, at + 1);
  if (node?.type === 'raw_string') return; // literal inside single quotes, for both readers
  const between = node && node.childCount > 0; // not inside any token
  const before = source[at - 1];
  if (between && (at === 0 || before === ' ' || before === '\t')) return;
  deny('a backslash-newline inside a word or quoted text is not allowed; put a space before the backslash or keep the command on one line');
}

/** End index (exclusive) of the `$'...'` string that starts at `at`, read as bash reads it. */
export function ansiCEnd(source: string, at: number): number {
  for (let i = at + 2; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === "'") return i + 1;
  }
  return -1;
}

function checkAnsiCStrings(source: string, root: Node): void {
  const visit = (node: Node, inDoubleQuotes: boolean): void => {
    if (node.type === 'ansi_c_string') {
      if (inDoubleQuotes) deny("`$'...'` inside double quotes is literal text to bash; write it without the `$`");
      if (source.slice(node.startIndex, node.startIndex + 2) !== "$'" || ansiCEnd(source, node.startIndex) !== node.endIndex) {
        deny("a `$'...'` string could not be verified (the parser and bash read its end differently); use plain single quotes");
      }
      return;
    }
    if (!node.isNamed && node.type === '$' && !inDoubleQuotes && source[node.endIndex] === "'") {
      deny("a `$'...'` string could not be verified; use plain single quotes");
    }
    // A substitution starts a new quoting context, even inside double quotes.
    const fresh = node.type === 'command_substitution' || node.type === 'process_substitution';
    const quoted = !fresh && (inDoubleQuotes || node.type === 'string' || node.type === 'heredoc_body');
    for (const child of node.children) if (child) visit(child, quoted);
  };
  visit(root, false);
}
