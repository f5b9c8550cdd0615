/**
 * Redirections. Output may only go to /dev/null (or to a standard stream: `2>&1`);
 * input may come from literal files (not /dev/tcp or /dev/udp, which open sockets).
 * Here-strings are words like any other. Here-documents are fine because no allowed
 * program executes its stdin, but an unquoted delimiter makes bash expand `$(..)` and
 * backquotes inside the body, which tree-sitter does not fully parse, so such bodies
 * must contain no `$`, backquote or backslash. The body's end is re-derived from the
 * raw text with bash's rule and must agree with the parser, so no line can be read as
 * body by one and as a command by the other.
 *
 * tree-sitter hangs words that follow a redirect (`sort >/dev/null -o out`) on the
 * redirect node; they are returned so the caller treats them as arguments.
 */
import type { Node } from 'web-tree-sitter';
import { deny } from './deny';
import { quote, type ShellWord } from './words';
import { checkSensitiveWord } from './sensitive';

export interface RedirectChecks {
  readonly source: string;
  /** Walk a statement that the parser nested inside a here-document redirect. */
  readonly walk: (statement: Node) => void;
  /** Evaluate a word, walking any substitution in it with the walker's rules. */
  readonly word: (word: Node) => ShellWord;
  /** Whether the redirect is inside `$(...)` or `<(...)`. */
  readonly insideSubstitution: () => boolean;
}

const OUTPUT_OPS = new Set(['>', '>>', '>|', '&>', '&>>', '<>']);
const CLOSE_OPS = new Set(['>&-', '<&-']);
const CHAIN_TOKENS = new Set(['&&', '||', '|', '|&', ';']);
const INSIDE_WORD = new Set(['string', 'raw_string', 'ansi_c_string', 'translated_string', 'concatenation', 'word', 'command_substitution', 'process_substitution', 'expansion', 'arithmetic_expansion', 'heredoc_body', 'comment']);

/** Check one redirect node; returns word nodes that are really command arguments. */
export function checkRedirect(node: Node, checks: RedirectChecks): Node[] {
  checkNamedDescriptor(node, checks.source);
  switch (node.type) {
    case 'file_redirect':
      return fileRedirect(node, checks);
    case 'herestring_redirect':
      for (const child of node.namedChildren) {
        if (child && child.type !== 'file_descriptor') checks.word(child);
      }
      return [];
    case 'heredoc_redirect':
      return heredoc(node, checks);
    default:
      return deny(`unsupported redirection ${quote(node.text)}`);
  }
}

/**
 * `{name}>file` opens a descriptor and assigns its number to `name`; the name part may
 * be an array element whose subscript is evaluated (`{a[$(cmd)]}>&-`). tree-sitter reads
 * `{name}` as an ordinary word before the redirect, so look at the text itself.
 */
function checkNamedDescriptor(node: Node, source: string): void {
  const hasDescriptor = node.children.some((c) => c?.type === 'file_descriptor');
  if (!hasDescriptor && (source[node.startIndex - 1] === '}' || node.text.startsWith('{'))) {
    deny('a `{name}>` redirection assigns a file descriptor to a variable; leave it out');
  }
}

function fileRedirect(node: Node, checks: RedirectChecks): Node[] {
  let op = '';
  const destinations: Node[] = [];
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i)!;
    const field = node.fieldNameForChild(i);
    if (field === 'destination') destinations.push(child);
    else if (field === 'descriptor' && child.type === 'file_descriptor') continue;
    else if (!child.isNamed && !op) op = child.type;
    else deny(`unsupported redirection ${quote(node.text)}`);
  }
  const [target, ...extras] = destinations;
  if (CLOSE_OPS.has(op)) return destinations;
  if (!target) deny(`redirection ${quote(node.text)} has no target`);
  const word = checks.word(target);
  const value = word.kind === 'static' ? word.value : undefined;
  if (op === '>&' || op === '<&') {
    // Duplicating or closing a descriptor (`2>&1`, `>&-`); `>&file` is a file redirect.
    // Only the standard streams: a higher descriptor could be one the runner inherited.
    if (value !== undefined && /^([012]-?|-)$/.test(value)) return extras;
    if (op === '>&' && value === '/dev/null') return extras;
    deny(`redirection ${quote(node.text)} writes to a file; only /dev/null and descriptors like 2>&1 are allowed`);
  }
  if (OUTPUT_OPS.has(op)) {
    if (value === '/dev/null') return extras;
    deny(`redirection ${quote(node.text)} writes a file; let the output go to stdout, or to /dev/null to discard it`);
  }
  if (op === '<') {
    checkSensitiveWord(word);
    // bash itself opens /dev/tcp/HOST/PORT and /dev/udp/... as sockets; a name whose text
    // is unknown (`< "$f"`) must at least start with something that rules them out.
    const known = value ?? (word.kind === 'dynamic' ? word.prefix : '');
    const couldBeSocket = ['/dev/tcp/', '/dev/udp/'].some((p) => known.startsWith(p) || (value === undefined && p.startsWith(known)));
    if (couldBeSocket) deny(value === undefined ? `input redirection ${quote(node.text)} could open a /dev/tcp socket; name the file literally` : '/dev/tcp and /dev/udp open network connections; leave them out');
    if (word.kind === 'dynamic' && word.multi && word.prefix !== '/dev/fd/') deny(`input redirection ${quote(node.text)} could expand to several names; quote it`);
    return extras;
  }
  return deny(`unsupported redirection ${quote(node.text)}`);
}

function heredoc(node: Node, checks: RedirectChecks): Node[] {
  // Where the body of a here-document inside `$(...)` starts and ends is not verified.
  if (checks.insideSubstitution()) deny('here-documents inside $(...) are not allowed; use a here-string (<<<) or a file');
  const extras: Node[] = [];
  let start: Node | undefined;
  let body: Node | undefined;
  let end: Node | undefined;
  let op = '';
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i)!;
    const field = node.fieldNameForChild(i);
    if (field === 'argument') extras.push(child);
    else if (field === 'redirect') extras.push(...checkRedirect(child, checks));
    else if (field === 'descriptor' && child.type === 'file_descriptor') continue;
    else if (child.type === 'heredoc_start') start = child;
    else if (child.type === 'heredoc_body') body = child;
    else if (child.type === 'heredoc_end') end = child;
    else if (child.type === '<<' || child.type === '<<-') op = child.type;
    else if (!child.isNamed && CHAIN_TOKENS.has(child.type)) continue;
    else if (child.isNamed) checks.walk(child); // `cat <<EOF | grep x`, `cat <<EOF && ls`
    else deny(`unsupported here-document syntax in ${quote(node.text)}`);
  }
  if (!start || !end || !op) deny('incomplete here-document; end it with its delimiter line');
  checkHeredocBody(checks.source, start, body, end, op === '<<-');
  return extras;
}

function checkHeredocBody(source: string, start: Node, body: Node | undefined, end: Node, stripTabs: boolean): void {
  const quoted = /['"\\]/.test(start.text);
  const delimiter = start.text.replace(/['"\\]/g, '');
  if (!delimiter || end.text !== delimiter) deny('here-document delimiter could not be verified; use a plain one like <<\'EOF\'');

  const lineEnd = source.indexOf('\n', start.endIndex);
  if (lineEnd < 0 || source[lineEnd - 1] === '\\') deny('here-document header must end its line');
  // bash starts the body after the first newline that ends the command line; a newline
  // inside quotes or a substitution on the header line does not count.
  for (let n = start.tree.rootNode.descendantForIndex(lineEnd, lineEnd + 1); n; n = n.parent) {
    if (INSIDE_WORD.has(n.type)) deny('a here-document header line must not continue inside quotes; keep quotes on one line');
  }
  if (/<<[^<]/.test(source.slice(start.endIndex, lineEnd))) deny('only one here-document per line is supported');
  const bodyStart = lineEnd + 1;
  const parsedStart = body?.startIndex ?? end.startIndex;
  const tabs = /^\t*/.exec(source.slice(bodyStart))![0].length;
  if (parsedStart < bodyStart || parsedStart > bodyStart + (stripTabs ? tabs : 0)) {
    deny('here-document body could not be verified; use a plain <<\'EOF\' ... EOF');
  }

  // bash ends the body at the first line equal to the delimiter (after tab stripping).
  let at = bodyStart;
  for (;;) {
    const nl = source.indexOf('\n', at);
    const stop = nl < 0 ? source.length : nl;
    const line = source.slice(at, stop);
    if ((stripTabs ? line.replace(/^\t+/, '') : line) === delimiter) {
      if (end.startIndex < at || end.endIndex > stop) deny('here-document end could not be verified; use a plain <<\'EOF\' ... EOF');
      break;
    }
    if (nl < 0) deny('here-document is not terminated by its delimiter line');
    at = nl + 1;
  }
  const text = source.slice(bodyStart, end.startIndex);
  if (!quoted && /[$`\\]/.test(text)) {
    deny('a here-document with an unquoted delimiter expands $, backquotes and backslashes; quote the delimiter (<<\'EOF\')');
  }
}
