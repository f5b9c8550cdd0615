/**
 * Quote removal for the parser-agreement shape, written from bash's rules rather than
 * shared with the walker (words.ts), so that the shape is an independent reading: what
 * each word of a tree-sitter tree becomes after bash removes quotes and escapes. A word
 * that expands, globs or depends on the locale is not static; it is reported as
 * `{ dynamic: prefix }`, the static text before the first such part.
 */
import type { Node } from 'web-tree-sitter';

export type ShapeWord = string | { dynamic: string };

const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?',
};

/**
 * Decode the body of an ANSI-C string `$'…'` as bash does. A NUL ends the string (bash
 * builds a C string); bytes above 0x7f are returned as null (their meaning depends on the
 * locale and on the surrounding bytes), and so is `\c` at the very end.
 */
export function decodeAnsiC(body: string): string | null {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\' || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const e = body[++i]!;
    let code: number;
    if (e in SIMPLE_ESCAPES) {
      out += SIMPLE_ESCAPES[e];
      continue;
    } else if (/[0-7]/.test(e)) {
      const digits = /^[0-7]{1,3}/.exec(body.slice(i))![0];
      i += digits.length - 1;
      code = parseInt(digits, 8) & 0xff;
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const max = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const digits = new RegExp(`^[0-9a-fA-F]{1,${max}}`).exec(body.slice(i + 1))?.[0];
      if (!digits) {
        out += `\\${e}`;
        continue;
      }
      i += digits.length;
      code = parseInt(digits, 16);
    } else if (e === 'c') {
      if (i + 1 >= body.length) return null;
      const x = body[++i]!;
      if (x === '\\' && body[i + 1] === '\\') i++; // `\c\\` is control-backslash
      code = x === '?' ? 0x7f : x.toUpperCase().charCodeAt(0) & 0x1f;
    } else {
      out += `\\${e}`; // unknown escapes keep their backslash
      continue;
    }
    if (code === 0) return out;
    if (code > 0x7f) return null;
    out += String.fromCharCode(code);
  }
  return out;
}

/** Inside double quotes a backslash only escapes `$`, backquote, `"`, `\` and newline. */
export function decodeDoubleQuoted(body: string): string {
  return body.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
}

/** An unquoted literal: null when bash would glob, brace-expand or tilde-expand it. */
export function decodeUnquoted(text: string, first: boolean): string | null {
  if (first && text.startsWith('~')) return null;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') {
      const next = text[++i];
      if (next === undefined) out += '\\';
      else if (next !== '\n') out += next;
    } else if ('*?['.includes(c)) return null;
    else if (c === '{' && /^\{[^{}]*(,|\.\.)[^{}]*\}/.test(text.slice(i))) return null;
    else out += c;
  }
  return out;
}

function dynamic(prefix: string): ShapeWord {
  return { dynamic: prefix };
}

/** What a word node becomes after quote removal. */
export function decodeWord(node: Node, first = true): ShapeWord {
  const text = node.text;
  switch (node.type) {
    case 'word':
    case 'number': {
      const plain = decodeUnquoted(text, first);
      return plain === null ? dynamic('') : plain;
    }
    case 'raw_string':
      return text.slice(1, -1);
    case 'ansi_c_string': {
      const decoded = decodeAnsiC(text.slice(2, -1));
      return decoded === null ? dynamic('') : decoded;
    }
    case 'string': {
      // The static text before the first expansion or substitution is the prefix.
      for (let i = 0; i < node.childCount; i++) {
        const kid = node.child(i)!;
        if (kid.type === '"' || kid.type === 'string_content') continue;
        return dynamic(decodeDoubleQuoted(sliceOf(node, node.startIndex + 1, kid.startIndex)));
      }
      return decodeDoubleQuoted(sliceOf(node, node.startIndex + 1, node.endIndex - 1));
    }
    case 'concatenation': {
      // Brace expansion can span pieces tree-sitter splits (`{-{o,ou\\c}`): an unquoted
      // `{…,…}` or `{a..b}` anywhere in the word's text makes the whole word dynamic.
      if (/\{[^{}]*(,|\.\.)[^{}]*\}/.test(text) && node.children.some((c) => c?.type === 'word')) return dynamic('');
      let out = '';
      for (let i = 0; i < node.childCount; i++) {
        const part = decodeWord(node.child(i)!, first && i === 0);
        if (typeof part !== 'string') return dynamic(out + part.dynamic);
        out += part;
      }
      return out;
    }
    default:
      return dynamic('');
  }
}

/** Source text of [from, to) inside `node` (positions are the tree's). */
function sliceOf(node: Node, from: number, to: number): string {
  return node.text.slice(from - node.startIndex, to - node.startIndex);
}
