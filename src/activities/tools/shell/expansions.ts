/**
 * The parts of word evaluation that read bash's own sub-languages: arithmetic
 * (`$((...))`, `((...))`), `$'...'` escapes, and `${...}` parameter expansions. Each
 * accepts only forms that compute a value without assigning or running anything, and
 * refuses the rest with a reason (see words.ts for how words are assembled).
 */
import type { Node } from 'web-tree-sitter';
import { deny } from './deny';
import { quote } from './quote';

/** Evaluates a nested word (walking any substitution in it); supplied by words.ts. */
export type NestedWord = (node: Node) => void;

/**
 * `$((...))` and `$[...]`: only numeric literals and operators. A name (with or without
 * `$`) is evaluated as arithmetic, recursively through its value, so `x='a[$(cmd)]'`
 * makes `$((x))` run cmd; `=`, `++` and `--` assign.
 */
export function checkArithmetic(node: Node, given?: string): void {
  const open = node.child(0)?.type;
  const close = node.child(node.childCount - 1)?.type;
  const text = node.text;
  let body = given;
  if (given !== undefined) body = given;
  else if (open === '$((' && close === '))' && text.startsWith('$((') && text.endsWith('))')) body = text.slice(3, -2);
  else if (open === '$[' && close === ']' && text.startsWith('$[') && text.endsWith(']')) body = text.slice(2, -1);
  const reason = `arithmetic expansion ${quote(text)} may only use numbers and operators (names are evaluated and can assign or run code); compute the value yourself`;
  // Hexadecimal literals (0x1F) are numbers too; `base#digits` is not accepted.
  if (body !== undefined) body = body.replace(/\b0[xX][0-9a-fA-F]+\b/g, '0');
  if (body === undefined || !/^[0-9\s+\-*/%<>=!&|^~?:(),]*$/.test(body)) deny(reason);
  if (/\+\+|--/.test(body) || /=/.test(body.replace(/[=!<>]=/g, ''))) deny(reason);
}

/**
 * Decode the text of a `$'...'` word exactly as bash 5 does. Escapes whose result
 * depends on the locale (`\u`, `\U`) or on finer points of bash's parser (`\c`), and
 * any that produce a NUL byte (bash cuts the word there), are refused instead.
 */
export function decodeAnsiC(text: string): string {
  if (!text.startsWith("$'") || !text.endsWith("'") || text.length < 3) deny(`unsupported $'...' string ${quote(text)}`);
  const body = text.slice(2, -1);
  const SIMPLE: Readonly<Record<string, string>> = { a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\' || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const e = body[++i]!;
    if (Object.hasOwn(SIMPLE, e)) {
      out += SIMPLE[e];
    } else if (/[0-7]/.test(e)) {
      const digits = /^[0-7]{1,3}/.exec(body.slice(i))![0];
      out += String.fromCharCode(parseInt(digits, 8) & 0xff);
      i += digits.length - 1;
    } else if (e === 'x' && /^[0-9a-fA-F]/.test(body.slice(i + 1))) {
      const digits = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 1))![0];
      out += String.fromCharCode(parseInt(digits, 16));
      i += digits.length;
    } else if (e === 'u' || e === 'U' || e === 'c') {
      deny(`the \`\\${e}\` escape in ${quote(text)} is not supported; write the character directly inside quotes`);
    } else {
      out += '\\' + e; // bash keeps unknown escapes (and a lone `\x`) as written
    }
  }
  if (out.includes('\0')) deny(`${quote(text)} contains a NUL byte, where bash would cut the word; leave it out`);
  return out;
}

/** Operators of `${name OP word}` that only compute a string from the value. */
const STRING_OPS = new Set(['#', '##', '%', '%%', '/', '//', '/#', '/%', ':-', '-', ':+', '+', '^', '^^', ',', ',,']);

/**
 * `${...}` forms that only compute a string: `${name}`, `${#name}`, `${name#pat}` and the
 * other trimming, replacing, case and default forms, `${name:N[:M]}` with literal numbers,
 * and `${name[N]}`/`${name[@]}`/`${#name[@]}` with a literal index. Refused: assigning
 * forms (`:=`, `=`), `:?`, indirection (`${!x}`), transformations (`${x@P}` expands a
 * prompt, running `$(...)` in the value), and any subscript or offset that is not a
 * literal number (it is evaluated as arithmetic, names and subscripts included).
 * Words inside may hold substitutions, walked with the same rules.
 */
export function checkExpansion(node: Node, nested: NestedWord): void {
  const kids = node.children.filter((c): c is Node => c !== null);
  const reason = (): never =>
    deny(`parameter expansion ${quote(node.text)} is not allowed: only plain, length, trimming, replacing, case and default forms are (assignments, indirection, @ transformations and computed subscripts or offsets can assign or run code)`);
  if (kids[0]?.type !== '${' || kids[kids.length - 1]?.type !== '}') reason();
  const body = kids.slice(1, -1);
  let at = 0;
  if (body[0]?.type === '#' && body.length === 2) at = 1; // ${#name}, ${#a[@]}
  const target = body[at];
  if (!target) reason();
  if (target!.type === 'subscript') checkSubscript(target!, reason);
  else if (target!.type !== 'variable_name' && !(target!.type === 'special_variable_name' && body.length === 1)) reason();
  const rest = body.slice(at + 1);
  if (rest.length === 0) return;
  if (at === 1) reason();
  const op = rest[0]!;
  if (op.type === ':' && !op.isNamed) {
    // ${name:N} or ${name:N:M} with literal numbers only.
    const ok = (rest.length === 2 || (rest.length === 4 && rest[2]!.type === ':')) && rest.filter((_, i) => i % 2 === 1).every((n) => /^[0-9]+$/.test(n.text) && n.type === 'number');
    if (!ok) reason();
    return;
  }
  if (op.isNamed || !STRING_OPS.has(op.type)) reason();
  for (const part of rest.slice(1)) {
    if (!part.isNamed) {
      if (part.type !== '/' || !op.type.startsWith('/')) reason();
      continue;
    }
    if (part.type === 'regex' || part.type === 'word') {
      if (part.childCount !== 0 || /[$`\\'"]|[<>]\(/.test(part.text)) reason();
    } else if (['string', 'simple_expansion', 'expansion', 'command_substitution', 'number'].includes(part.type)) {
      // Not '...': inside "${x:-'...'}" single quotes are literal and $(...) in them runs.
      nested(part);
    } else {
      reason();
    }
  }
}

function checkSubscript(node: Node, reason: () => never): void {
  const kids = node.children.filter((c): c is Node => c !== null);
  const ok =
    kids.length === 4 &&
    kids[0]!.type === 'variable_name' &&
    kids[1]!.type === '[' &&
    kids[3]!.type === ']' &&
    (/^[0-9]+$/.test(kids[2]!.text) || kids[2]!.text === '@' || kids[2]!.text === '*') &&
    kids[2]!.childCount === 0;
  if (!ok) reason();
}

/** Only `$name` and `${name}`: every operator form can assign, index or indirect. */
export function checkPlainExpansion(node: Node): void {
  const kids = node.children.filter((c): c is Node => c !== null);
  const names = kids.filter((c) => c.type === 'variable_name' || c.type === 'special_variable_name');
  const shapeOk =
    node.type === 'simple_expansion'
      ? kids.length === 2 && kids[0]!.type === '$' && names.length === 1
      : kids.length === 3 && kids[0]!.type === '${' && names.length === 1 && kids[2]!.type === '}';
  if (!shapeOk) {
    deny(`parameter expansion ${quote(node.text)} is not allowed: only plain $name or \${name} is (operators, subscripts and indirection can assign or run code)`);
  }
}
