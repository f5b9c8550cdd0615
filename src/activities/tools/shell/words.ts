/**
 * Turns one shell word (a parse-tree node) into what bash would pass to the program,
 * or says it cannot be known statically. Quote removal is done here, including exact
 * decoding of `$'...'` strings. Command and process substitutions are allowed only when
 * the caller can walk their inner statements with the same rules (their result is then
 * unknown text, like a variable's); arithmetic expansion only over numeric literals
 * (a name there is evaluated, and its value can hold `a[$(cmd)]`); parameter operators
 * such as `${x:=..}`, `${x@P}` or `${!x}` are refused outright.
 *
 * A word whose value depends on the environment or the file system (a variable, a
 * glob, brace expansion, a tilde) is `dynamic`; rules then only know whether it could
 * start with `-` (be read as an option) and whether it could become several words.
 */
import type { Node } from 'web-tree-sitter';
import { deny } from './deny';
import { checkArithmetic, checkExpansion, checkPlainExpansion, decodeAnsiC } from './expansions';
import { quote } from './quote';

export { checkArithmetic, decodeAnsiC, quote };

/** A word fully known after quote removal. */
export interface StaticWord {
  readonly kind: 'static';
  readonly value: string;
  /** Source text, for messages. */
  readonly text: string;
}

/** A word whose value is only partly known. */
export interface DynamicWord {
  readonly kind: 'dynamic';
  /** Literal text every resulting word starts with ('' when unknown). */
  readonly prefix: string;
  /** Could expand to several words (glob, brace expansion, unquoted variable, "$@"). */
  readonly multi: boolean;
  /** Could expand to something starting with `-`. */
  readonly optionLike: boolean;
  /**
   * Holds an unquoted expansion, so word splitting can turn it into any number of
   * arbitrary words (`-t$x` with x='a -o out'); a glob's words all share the prefix.
   */
  readonly split: boolean;
  readonly text: string;
}

export type ShellWord = StaticWord | DynamicWord;

/** Whether the word may become several arbitrary words (see {@link DynamicWord.split}). */
export function maySplit(word: ShellWord): boolean {
  return word.kind === 'dynamic' && word.split;
}

/** Whether a program could see this word as an option (before any `--`). */
export function mayBeOption(word: ShellWord): boolean {
  return word.kind === 'static' ? word.value.startsWith('-') && word.value !== '-' : word.optionLike;
}


/**
 * Walks the statements inside `$(...)`, backquotes, `<(...)` and `>(...)`; without one,
 * substitutions are refused.
 */
export type SubstitutionWalker = (statement: Node) => void;

type Piece =
  | { readonly literal: string; readonly quoted: boolean }
  | { readonly dynamic: true; readonly quoted: boolean; readonly multi: boolean };

const SUBSTITUTION_HINT = 'it runs a command while the line is expanded; run the inner command on its own instead';

/** Evaluate a word node (argument, command name, redirect target, assignment value). */
export function evalWord(node: Node, inner?: SubstitutionWalker): ShellWord {
  const pieces: Piece[] = [];
  collect(node, pieces, false, inner);
  return assemble(pieces, node.text);
}

function collect(node: Node, out: Piece[], inConcat: boolean, inner: SubstitutionWalker | undefined): void {
  switch (node.type) {
    case 'word':
    case 'number':
      leaf(node);
      unquoted(node.text, out);
      return;
    case 'raw_string':
      leaf(node);
      out.push({ literal: node.text.slice(1, -1), quoted: true });
      return;
    case 'string':
      doubleQuoted(node, out, inner);
      return;
    case 'ansi_c_string':
      leaf(node);
      out.push({ literal: decodeAnsiC(node.text), quoted: true });
      return;
    case 'simple_expansion':
      checkPlainExpansion(node);
      out.push({ dynamic: true, quoted: false, multi: true });
      return;
    case 'expansion':
      checkExpansion(node, (n) => evalWord(n, inner));
      out.push({ dynamic: true, quoted: false, multi: true });
      return;
    case 'brace_expression':
      out.push({ dynamic: true, quoted: false, multi: true });
      return;
    case 'concatenation':
      if (inConcat) deny(`unsupported word syntax in ${quote(node.text)}`);
      for (let i = 0; i < node.childCount; i++) {
        const child = node.child(i)!;
        // tree-sitter leaves a bare `$` as its own token; it is literal only at the end
        // of a word (`a$`). Before a quote it starts a $"..." locale string.
        if (child.type === '$' && !child.isNamed && i === node.childCount - 1) out.push({ literal: '$', quoted: false });
        else collect(child, out, true, inner);
      }
      return;
    case 'command_substitution':
      substitution(node, inner);
      // Unquoted, the output is split and globbed like an unquoted variable.
      out.push({ dynamic: true, quoted: false, multi: true });
      return;
    case 'process_substitution':
      substitution(node, inner);
      // Becomes a /dev/fd/N path: one word, never an option.
      out.push({ literal: '/dev/fd/', quoted: true }, { dynamic: true, quoted: true, multi: false });
      return;
    case 'arithmetic_expansion':
      checkArithmetic(node);
      // Digits and a sign only (IFS cannot be changed), so one word that may start with `-`.
      out.push({ dynamic: true, quoted: true, multi: false });
      return;
    case 'translated_string':
      return deny(`locale string ${quote(node.text)} is not allowed; use ordinary quotes`);
    default:
      return deny(`unsupported shell syntax (${node.type}) in ${quote(node.text)}; use plain words and quotes`);
  }
}

function leaf(node: Node): void {
  if (node.childCount !== 0) deny(`unsupported word syntax in ${quote(node.text)}`);
}

/** Unquoted text: backslash escapes make a character literal; the rest stays active. */
function unquoted(text: string, out: Piece[]): void {
  if (/[^\x20-\x7e\t]/.test(text)) {
    deny(`unquoted non-ASCII or control character in ${quote(text)}; put the text in quotes`);
  }
  let active = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      if (active) out.push({ literal: active, quoted: false });
      active = '';
      out.push({ literal: text[++i]!, quoted: true });
    } else {
      active += c;
    }
  }
  if (active) out.push({ literal: active, quoted: false });
}

function doubleQuoted(node: Node, out: Piece[], inner: SubstitutionWalker | undefined): void {
  const last = node.childCount - 1;
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i)!;
    if ((i === 0 || i === last) && child.type === '"') continue;
    switch (child.type) {
      case 'string_content':
        out.push({ literal: unescapeDoubleQuoted(child.text), quoted: true });
        break;
      case '$':
        out.push({ literal: '$', quoted: true });
        break;
      case 'simple_expansion':
      case 'expansion': {
        if (child.type === 'expansion') checkExpansion(child, (n) => evalWord(n, inner));
        else checkPlainExpansion(child);
        // "$@" (and "${@}") still becomes one word per positional parameter.
        const multi = child.namedChildren.some((c) => c?.type === 'special_variable_name' && c.text === '@');
        out.push({ dynamic: true, quoted: true, multi });
        break;
      }
      case 'command_substitution':
        substitution(child, inner);
        out.push({ dynamic: true, quoted: true, multi: false });
        break;
      case 'arithmetic_expansion':
        checkArithmetic(child);
        out.push({ dynamic: true, quoted: true, multi: false });
        break;
      default:
        deny(`unsupported syntax inside quotes: ${quote(child.text)}`);
    }
  }
}

/** Inside double quotes a backslash only escapes `$`, backquote, `"`, `\` and newline. */
function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
}

/**
 * Walk the statements of `$(...)`, backquotes or `<(...)`/`>(...)`. Inside backquotes bash
 * removes one level of backslashes before parsing the text again, which tree-sitter does
 * not model, so a backquoted command may not contain a backslash or quote (use `$(...)`).
 */
function substitution(node: Node, inner: SubstitutionWalker | undefined): void {
  if (!inner) deny(`substitution ${quote(node.text)} is not allowed here: ${SUBSTITUTION_HINT}`);
  const first = node.child(0);
  const last = node.child(node.childCount - 1);
  const open = first?.type ?? '';
  if (!['$(', '`', '<(', '>('].includes(open) || last?.type !== (open === '`' ? '`' : ')')) {
    deny(`unsupported substitution syntax in ${quote(node.text)}`);
  }
  // Quotes inside backquotes (notably inside "..." around them) are also read by rules
  // tree-sitter does not model; plain backquoted commands are what people write.
  if (open === '`' && /[\\"']/.test(node.text.slice(1, -1))) {
    deny('a backslash or quote inside backquotes is re-read by bash in a way the checker does not model; use $(...) instead');
  }
  const statements = node.children.slice(1, -1).filter((c): c is Node => c !== null);
  if (statements.length === 0) return;
  for (const child of statements) {
    if (!child.isNamed) deny(`unsupported syntax \`${child.type}\` in ${quote(node.text)}`);
    inner(child);
  }
}

function assemble(pieces: readonly Piece[], text: string): ShellWord {
  // Flatten into characters that remember whether bash would treat them as special.
  const chars: { c: string; active: boolean }[] = [];
  let dynamicAt = -1;
  let unquotedDynamic = false;
  let multi = false;
  for (const piece of pieces) {
    if ('dynamic' in piece) {
      if (dynamicAt < 0) dynamicAt = chars.length;
      if (!piece.quoted) unquotedDynamic = true;
      multi ||= piece.multi || !piece.quoted;
      continue;
    }
    for (const c of piece.literal) chars.push({ c, active: !piece.quoted });
  }
  const literalUntil = (end: number) => chars.slice(0, end).map((x) => x.c).join('');

  const tilde = chars.length > 0 && chars[0]!.c === '~' && chars[0]!.active && dynamicAt !== 0;
  let globAt = chars.findIndex((x) => x.active && (x.c === '*' || x.c === '?' || x.c === '['));
  const braceAt = braceExpansionAt(chars);
  if (braceAt >= 0) globAt = globAt < 0 ? braceAt : Math.min(globAt, braceAt);

  if (dynamicAt < 0 && globAt < 0 && !tilde) return { kind: 'static', value: literalUntil(chars.length), text };

  if (tilde && dynamicAt < 0 && globAt < 0) {
    // ~ and ~user become absolute paths (or stay literal): never an option.
    return { kind: 'dynamic', prefix: '', multi: false, optionLike: false, split: false, text };
  }
  const cut = [dynamicAt, globAt].filter((n) => n >= 0);
  const prefix = tilde ? '' : literalUntil(Math.min(...cut));
  // After an unquoted expansion is split, the later words are arbitrary.
  const optionLike = unquotedDynamic || (!tilde && (prefix === '' || prefix.startsWith('-')));
  return { kind: 'dynamic', prefix, multi: multi || globAt >= 0, optionLike, split: unquotedDynamic, text };
}

/**
 * Index of the first `{` that starts a brace expansion: an unquoted `{` whose matching
 * unquoted `}` encloses an unquoted `,` at its own level, or a `..` sequence. `{}` and
 * `@{u}` stay literal, as in bash. Returns -1 when there is none.
 */
function braceExpansionAt(chars: readonly { c: string; active: boolean }[]): number {
  for (let open = 0; open < chars.length; open++) {
    if (!(chars[open]!.active && chars[open]!.c === '{')) continue;
    let depth = 0;
    let comma = false;
    for (let i = open + 1; i < chars.length; i++) {
      const { c, active } = chars[i]!;
      if (!active) continue;
      if (c === '{') depth++;
      else if (c === '}' && depth > 0) depth--;
      else if (c === '}') {
        const inner = chars.slice(open + 1, i).map((x) => x.c).join('');
        if (comma || /^[^{}]*\.\.[^{}]*$/.test(inner)) return open;
        break;
      } else if (c === ',' && depth === 0) comma = true;
    }
  }
  return -1;
}
