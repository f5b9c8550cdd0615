/**
 * Walks the bash parse tree with a positive list of node types. Lists, pipelines,
 * subshells, `{ }` groups, `!`, if/while/until/for are walked part by part (the whole is
 * read-only only if every part is); simple commands go to the program rules; the
 * statements inside `$(...)`, backquotes and `<(...)` are walked with the same rules.
 * `[[ ]]`, `(( ))` and `declare -p` are accepted only in forms that cannot assign or
 * evaluate unknown values. Background jobs (`&`), function definitions, `case`,
 * C-style `for`, other declarations and ERROR nodes are refused. Anonymous tokens are
 * checked too, so syntax the walker has not been taught cannot slip through as an
 * unexpected child.
 */
import type { Node } from 'web-tree-sitter';
import { checkAssignable } from './assignments';
import { deny } from './deny';
import { own } from './options';
import { classifyWords } from './programs/registry';
import type { CommandContext } from './programs/types';
import { checkTestWords } from './programs/coreutils';
import { checkRedirect, type RedirectChecks } from './redirects';
import { checkArithmetic, evalWord, quote, type ShellWord, type SubstitutionWalker } from './words';

/** Tokens that only separate or group the statements around them. */
const SEPARATORS = new Set([';', '&&', '||', '|', '|&', '\n', '(', ')', '{', '}', '!', 'do', 'done', 'then', 'fi', 'elif', 'else', 'if', 'while', 'until']);
const CONTAINERS = new Set(['program', 'list', 'pipeline', 'subshell', 'compound_statement', 'negated_command', 'do_group', 'if_statement', 'elif_clause', 'else_clause', 'while_statement']);
const WORDS = new Set(['word', 'string', 'raw_string', 'number', 'concatenation', 'simple_expansion', 'expansion', 'ansi_c_string', 'brace_expression', 'command_substitution', 'process_substitution', 'arithmetic_expansion', 'translated_string']);

const REFUSED: Readonly<Record<string, string>> = {
  function_definition: 'defining a function is not allowed; run the commands directly',
  unset_command: '`unset` is not allowed; leave it out',
  case_statement: '`case` is not supported by the read-only checker; use separate commands or `[ ... ] &&`',
  c_style_for_statement: 'C-style `for ((...))` uses arithmetic, which is not allowed; use `for x in ...`',
  ERROR: 'the command could not be parsed; fix the shell syntax',
};

/**
 * `declare -p [NAME...]`, `declare -F`, `typeset -f`: printing forms only. Every other
 * declaration (`export`, `local`, `readonly`, attributes, any `NAME=value`) changes
 * variables, and `-i` makes later assignments arithmetic.
 */
function declarationCommand(node: Node): void {
  const keyword = node.child(0)?.type;
  const printing = (keyword === 'declare' || keyword === 'typeset') && node.childCount > 1;
  const rest = node.children.slice(1);
  const ok =
    printing &&
    rest.some((c) => c?.type === 'word' && /^-[pfF]+$/.test(c.text)) &&
    rest.every((c) => (c?.type === 'word' && /^-[pfF]+$/.test(c.text)) || (c?.type === 'variable_name' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(c.text)));
  if (!ok) deny('`export`/`declare`/`local`/`readonly`/`typeset` change variables and attributes; only `declare -p` and `declare -F` (printing) are allowed');
}

/** `(( ... ))`: like `$(( ... ))`, only numbers and operators. */
function checkArithmeticCommand(node: Node): void {
  const text = node.text;
  if (!text.startsWith('((') || !text.endsWith('))') || node.child(node.childCount - 1)?.type !== '))') {
    deny(`arithmetic command ${quote(text)} is not supported; compute values yourself`);
  }
  checkArithmetic(node, text.slice(2, -2));
}

export class TreeWalker {
  private readonly ctx: CommandContext;
  private readonly redirects: RedirectChecks;
  /** How many `$(...)`/`<(...)` levels deep the walk is. */
  private substitutionDepth = 0;
  /** Walks the statements inside a substitution with the same rules. */
  private readonly inner: SubstitutionWalker = (node) => {
    if (this.substitutionDepth >= 8) deny('substitutions are nested too deeply');
    this.substitutionDepth++;
    try {
      this.substitutionStatement(node);
    } finally {
      this.substitutionDepth--;
    }
  };

  /** `source` is the command text the tree was parsed from (redirect checks re-read it); `withheld`: programs refused for this call. */
  constructor(source: string, withheld: ReadonlySet<string> = new Set()) {
    this.ctx = { run: classifyWords, exec: false, xargs: false, depth: 0, withheld };
    this.redirects = {
      source,
      walk: (n) => this.statement(n),
      word: (n) => evalWord(n, this.inner),
      insideSubstitution: () => this.substitutionDepth > 0,
    };
  }

  /** A statement inside `$(...)`; `$(< file)` is bash's shorthand for `$(cat file)`. */
  private substitutionStatement(node: Node): void {
    if (node.type === 'file_redirect') {
      if (checkRedirect(node, this.redirects).length > 0) deny(`unsupported substitution ${quote(node.text)}`);
      return;
    }
    this.statement(node);
  }

  statement(node: Node): void {
    if (node.isMissing) deny('the command is incomplete (a token is missing); fix the shell syntax');
    const refused = own(REFUSED, node.type);
    if (refused) deny(refused);
    switch (node.type) {
      case 'comment':
        // Where a comment ends inside `$(...)` is a fine point parsers disagree on.
        if (this.substitutionDepth > 0) deny('comments inside $(...) are not allowed; leave them out');
        return;
      case 'command':
        return this.command(node, []);
      case 'redirected_statement':
        return this.redirected(node);
      case 'variable_assignment':
        return this.assignment(node);
      case 'declaration_command':
        return declarationCommand(node);
      case 'variable_assignments':
        return this.children(node, (c) => this.assignment(c));
      case 'test_command':
        return this.test(node);
      case 'for_statement':
        return this.forLoop(node);
      case 'compound_statement':
        if (node.child(0)?.type === '((') return checkArithmeticCommand(node);
        return this.container(node);
      default:
        if (CONTAINERS.has(node.type)) return this.container(node);
        deny(`unsupported shell syntax (${node.type}) in ${quote(node.text)}`);
    }
  }

  private container(node: Node): void {
    this.children(node, (c) => this.statement(c));
  }

  /** Visit named children; anonymous children must be known separators. */
  private children(node: Node, visit: (child: Node) => void): void {
    for (const child of node.children) {
      if (!child) continue;
      if (child.isNamed) visit(child);
      else if (child.type === '&') deny('running a command in the background (`&`) leaves a process behind; run it in the foreground');
      else if (!SEPARATORS.has(child.type)) deny(`unsupported shell syntax \`${child.type}\` in ${quote(node.text)}`);
    }
  }

  private redirected(node: Node): void {
    const body = node.childForFieldName('body');
    if (!body) deny('a redirection without a command is not allowed');
    const extras: Node[] = [];
    for (let i = 0; i < node.childCount; i++) {
      const field = node.fieldNameForChild(i);
      if (field === 'body') continue;
      if (field !== 'redirect') deny(`unsupported shell syntax in ${quote(node.text)}`);
      extras.push(...checkRedirect(node.child(i)!, this.redirects));
    }
    if (body.type === 'command') return this.command(body, extras);
    // Words after a redirect belong to the command it is attached to; on a group or a
    // list that attachment is unclear, so refuse.
    if (extras.length > 0) deny(`words after a redirection in ${quote(node.text)}; put arguments before redirections`);
    this.statement(body);
  }

  /** A simple command; `extraArgs` are words the parser hung on a redirect. */
  private command(node: Node, extraArgs: readonly Node[]): void {
    let name: Node | undefined;
    const args: Node[] = [...extraArgs];
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i)!;
      const field = node.fieldNameForChild(i);
      if (field === 'name') name = child;
      else if (field === 'argument') args.push(child);
      else if (field === 'redirect') args.push(...checkRedirect(child, this.redirects));
      else if (child.type === 'variable_assignment') this.assignment(child, this.isRead(node));
      else deny(`unsupported shell syntax \`${child.type}\` in ${quote(node.text)}`);
    }
    if (!name) deny('a command without a program name is not allowed');
    if (name.childCount !== 1) deny(`unsupported command name ${quote(name.text)}`);
    args.sort((a, b) => a.startIndex - b.startIndex);
    const words = [evalWord(name.child(0)!, this.inner), ...args.map((a) => this.word(a))];
    classifyWords(words, this.ctx);
  }

  private word(node: Node): ShellWord {
    if (node.type === '$') deny('locale strings ($"...") are not allowed; use ordinary quotes');
    if (!WORDS.has(node.type)) deny(`unsupported argument syntax (${node.type}) in ${quote(node.text)}`);
    return evalWord(node, this.inner);
  }

  /** Whether a command node runs the `read` builtin (by its literal name). */
  private isRead(command: Node): boolean {
    const name = command.childForFieldName('name');
    return name?.text === 'read';
  }

  /**
   * `NAME=value`. `forRead`: a prefix of `read`, where IFS only tells read how to split
   * the line (bash restores it after the builtin), so `IFS=, read -r a b` is allowed.
   */
  private assignment(node: Node, forRead = false): void {
    if (node.type !== 'variable_assignment') deny(`unsupported assignment ${quote(node.text)}`);
    const name = node.childForFieldName('name');
    if (name?.type !== 'variable_name') deny(`assignment ${quote(node.text)} is not allowed (only plain variable names)`);
    if (!(forRead && name.text === 'IFS')) checkAssignable(name.text);
    const value = node.childForFieldName('value');
    if (value?.type === 'array') return this.arrayValue(node, value);
    if (value) this.word(value);
    for (const child of node.children) {
      if (child && child.id !== name.id && child.id !== value?.id && child.type !== '=' && child.type !== '+=') {
        deny(`unsupported assignment ${quote(node.text)}`);
      }
    }
  }

  /**
   * `name=(a b c)`: plain elements only. A literal `[key]=value` element evaluates `key`
   * as an arithmetic subscript, so it is refused, as is `+=` appending.
   */
  private arrayValue(assignment: Node, array: Node): void {
    if (assignment.children.some((c) => c?.type === '+=')) deny('appending to an array is not allowed; leave it out');
    for (const child of array.children) {
      if (!child) continue;
      if (!child.isNamed) {
        if (child.type !== '(' && child.type !== ')') deny(`unsupported array syntax in ${quote(array.text)}`);
        continue;
      }
      if (child.text.startsWith('[') || !WORDS.has(child.type)) deny(`array element ${quote(child.text)} is not allowed (a [key]= element evaluates its subscript)`);
      this.word(child);
    }
  }

  /** `[ ... ]`: flatten the parsed expression back into the words `[` receives. */
  private test(node: Node): void {
    if (node.child(0)?.type === '[[') return this.doubleBracket(node);
    if (node.child(0)?.type !== '[') deny(`unsupported test syntax in ${quote(node.text)}`);
    const words: ShellWord[] = [];
    const flatten = (n: Node): void => {
      for (const child of n.children) {
        if (!child) continue;
        if (child.type === 'unary_expression' || child.type === 'binary_expression') flatten(child);
        else if (child.type === 'test_operator' || ['!', '=', '==', '!='].includes(child.type)) words.push({ kind: 'static', value: child.text, text: child.text });
        else if (child.type === '<' || child.type === '>') deny('`<` and `>` inside `[ ]` are redirections; use `-lt`/`-gt` or quote them');
        else if (WORDS.has(child.type)) words.push(evalWord(child, this.inner));
        else deny(`unsupported test syntax \`${child.type}\` in ${quote(node.text)}`);
      }
    };
    for (let i = 1; i < node.childCount - 1; i++) {
      const child = node.child(i)!;
      if (child.type === 'unary_expression' || child.type === 'binary_expression') flatten(child);
      else if (WORDS.has(child.type)) words.push(evalWord(child, this.inner));
      else deny(`unsupported test syntax \`${child.type}\` in ${quote(node.text)}`);
    }
    if (node.child(node.childCount - 1)?.type !== ']') deny('`[` must end with `]`');
    checkTestWords(words, false);
  }

  /**
   * `[[ ... ]]`: file tests, string and pattern comparisons, `=~`, `&&`, `||`, `!`, `( )`.
   * Its arithmetic comparisons (-eq, -lt...) evaluate both sides as arithmetic, names and
   * subscripts included, and `-v`/`-R` evaluate subscripts, so those need literal numbers
   * or are refused. Pattern and regex operands are taken as text only when they hold no
   * expansion tree-sitter might have left unparsed.
   */
  private doubleBracket(node: Node): void {
    if (node.child(node.childCount - 1)?.type !== ']]' || node.childCount !== 3) deny(`unsupported \`[[\` syntax in ${quote(node.text)}`);
    this.condition(node.child(1)!);
  }

  private condition(node: Node): void {
    const kids = node.children.filter((c): c is Node => c !== null);
    const op = kids[1];
    switch (node.type) {
      case 'parenthesized_expression':
        if (kids.length !== 3 || kids[0]!.type !== '(' || kids[2]!.type !== ')') deny(`unsupported \`[[\` syntax in ${quote(node.text)}`);
        return this.condition(kids[1]!);
      case 'unary_expression':
        if (kids.length !== 2) deny(`unsupported \`[[\` syntax in ${quote(node.text)}`);
        if (kids[0]!.type === '!') return this.condition(kids[1]!);
        if (kids[0]!.type !== 'test_operator' || !/^-[a-zA-Z]$/.test(kids[0]!.text)) deny(`unsupported \`[[\` syntax in ${quote(node.text)}`);
        if (/^-[vR]$/.test(kids[0]!.text)) deny(`\`[[ ${kids[0]!.text} ]]\` evaluates array subscripts, which can run code; use -n "$name" instead`);
        this.conditionOperand(kids[1]!);
        return;
      case 'binary_expression': {
        if (kids.length !== 3 || !op) deny(`unsupported \`[[\` syntax in ${quote(node.text)}`);
        if (op.type === '&&' || op.type === '||') {
          this.condition(kids[0]!);
          return this.condition(kids[2]!);
        }
        if (op.type === 'test_operator' && /^-(eq|ne|lt|le|gt|ge)$/.test(op.text)) {
          for (const side of [kids[0]!, kids[2]!]) {
            const w = this.conditionOperand(side);
            if (w.kind !== 'static' || !/^-?[0-9]+$/.test(w.value)) {
              deny(`\`${op.text}\` inside [[ ]] evaluates its operands as arithmetic (names, subscripts, $(...)); use [ ... ] for numeric tests`);
            }
          }
          return;
        }
        if (!['==', '=', '!=', '<', '>', '=~'].includes(op.type) && !(op.type === 'test_operator' && /^-(nt|ot|ef)$/.test(op.text))) {
          deny(`unsupported \`[[\` operator in ${quote(node.text)}`);
        }
        this.conditionOperand(kids[0]!);
        this.conditionOperand(kids[2]!);
        return;
      }
      default:
        this.conditionOperand(node);
    }
  }

  private conditionOperand(node: Node): ShellWord {
    if (node.type === 'extglob_pattern' || node.type === 'regex') {
      // Leaves: bash still expands `$x`, `$(...)` and backquotes in them.
      if (node.childCount !== 0 || /[`'"]|\$[^)|]|<\(|>\(/.test(node.text)) deny(`pattern ${quote(node.text)} in [[ ]] must be plain text; quote expansions separately`);
      return { kind: 'static', value: node.text, text: node.text };
    }
    if (!WORDS.has(node.type)) deny(`unsupported \`[[\` operand in ${quote(node.text)}`);
    return evalWord(node, this.inner);
  }

  private forLoop(node: Node): void {
    if (node.child(0)?.type !== 'for') deny('`select` is interactive; use `for x in ...`');
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i)!;
      const field = node.fieldNameForChild(i);
      if (field === 'variable') checkAssignable(child.text);
      else if (field === 'value') this.word(child);
      else if (field === 'body') this.statement(child);
      else if (child.isNamed || !['for', 'in', ';', '\n'].includes(child.type)) deny(`unsupported for-loop syntax in ${quote(node.text)}`);
    }
  }
}
