/**
 * Reads the statements of a tree-sitter-bash tree into the parser-agreement shape
 * (agreement-shape.ts): simple commands, pipelines and lists, groups, subshells,
 * if/while/for, tests and declarations. Where tree-sitter nests a construct differently
 * from bash but means the same (redirects after a pipeline, `!` before one, a pipeline
 * after a here-document), it is shaped the way bash runs it; anything else unknown is
 * refused with {@link Unsupported}.
 */
import type { Node } from 'web-tree-sitter';
import { children, COMPOUND, REDIRECTS, SEPARATORS, ShapeBuilder, Unsupported, WORDISH, type StmtShape } from './agreement-shape';

/** Reads a whole tree: `new ShapeReader(source).read(tree.rootNode)`. */
export class ShapeReader extends ShapeBuilder {
  protected override command(node: Node, stmt: StmtShape): void {
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
        if (open.type === '((') {
          // An arithmetic command: compared by its extent only, and only when it is numbers
          // and operators (no names, expansions or substitutions for the parsers to read apart).
          if (close.type !== '))' || !/^[\s0-9+\-*/%<>=!&|^~?:(),]*$/.test(this.source.slice(open.endIndex, close.startIndex))) {
            throw new Unsupported('an arithmetic command with names or expansions');
          }
          return;
        }
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
}
