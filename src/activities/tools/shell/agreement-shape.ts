/**
 * The parser-agreement check's normalized "shape", read off a tree-sitter-bash tree.
 *
 * sh-syntax 0.7.0 (mvdan/sh) reports only a file's top-level statements: each one's
 * start, its command's extent, `;`/`&`, `!`, and its redirects (operator, fd, target word
 * with the extents of the word's parts). So the shape is expressed in those terms, for
 * every statement list in the command, nested ones included: the bodies of `$(…)`,
 * backquotes, `<(…)`, subshells, groups, if/while/for, and each element of a pipeline or
 * `&&`/`||` list is a list of its own that sh-syntax is asked to parse separately (see
 * agreement.ts). Every word (arguments, assignment values, redirect targets, `for` items,
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

const WORDISH = new Set(['word', 'string', 'raw_string', 'ansi_c_string', 'translated_string', 'concatenation', 'simple_expansion', 'expansion', 'command_substitution', 'process_substitution', 'arithmetic_expansion', 'number', 'brace_expression']);
const REDIRECTS = new Set(['file_redirect', 'heredoc_redirect', 'herestring_redirect']);
const SEPARATORS = new Set([';', '&', '\n']);
const COMPOUND = new Set(['if_statement', 'while_statement', 'for_statement', 'do_group', 'elif_clause', 'else_clause']);
// The whitespace bash skips between tokens; a backslash-newline joins lines and separates nothing.
const BLANK_GAP = /^(?:[ \t\n]|\\\n)*$/;

function children(node: Node): Node[] {
  const out: Node[] = [];
  for (let i = 0; i < node.childCount; i++) out.push(node.child(i)!);
  return out;
}

/** Builds the shape of one tree; `source` is the text tree-sitter parsed. */
export class ShapeReader {
  readonly lists: ListShape[] = [];
  readonly words: WordShape[] = [];

  constructor(private readonly source: string) {}

  read(root: Node): Shape {
    this.list(0, this.source.length, children(root));
    return { lists: this.lists, words: this.words };
  }

  /** Statements among `nodes` form one list, parsed on its own as source[start, end). */
  private list(start: number, end: number, nodes: Node[], tail?: Span): void {
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
  private gaps(nodes: Node[], from: number, to: number): void {
    let at = from;
    for (const node of nodes) {
      this.gap(at, node.startIndex);
      at = node.endIndex;
    }
    this.gap(at, to);
  }

  private gap(from: number, to: number): void {
    if (to < from) throw new Unsupported('overlapping nodes');
    if (!BLANK_GAP.test(this.source.slice(from, to))) throw new Unsupported(`unparsed text ${JSON.stringify(this.source.slice(from, to))}`);
  }

  /** Words side by side must be split by a real blank, not only a backslash-newline. */
  private split(a: Node, b: Node): void {
    const between = this.source.slice(a.endIndex, b.startIndex).replace(/\\\n/g, '');
    if (!/[ \t\n]/.test(between)) throw new Unsupported('two words joined by a line continuation');
  }

  private stmt(node: Node): StmtShape {
    const stmt: StmtShape = { start: node.startIndex, cmd: null, semicolon: null, negated: false, background: false, redirs: [] };
    this.command(node, stmt);
    stmt.redirs.sort((a, b) => a.at - b.at);
    return stmt;
  }

  private command(node: Node, stmt: StmtShape): void {
    const kids = children(node);
    switch (node.type) {
      case 'redirected_statement': {
        this.gaps(kids, node.startIndex, node.endIndex);
        if (this.continued(node, kids, stmt)) return;
        if ((kids[0]?.type === 'pipeline' || kids[0]?.type === 'list') && node.fieldNameForChild(0) === 'body') return this.pipedRedirects(node, kids, stmt);
        kids.forEach((kid, i) => {
          if (node.fieldNameForChild(i) === 'body') this.command(kid, stmt);
          else this.redirect(kid, stmt);
        });
        return;
      }
      case 'negated_command': {
        this.gaps(kids, node.startIndex, node.endIndex);
        if (kids.length !== 2 || kids[0]!.type !== '!') throw new Unsupported('a negation of several commands');
        stmt.negated = true;
        this.command(kids[1]!, stmt);
        return;
      }
      case 'command':
        return this.simple(node, kids, stmt);
      case 'file_redirect':
      case 'herestring_redirect':
        // A statement of redirects only, as in `$(< README.md)`.
        return this.redirect(node, stmt);
      case 'variable_assignment':
      case 'variable_assignments':
        stmt.cmd = { start: node.startIndex, end: node.endIndex };
        for (const kid of node.type === 'variable_assignment' ? [node] : kids) this.assignment(kid);
        return;
      case 'pipeline':
      case 'list':
        stmt.cmd = { start: node.startIndex, end: node.endIndex };
        if (this.negatedPipeline(node)) stmt.negated = true;
        this.gaps(kids, node.startIndex, node.endIndex);
        for (const kid of kids) {
          if (!kid.isNamed) {
            if (!['|', '|&', '&&', '||'].includes(kid.type)) throw new Unsupported(`\`${kid.type}\` in a pipeline`);
            continue;
          }
          this.list(kid.startIndex, kid.endIndex, [kid]);
        }
        return;
      case 'subshell':
      case 'compound_statement': {
        stmt.cmd = { start: node.startIndex, end: node.endIndex };
        const open = kids[0];
        const close = kids[kids.length - 1];
        if (!open || !close || open.isNamed || close.isNamed) throw new Unsupported(`an unclosed ${node.type}`);
        this.list(open.endIndex, close.startIndex, kids.slice(1, -1));
        return;
      }
      case 'test_command':
        stmt.cmd = { start: node.startIndex, end: node.endIndex };
        this.test(node);
        return;
      case 'declaration_command':
        stmt.cmd = { start: node.startIndex, end: node.endIndex };
        this.gaps(kids, node.startIndex, node.endIndex);
        for (const kid of kids) {
          if (kid.type === 'variable_assignment') this.assignment(kid);
          else if (WORDISH.has(kid.type) || kid.type === 'variable_name') this.word(kid);
          else if (kid.isNamed || !['declare', 'typeset', 'export', 'readonly', 'local'].includes(kid.type)) throw new Unsupported(`\`${kid.type}\` in a declaration`);
        }
        return;
      default:
        if (COMPOUND.has(node.type)) {
          stmt.cmd = { start: node.startIndex, end: node.endIndex };
          this.compound(node, kids);
          return;
        }
        throw new Unsupported(`the construct \`${node.type}\``);
    }
  }

  /**
   * `cat <<EOF | grep x` (or `&& …`): tree-sitter hangs the rest of the line inside the
   * here-document redirect; bash, and mvdan/sh, read a pipeline or list whose first
   * element is `cat <<EOF` with its body. Shape it that way: the statement is that
   * pipeline or list, its first element is the line up to the operator plus the body (a
   * list with a `tail`), and each later element is a list of its own.
   */
  private continued(node: Node, kids: Node[], stmt: StmtShape): boolean {
    const heredoc = kids.find((k) => k.type === 'heredoc_redirect');
    if (!heredoc) return false;
    const parts = children(heredoc);
    const opAt = parts.findIndex((k, i) => i > 1 && (['|', '|&', '&&', '||'].includes(k.type) || ['pipeline', 'list'].includes(k.type)));
    if (opAt < 0) return false;
    if (kids[kids.length - 1] !== undefined && kids[kids.length - 1]!.startIndex !== heredoc.startIndex) throw new Unsupported('a here-document followed by more redirects');
    const body = parts.find((k) => k.type === 'heredoc_body');
    const end = parts.find((k) => k.type === 'heredoc_end');
    const rest = parts.slice(opAt).filter((k) => k.type !== 'heredoc_body' && k.type !== 'heredoc_end');
    if (!body || !end || this.source[body.startIndex - 1] !== '\n') throw new Unsupported('an unfinished here-document');
    const last = rest[rest.length - 1]!;
    stmt.cmd = { start: node.startIndex, end: last.endIndex };
    this.gap(last.endIndex, body.startIndex);
    // The first element: everything before the operator, then the body.
    const first: StmtShape = { start: node.startIndex, cmd: null, semicolon: null, negated: false, background: false, redirs: [] };
    kids.forEach((kid, i) => {
      if (node.fieldNameForChild(i) === 'body') this.command(kid, first);
      else if (kid.startIndex !== heredoc.startIndex) this.redirect(kid, first);
    });
    const op = parts[opAt]!;
    const word = parts[1]!;
    first.redirs.push({ at: heredoc.startIndex, op: parts[0]!.type, fd: '', word: { start: word.startIndex, end: word.endIndex, parts: this.parts(word) }, hdoc: { start: body.startIndex, end: end.endIndex } });
    first.redirs.sort((a, b) => a.at - b.at);
    this.nested(body);
    this.lists.push({ start: node.startIndex, end: op.startIndex, stmts: [first], tail: { start: body.startIndex - 1, end: end.endIndex } });
    for (const kid of rest) {
      if (kid.type === 'pipeline' && !kid.child(0)!.isNamed) {
        // `| grep x | wc`: the operator leads, then the remaining elements.
        for (const element of children(kid)) if (element.isNamed) this.list(element.startIndex, element.endIndex, [element]);
      } else if (kid.isNamed) this.list(kid.startIndex, kid.endIndex, [kid]);
    }
    return true;
  }

  /**
   * `a | b 2>/dev/null`, `a && b >&2`: tree-sitter hangs trailing redirects on the whole
   * pipeline or list, but bash (and mvdan/sh) give them to its last command. Both read
   * the same words and redirects, only tree-sitter's nesting is off, so shape it as bash
   * runs it: the redirects go to the innermost last element.
   */
  private pipedRedirects(node: Node, kids: Node[], stmt: StmtShape): void {
    stmt.cmd = { start: node.startIndex, end: node.endIndex };
    this.hang(kids[0]!, kids.slice(1), node.endIndex);
  }

  private hang(body: Node, redirects: Node[], end: number): void {
    const parts = children(body);
    this.gaps(parts, body.startIndex, body.endIndex);
    for (const kid of parts) if (!kid.isNamed && !['|', '|&', '&&', '||'].includes(kid.type)) throw new Unsupported(`\`${kid.type}\` in a pipeline`);
    const elements = parts.filter((k) => k.isNamed);
    const last = elements[elements.length - 1]!;
    for (const element of elements.slice(0, -1)) this.list(element.startIndex, element.endIndex, [element]);
    const tail: StmtShape = { start: last.startIndex, cmd: null, semicolon: null, negated: false, background: false, redirs: [] };
    this.lists.push({ start: last.startIndex, end, stmts: [tail] });
    if (last.type === 'pipeline' || last.type === 'list') {
      tail.cmd = { start: last.startIndex, end };
      tail.negated = this.negatedPipeline(last);
      this.hang(last, redirects, end);
      return;
    }
    this.command(last, tail);
    for (const kid of redirects) this.redirect(kid, tail);
    tail.redirs.sort((a, b) => a.at - b.at);
  }

  /** `! a | b`: tree-sitter negates `a`, bash (and mvdan/sh) the whole pipeline. */
  private negatedPipeline(node: Node): boolean {
    if (node.type !== 'pipeline') return false;
    const first = node.child(0);
    const body = first?.type === 'redirected_statement' ? first.child(0) : first;
    return body?.type === 'negated_command';
  }

  private simple(node: Node, kids: Node[], stmt: StmtShape): void {
    this.gaps(kids, node.startIndex, node.endIndex);
    let first = -1;
    let last = -1;
    let previous: Node | undefined;
    for (const kid of kids) {
      if (REDIRECTS.has(kid.type)) {
        this.redirect(kid, stmt);
        continue;
      }
      if (kid.type === 'variable_assignment') this.assignment(kid);
      else if (kid.type === 'command_name') {
        const name = children(kid);
        if (name.length !== 1 || !WORDISH.has(name[0]!.type)) throw new Unsupported('an unusual command name');
        this.word(name[0]!);
      } else if (WORDISH.has(kid.type)) this.word(kid);
      else throw new Unsupported(`\`${kid.type}\` in a command`);
      if (previous) this.split(previous, kid);
      previous = kid;
      if (first < 0) first = kid.startIndex;
      last = kid.endIndex;
    }
    if (first >= 0) stmt.cmd = { start: first, end: last };
  }

  private assignment(node: Node): void {
    if (node.type !== 'variable_assignment') throw new Unsupported(`\`${node.type}\` among assignments`);
    const kids = children(node);
    const [name, eq, value] = kids;
    if (!name || name.type !== 'variable_name' || !eq || (eq.type !== '=' && eq.type !== '+=') || kids.length > 3) throw new Unsupported('an unusual assignment');
    if (name.endIndex !== eq.startIndex) throw new Unsupported('an unusual assignment');
    if (value) {
      if (value.startIndex !== eq.endIndex || !WORDISH.has(value.type)) throw new Unsupported('an array or unusual assignment value');
      this.word(value);
    }
  }

  private redirect(node: Node, stmt: StmtShape): void {
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

  private test(node: Node): void {
    for (const kid of children(node)) {
      if (kid.type === 'regex') throw new Unsupported('a regular expression in `[[ ]]`');
      if (WORDISH.has(kid.type) || kid.type === 'test_operator') this.word(kid);
      else if (kid.isNamed && kid.childCount === 0) throw new Unsupported(`\`${kid.type}\` in a test`);
      else if (kid.isNamed) this.test(kid);
    }
  }

  private compound(node: Node, kids: Node[]): void {
    let run: Node[] = [];
    let runStart = node.startIndex;
    this.gaps(kids, node.startIndex, node.endIndex);
    const flush = (end: number) => {
      if (run.some((n) => n.isNamed && n.type !== 'comment')) this.list(runStart, end, run);
      run = [];
    };
    for (const kid of kids) {
      if (kid.isNamed && kid.type !== 'comment' && (COMPOUND.has(kid.type) || (node.type === 'for_statement' && kid.type !== 'do_group'))) {
        flush(kid.startIndex);
        if (COMPOUND.has(kid.type)) this.compound(kid, children(kid));
        else if (WORDISH.has(kid.type) || kid.type === 'variable_name') this.word(kid);
        else throw new Unsupported(`\`${kid.type}\` in a for loop`);
        runStart = kid.endIndex;
      } else if (!kid.isNamed && !SEPARATORS.has(kid.type)) {
        flush(kid.startIndex);
        runStart = kid.endIndex;
      } else run.push(kid);
    }
    flush(node.endIndex);
  }

  /** A word: its parts, and the statement lists nested in it. */
  private word(node: Node): WordShape {
    const shape: WordShape = { start: node.startIndex, end: node.endIndex, parts: this.parts(node) };
    this.words.push(shape);
    this.nested(node);
    return shape;
  }

  private parts(node: Node): Span[] {
    if (node.type !== 'concatenation') return [{ start: node.startIndex, end: node.endIndex }];
    const kids = children(node);
    for (let i = 1; i < kids.length; i++) if (kids[i]!.startIndex !== kids[i - 1]!.endIndex) throw new Unsupported('a word with a gap');
    return kids.map((k) => ({ start: k.startIndex, end: k.endIndex }));
  }

  /** Command and process substitutions anywhere inside `node` are lists of their own. */
  private nested(node: Node): void {
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
