/**
 * `awk` (gawk, mawk, one-true-awk) with a program that can neither write nor run
 * commands nor reach the network. Options: only -F and -v (no -f/-i/-l/-E program or
 * extension files, no --exec/--include/--load, no profiling or dump files). The
 * program is tokenised (strings, regex literals versus division, comments) and refused
 * if it contains `system`, a pipe (`|`, `|&`, so `cmd | getline` too), `@` (gawk
 * indirect calls, @load, @include, @namespace), an output redirection (`>`/`>>` at the
 * top level of a print/printf statement; `>` elsewhere is a comparison), a `getline <`
 * from anything but a literal file name, or a use of ARGV/ARGC (assigning them makes
 * awk read other files). gawk opens `/inet/...`, `/inet4/...` and `/inet6/...` names as
 * network connections, so such names are refused in strings and as file operands, and
 * an operand whose text is unknown must at least start with a name that is not one.
 *
 * The only place an awk lexer must guess is whether `/` starts a regex or divides; a
 * wrong guess could hide text inside a "string". The guess follows the previous token
 * and, where awks could disagree (after `++`, `--`, `$`, `in`...), the program is
 * refused rather than guessed.
 */
import { deny } from '../deny';
import { own, scanOptions, shortTable, type OptionSpec } from '../options';
import type { ShellWord } from '../words';
import type { ProgramRule } from './types';

const AWK: OptionSpec = {
  program: 'awk',
  short: shortTable('', 'Fv', {
    f: { deny: '`awk -f` runs a program file I cannot check; pass the program inline' },
  }),
  long: {},
  permute: false,
};

const TOO_COMPLEX = 'awk program is too complex to verify (ambiguous `/`); simplify it or use grep/sed -n';

const NETWORK = "gawk opens `/inet/...` names as network connections; leave them out";
const ARGV_USE = '`ARGV`/`ARGC` in an awk program can make awk read other files; name the files as operands instead';

/** Could this word name a gawk network special file (`/inet`, `/inet4`, `/inet6`)? */
function mayBeNetworkFile(word: ShellWord): boolean {
  if (word.kind === 'static') return word.value.startsWith('/inet');
  return word.prefix.startsWith('/inet') || '/inet'.startsWith(word.prefix);
}

function checkAwk(args: readonly ShellWord[]): void {
  const { options, operands } = scanOptions(args, AWK);
  const program = operands[0];
  if (!program) deny('`awk` needs a program');
  if (program.kind !== 'static') deny('an awk program must be literal text; quote it with single quotes');
  for (const v of options.filter((o) => o.name === '-v').map((o) => o.value!)) {
    const text = v.kind === 'static' ? v.value : v.prefix;
    if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(text)) deny('`awk -v` needs NAME=VALUE with a literal name');
    if (/^ARG[CV]=/.test(text)) deny(ARGV_USE);
  }
  for (const w of operands.slice(1)) {
    const text = w.kind === 'static' ? w.value : w.prefix;
    // `name=value` operands assign; anything else is a file to read.
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(text)) {
      if (/^ARG[CV]=/.test(text)) deny(ARGV_USE);
      continue;
    }
    if (mayBeNetworkFile(w)) deny(w.kind === 'static' ? NETWORK : `${w.text} could name a gawk network file (/inet/...); name the file literally`);
  }
  checkAwkProgram(program.value);
}

type Tok = { kind: 'ident' | 'number' | 'string' | 'regex' | 'op' | 'nl'; text: string };

/** Keywords after which an expression (so a regex) starts. */
const REGEX_AFTER_WORD = new Set(['print', 'printf', 'return', 'else', 'do', 'exit', 'case']);
/** Identifiers after which awks disagree or the program is nonsense: refuse. */
const AMBIGUOUS_AFTER = new Set(['in', 'getline', 'BEGIN', 'END', 'BEGINFILE', 'ENDFILE', 'function', 'func', 'delete', 'next', 'nextfile']);
const OPENS_CONDITION = new Set(['if', 'while', 'for', 'switch']);
const OPERATORS = ['**=', '&&', '||', '==', '!=', '<=', '>=', '>>', '++', '--', '+=', '-=', '*=', '/=', '%=', '^=', '**', '!~', '|&'];
const CONTINUES_LINE = new Set([',', '&&', '||', '{']);
const FORBIDDEN_WORDS: Readonly<Record<string, string>> = {
  system: '`system()` in awk runs a shell command; print what you need instead',
  ARGV: ARGV_USE,
  ARGC: ARGV_USE,
};

/**
 * `getline`, `getline var` read the next input line; `getline [var] < file` reads a file,
 * allowed only from a literal name that is not a network file. (`cmd | getline` is
 * refused with every pipe.)
 */
function checkGetline(tokens: readonly Tok[], at: number): void {
  let i = at + 1;
  if (tokens[i]?.kind === 'ident' && !KEYWORDS.has(tokens[i]!.text)) {
    i++;
    if (tokens[i]?.kind === 'op' && tokens[i]!.text === '[') {
      let depth = 0;
      for (; i < tokens.length; i++) {
        if (tokens[i]!.text === '[') depth++;
        else if (tokens[i]!.text === ']' && --depth === 0) break;
      }
      i++;
    }
  } else if (tokens[i]?.kind === 'op' && tokens[i]!.text === '$') {
    deny('`getline $...` is not supported by the checker; use `getline var`');
  }
  const next = tokens[i];
  if (!(next?.kind === 'op' && next.text === '<')) return;
  const file = tokens[i + 1];
  if (file?.kind !== 'string') deny('awk `getline < file` needs a literal file name in double quotes');
  if (file.text.startsWith('"/inet')) deny(NETWORK);
  // gawk may read `getline < "a" "b"` as one concatenated name: the literal must stand alone.
  const after = tokens[i + 2];
  if (after && !(after.kind === 'nl' || (after.kind === 'op' && [')', ';', '}', '&&', '||', ','].includes(after.text)))) {
    deny('put the file name of awk `getline <` alone in double quotes (no concatenation)');
  }
}

const KEYWORDS = new Set(['if', 'else', 'while', 'for', 'do', 'in', 'print', 'printf', 'return', 'next', 'nextfile', 'exit', 'delete', 'getline', 'function', 'func', 'BEGIN', 'END', 'BEGINFILE', 'ENDFILE', 'switch', 'case', 'default', 'break', 'continue']);

/** Throw unless the awk program text is free of writes and command execution. */
export function checkAwkProgram(src: string): void {
  const tokens = lex(src);
  let printDepth = -1; // paren depth of the print statement we are in, or -1
  let depth = 0;
  let prev: Tok | undefined;
  for (const [index, t] of tokens.entries()) {
    const before = prev;
    prev = t;
    const forbidden = t.kind === 'ident' ? own(FORBIDDEN_WORDS, t.text) : undefined;
    if (forbidden) deny(forbidden);
    if (t.kind === 'ident' && t.text === 'getline') checkGetline(tokens, index);
    if (t.kind === 'string' && t.text.includes('/inet')) deny(NETWORK);
    if (t.kind === 'ident' && (t.text === 'print' || t.text === 'printf')) {
      if (printDepth < 0) printDepth = depth;
      continue;
    }
    // A print statement ends at `;`, `}` or a newline at its own depth; a newline after
    // `,` `&&` `||` `{` continues the statement in awk, so it does not end it here.
    const ends =
      (t.kind === 'op' && (t.text === ';' || t.text === '}')) ||
      (t.kind === 'nl' && !(before?.kind === 'op' && CONTINUES_LINE.has(before.text)));
    if (ends && depth === printDepth) printDepth = -1;
    if (t.kind !== 'op') continue;
    if (t.text === '(' || t.text === '[') depth++;
    if (t.text === ')' || t.text === ']') depth--;
    if (t.text === '|' || t.text === '|&') deny('a pipe in awk runs a shell command; leave it out');
    if ((t.text === '>' || t.text === '>>') && printDepth >= 0 && depth === printDepth) {
      deny('awk `print > file` writes a file; print to stdout instead (wrap comparisons in parentheses)');
    }
  }
}

function lex(src: string): Tok[] {
  const out: Tok[] = [];
  const parens: boolean[] = []; // true when the paren opened an if/while/for condition
  let closedCondition = false;
  let i = 0;
  const regexAllowed = (): boolean => {
    const prev = out[out.length - 1];
    if (!prev || prev.kind === 'nl') return true;
    if (prev.kind === 'number' || prev.kind === 'string' || prev.kind === 'regex') return false;
    if (prev.kind === 'ident') {
      if (REGEX_AFTER_WORD.has(prev.text)) return true;
      if (AMBIGUOUS_AFTER.has(prev.text)) deny(TOO_COMPLEX);
      return false;
    }
    if (prev.text === ')') return closedCondition;
    if (prev.text === ']') return false;
    if (prev.text === '++' || prev.text === '--' || prev.text === '$') deny(TOO_COMPLEX);
    return true;
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === ' ' || c === '\t') {
      i++;
    } else if (c === '\\' && src[i + 1] === '\n') {
      i += 2;
    } else if (c === '\n') {
      out.push({ kind: 'nl', text: '\n' });
      i++;
    } else if (c === '#') {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '"') {
      const end = scanQuoted(src, i + 1, '"', false);
      out.push({ kind: 'string', text: src.slice(i, end) });
      i = end;
    } else if (c === '/' && regexAllowed()) {
      const end = scanQuoted(src, i + 1, '/', true);
      out.push({ kind: 'regex', text: src.slice(i, end) });
      i = end;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))![0];
      out.push({ kind: 'ident', text: m });
      i += m.length;
    } else if (/[0-9.]/.test(c)) {
      const m = /^[0-9.]+([eE][-+]?[0-9]+)?|^\./.exec(src.slice(i))![0];
      out.push({ kind: 'number', text: m });
      i += m.length;
    } else if ('{}()[];,+-*/%^!<>|?:~$=&'.includes(c)) {
      if (c === '&' && src[i + 1] !== '&') deny('awk program: a lone `&` is not awk; use `&&`');
      const op = OPERATORS.find((o) => src.startsWith(o, i)) ?? c;
      if (op === '(') {
        const prev = out[out.length - 1];
        parens.push(prev?.kind === 'ident' && OPENS_CONDITION.has(prev.text));
      }
      closedCondition = op === ')' ? (parens.pop() ?? false) : false;
      out.push({ kind: 'op', text: op });
      i += op.length;
    } else {
      deny(`awk program: unexpected character \`${c}\`; keep to plain awk`);
    }
  }
  return out;
}

/** Index just past the closing `close`; strings and regexes may not span lines. */
function scanQuoted(src: string, from: number, close: string, regex: boolean): number {
  let i = from;
  let inBracket = false;
  while (i < src.length) {
    const c = src[i++]!;
    if (c === '\\') i++;
    else if (c === '\n') break;
    else if (regex && c === '[' && !inBracket) {
      inBracket = true;
      if (src[i] === '^') i++;
      if (src[i] === ']') i++;
    } else if (regex && c === ']' && inBracket) inBracket = false;
    else if (inBracket && c === '/') deny(TOO_COMPLEX); // awks disagree on `/` inside [...]
    else if (c === close && !inBracket) return i;
  }
  return deny('awk program: unterminated string or regex');
}

export const awkRules: Readonly<Record<string, ProgramRule>> = {
  awk: { check: checkAwk },
  gawk: { check: checkAwk },
  mawk: { check: checkAwk },
  nawk: { check: checkAwk },
};
