/**
 * Checks on the raw command text, for the places where tree-sitter-bash and bash could
 * read the same bytes differently. The tree walk is only as good as the agreement
 * between the two, so anything that could make them disagree is refused:
 *  - control characters (a carriage return or NUL is a word character to bash but may
 *    be whitespace or an end of input elsewhere);
 *  - non-ASCII text outside quotes and comments (look-alike spaces and letters);
 *  - a backslash-newline that is not plain whitespace between words: bash joins the
 *    lines before it splits words (`-del\<newline>ete` is `-delete`), while tree-sitter
 *    may keep two words, and in an unquoted here-document it can even move the end line.
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

/** Checks that need the parse tree: non-ASCII placement and line continuations. */
export function checkTextAgainstTree(source: string, root: Node): void {
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
