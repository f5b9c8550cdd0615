/**
 * The parser-agreement check's normalized "shape", read off a tree-sitter-bash tree.
 *
 * sh-syntax 0.7.0 (mvdan/sh) reports only a file's top-level statements: each one's
 * start, its command's extent, `;`/`&`, `!`, and its redirects (operator, fd, target word
 * with the extents of the word's parts). So the shape is expressed in those terms, for
 * every statement list in the command, nested ones included: the bodies of `$(…)`,
 * backquotes, `<(…)`, subshells, groups, if/while/for, and each element of a pipeline or
 * `&&`/`||` list is a list of its own that sh-syntax is asked to parse separately (see
 * agreement.ts; agreement-reader.ts reads the statements). Every word (arguments, assignment values, redirect targets, `for` items,
 * test operands) is listed too, with its parts, so that sh-syntax can be asked whether it
 * reads exactly that text as exactly one word made of the same parts.
 *
 * Anything this reader does not know is refused (fail closed) with {@link Unsupported}.
 */
import type { Node } from 'web-tree-sitter';

export interface Span {
  start: number;
  end: number;
}
/** A word: its extent and the extents of its parts (quoted strings, expansions, literal runs). */
export interface WordShape extends Span {
  parts: Span[];
}
export interface RedirShape {
  /** Where the redirect starts (its fd, else its operator). */
  at: number;
  op: string;
  fd: string;
  word: WordShape | null;
  /** Here-document body, from its first line to the end of the closing delimiter. */
  hdoc: Span | null;
}
export interface StmtShape {
  start: number;
  /** null for a statement of redirects only. */
  cmd: Span | null;
  /** Position of a closing `;` or `&`, or null. */
  semicolon: number | null;
  negated: boolean;
  background: boolean;
  redirs: RedirShape[];
}
/**
 * A statement list: the source slice [start, end), followed by the slice `tail` when
 * there is one, parsed on its own gives these statements.
 */
export interface ListShape extends Span {
  stmts: StmtShape[];
  /** A here-document body that belongs to this list but sits after the rest of its line. */
  tail?: Span;
}
export interface Shape {
  lists: ListShape[];
  words: WordShape[];
}

/** A construct the agreement check does not model: the command is refused. */
export class Unsupported extends Error {
  override readonly name = 'Unsupported';
}

/** Text that could hide a substitution: an opaque construct must not contain it. */
export const OPAQUE_UNSAFE = /\$\(|`|<\(|>\(|\$\[/;
export const WORDISH = new Set(['word', 'string', 'raw_string', 'ansi_c_string', 'translated_string', 'concatenation', 'simple_expansion', 'expansion', 'command_substitution', 'process_substitution', 'arithmetic_expansion', 'number', 'brace_expression']);
export const REDIRECTS = new Set(['file_redirect', 'heredoc_redirect', 'herestring_redirect']);
export const SEPARATORS = new Set([';', '&', '\n']);
export const COMPOUND = new Set(['if_statement', 'while_statement', 'for_statement', 'do_group', 'elif_clause', 'else_clause']);
// The whitespace bash skips between tokens; a backslash-newline joins lines and separates nothing.
const BLANK_GAP = /^(?:[ \t\n]|\\\n)*$/;

export function children(node: Node): Node[] {
  const out: Node[] = [];
  for (let i = 0; i < node.childCount; i++) out.push(node.child(i)!);
  return out;
}

/**
 * The building blocks of a {@link Shape}: statement lists, words and their parts,
 * redirects, assignments; agreement-reader.ts reads the statements themselves.
 */
export abstract class ShapeBuilder {
  readonly lists: ListShape[] = [];
  readonly words: WordShape[] = [];

  constructor(protected readonly source: string) {}

  read(root: Node): Shape {
    this.list(0, this.source.length, children(root));
    return { lists: this.lists, words: this.words };
  }

  /** Shape one statement's command (and any redirects around it) into `stmt`. */
  protected abstract command(node: Node, stmt: StmtShape): void;

  /** Statements among `nodes` form one list, parsed on its own as source[start, end). */
  protected list(start: number, end: number, nodes: Node[], tail?: Span): void {
    const shape: ListShape = { start, end, stmts: [], ...(tail ? { tail } : {}) };
    this.lists.push(shape);
    this.gaps(nodes, start, end);
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      if (node.type === 'comment' || SEPARATORS.has(node.type)) continue;
      if (!node.isNamed) throw new Unsupported(`\`${node.type}\` in a list of commands`);
      const stmt = this.stmt(node);
      const next = nodes[i + 1];
      if (next && (next.type === ';' || next.type === '&')) {
        stmt.semicolon = next.startIndex;
        stmt.background = next.type === '&';
      }
      shape.stmts.push(stmt);
    }
  }

  /** Text between sibling tokens must be blanks (or line joins) only. */
  protected gaps(nodes: Node[], from: number, to: number): void {
    let at = from;
    for (const node of nodes) {
      this.gap(at, node.startIndex);
      at = node.endIndex;
    }
    this.gap(at, to);
  }

  protected gap(from: number, to: number): void {
    if (to < from) throw new Unsupported('overlapping nodes');
    if (!BLANK_GAP.test(this.source.slice(from, to))) throw new Unsupported(`unparsed text ${JSON.stringify(this.source.slice(from, to))}`);
  }

  /** Words side by side must be split by a real blank, not only a backslash-newline. */
  protected split(a: Node, b: Node): void {
    const between = this.source.slice(a.endIndex, b.startIndex).replace(/\\\n/g, '');
    if (!/[ \t\n]/.test(between)) throw new Unsupported('two words joined by a line continuation');
  }

  protected stmt(node: Node): StmtShape {
    const stmt: StmtShape = { start: node.startIndex, cmd: null, semicolon: null, negated: false, background: false, redirs: [] };
    this.command(node, stmt);
    stmt.redirs.sort((a, b) => a.at - b.at);
    return stmt;
  }

  protected assignment(node: Node): void {
    if (node.type !== 'variable_assignment') throw new Unsupported(`\`${node.type}\` among assignments`);
    const kids = children(node);
    const [name, eq, value] = kids;
    if (!name || name.type !== 'variable_name' || !eq || (eq.type !== '=' && eq.type !== '+=') || kids.length > 3) throw new Unsupported('an unusual assignment');
    if (name.endIndex !== eq.startIndex) throw new Unsupported('an unusual assignment');
    if (value?.type === 'array') return this.array(value, eq);
    if (value) {
      if (value.startIndex !== eq.endIndex || !WORDISH.has(value.type)) throw new Unsupported('an unusual assignment value');
      this.word(value);
    }
  }

  /** `name=(a b c)`: each element must be a plain word both parsers read alike (no `[k]=v`). */
  private array(value: Node, eq: Node): void {
    const kids = children(value);
    const open = kids[0];
    const close = kids[kids.length - 1];
    if (value.startIndex !== eq.endIndex || open?.type !== '(' || close?.type !== ')' || open === close) throw new Unsupported('an unusual array');
    const items = kids.slice(1, -1);
    this.gaps(items, open.endIndex, close.startIndex);
    for (const item of items) {
      if (!WORDISH.has(item.type)) throw new Unsupported(`\`${item.type}\` in an array`);
      this.word(item);
    }
  }

  protected redirect(node: Node, stmt: StmtShape): void {
    if (!REDIRECTS.has(node.type)) throw new Unsupported(`\`${node.type}\` among redirects`);
    const kids = children(node);
    let fd = '';
    let op = '';
    let word: WordShape | null = null;
    let hdoc: Span | null = null;
    let bodyStart = -1;
    for (const kid of kids) {
      if (kid.type === 'file_descriptor') fd = kid.text;
      else if (!kid.isNamed && !op) op = kid.type;
      else if (kid.type === 'heredoc_start') word = { start: kid.startIndex, end: kid.endIndex, parts: this.parts(kid) };
      else if (kid.type === 'heredoc_body') {
        bodyStart = kid.startIndex;
        this.nested(kid);
      } else if (kid.type === 'heredoc_end') hdoc = { start: bodyStart, end: kid.endIndex };
      else if (WORDISH.has(kid.type) && !word) word = this.word(kid);
      else throw new Unsupported(`\`${kid.type}\` in a redirect`);
    }
    if (op === '>&-' || op === '<&-') {
      // mvdan/sh reads a closing redirect as `>&` with the word `-`.
      word = { start: node.endIndex - 1, end: node.endIndex, parts: [{ start: node.endIndex - 1, end: node.endIndex }] };
      op = op.slice(0, 2);
    }
    if (op === '<<' || op === '<<-') {
      if (!word || !hdoc) throw new Unsupported('an unfinished here-document');
    }
    stmt.redirs.push({ at: node.startIndex, op, fd, word, hdoc });
  }

  protected test(node: Node): void {
    for (const kid of children(node)) {
      if (kid.type === 'regex') {
        // A regex is lexed by rules of its own that mvdan/sh does not report; it is taken
        // as opaque text (the statement's extent is still compared) only when it cannot
        // hold a substitution, the one thing in it that could run code.
        if (OPAQUE_UNSAFE.test(kid.text)) throw new Unsupported('a substitution inside a regular expression in `[[ ]]`');
        continue;
      }
      if (WORDISH.has(kid.type) || kid.type === 'test_operator') this.word(kid);
      else if (kid.isNamed && kid.childCount === 0) throw new Unsupported(`\`${kid.type}\` in a test`);
      else if (kid.isNamed) this.test(kid);
    }
  }

  /** A word: its parts, and the statement lists nested in it. */
  protected word(node: Node): WordShape {
    const shape: WordShape = { start: node.startIndex, end: node.endIndex, parts: this.parts(node) };
    this.words.push(shape);
    this.nested(node);
    return shape;
  }

  protected parts(node: Node): Span[] {
    if (node.type !== 'concatenation') return [{ start: node.startIndex, end: node.endIndex }];
    const kids = children(node);
    for (let i = 1; i < kids.length; i++) if (kids[i]!.startIndex !== kids[i - 1]!.endIndex) throw new Unsupported('a word with a gap');
    return kids.map((k) => ({ start: k.startIndex, end: k.endIndex }));
  }

  /** Command and process substitutions anywhere inside `node` are lists of their own. */
  protected nested(node: Node): void {
    for (const kid of children(node)) {
      if (kid.type === 'command_substitution' || kid.type === 'process_substitution') {
        const kids = children(kid);
        const open = kids[0];
        const close = kids[kids.length - 1];
        if (!open || !close || open === close || open.isNamed || close.isNamed) throw new Unsupported('an unclosed substitution');
        if (open.type === '`' && this.source.slice(open.endIndex, close.startIndex).includes('\\')) throw new Unsupported('a backslash inside backquotes');
        this.list(open.endIndex, close.startIndex, kids.slice(1, -1));
      } else if (kid.type === 'array') throw new Unsupported('an array');
      else this.nested(kid);
    }
  }
}
