/**
 * `sed` without in-place editing, and only with scripts we can read completely. The
 * options are a positive list (no -i/--in-place, no -f: a script file could hold
 * anything). The whole script (every -e piece, or the first operand) is parsed with GNU
 * sed 4.9's grammar (compile.c): addresses (numbers, `first~step`, `$`, `/re/` and
 * `\cREc` with I/M flags, `addr,+N`, `addr,~N`), `!`, `{ }`, `;` and newlines, comments,
 * `a/i/c` text (classic and GNU one-line forms, backslash continuations), labels for
 * `:`/`b`/`t`/`T`, `v`, `q/Q/l` with numbers, `r/R` file names to the end of the line,
 * `s` with any delimiter and flags, `y`. A command that writes or executes (`w`, `W`,
 * `e`, and the `w`/`e` flags of `s`) anywhere in the script is refused, whatever branches
 * or version checks precede it; anything not understood is refused.
 *
 * Where sed versions read the same text differently, the script must be accepted under
 * every reading: a `/` inside a bracket expression (`s/[/]/x/`) and `\c` followed by the
 * delimiter in a regex are parsed both ways; a label or `v` argument may contain only
 * plain characters and must be followed by the end of the command, because older seds
 * end labels only at `;` or a newline.
 */
import { deny } from '../deny';
import { longTable, refuse, scanOptions, shortTable, type OptionSpec } from '../options';
import type { ShellWord } from '../words';
import type { ProgramRule } from './types';

const IN_PLACE = '`sed -i` edits files in place; print the result with `sed -n ...` or plain `sed` instead';
const SCRIPT_FILE = '`sed -f` reads its script from a file I cannot check; pass the script with -e';

const SED: OptionSpec = {
  program: 'sed',
  short: shortTable('nErszub', 'el', { i: refuse(IN_PLACE), f: refuse(SCRIPT_FILE) }),
  long: longTable(
    'quiet silent regexp-extended separate null-data zero-terminated unbuffered posix sandbox debug binary follow-symlinks help version',
    'expression line-length',
    { 'in-place': refuse(IN_PLACE), file: refuse(SCRIPT_FILE) },
  ),
};

function checkSed(args: readonly ShellWord[]): void {
  const { options, operands } = scanOptions(args, SED);
  const scripts = options.filter((o) => o.name === '-e' || o.name === '--expression').map((o) => o.value!);
  // --version/--help exit during option parsing, before an operand script is compiled;
  // -e pieces are compiled (and their w files opened) as they are met, so they still count.
  if (scripts.length === 0 && options.some((o) => o.name === '--version' || o.name === '--help')) return;
  if (scripts.length === 0) {
    const first = operands[0];
    if (!first) deny('`sed` needs a script');
    scripts.push(first);
  }
  const texts = scripts.map((w) => {
    if (w.kind !== 'static') deny('a sed script must be literal text (no variables or globs); quote it with single quotes');
    return w.value;
  });
  // GNU sed compiles -e pieces in order with shared state; for where each command ends,
  // that is the same as joining them with newlines.
  checkSedScript(texts.join('\n'));
}

/** How a sed version may read regexes; every combination must accept the script. */
interface Reading {
  /** `[...]` in a regex is a bracket expression whose `/` does not end the regex. */
  readonly brackets: boolean;
  /** `\cX` in a regex takes X whatever it is (newer GNU sed), even the delimiter. */
  readonly controlEscape: boolean;
}

const SIMPLE = new Set(['=', 'd', 'D', 'F', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z']);
const BLANK = ' \t';
const LABEL = /^[A-Za-z0-9_.-]*$/;

class SedParser {
  private i = 0;
  private blocks = 0;
  constructor(
    private readonly s: string,
    private readonly reading: Reading,
  ) {}

  parse(): void {
    for (;;) {
      while (this.i < this.s.length && ' \t\n\v\f\r;'.includes(this.s[this.i]!)) this.i++;
      if (this.i >= this.s.length) break;
      const hasAddress = this.addresses();
      this.skip(BLANK);
      while (this.peek() === '!') {
        this.i++;
        this.skip(BLANK);
      }
      this.command(this.s[this.i++], hasAddress);
    }
    if (this.blocks !== 0) deny('sed script: unmatched `{`');
  }

  private peek(): string | undefined {
    return this.s[this.i];
  }

  private skip(chars: string): void {
    while (this.i < this.s.length && chars.includes(this.s[this.i]!)) this.i++;
  }

  private digits(): boolean {
    const start = this.i;
    while (/[0-9]/.test(this.peek() ?? '')) this.i++;
    return this.i > start;
  }

  /** `addr1[,addr2]`; returns whether there was an address. */
  private addresses(): boolean {
    if (!this.address(true)) return false;
    this.skip(BLANK);
    if (this.peek() === ',') {
      this.i++;
      this.skip(BLANK);
      if (!this.address(false)) deny('sed script: missing second address after `,`');
    }
    return true;
  }

  private address(first: boolean): boolean {
    const c = this.peek();
    if (c === undefined) return false;
    if (/[0-9]/.test(c)) {
      this.digits();
      const save = this.i;
      this.skip(BLANK);
      if (this.peek() === '~') {
        this.i++;
        this.skip(BLANK);
        this.digits();
      } else {
        this.i = save;
      }
      return true;
    }
    if (!first && (c === '+' || c === '~')) {
      this.i++;
      this.skip(BLANK);
      if (!this.digits()) deny('sed script: `+`/`~` in an address needs a number');
      return true;
    }
    if (c === '$') {
      this.i++;
      return true;
    }
    if (c === '/' || c === '\\') {
      this.i++;
      const delim = c === '/' ? '/' : this.s[this.i++];
      if (delim === undefined || delim === '\n' || delim === '\\') deny('sed script: bad regex address');
      this.delimited(delim, true);
      for (;;) {
        const save = this.i;
        this.skip(BLANK);
        if (this.peek() === 'I' || this.peek() === 'M') this.i++;
        else {
          this.i = save;
          break;
        }
      }
      return true;
    }
    return false;
  }

  /** Read up to the unescaped delimiter (GNU match_slash). */
  private delimited(delim: string, regex: boolean): void {
    while (this.i < this.s.length) {
      const c = this.s[this.i++]!;
      if (c === '\n') break;
      if (c === delim) return;
      if (c === '\\') {
        const next = this.s[this.i++];
        if (next === undefined) break;
        if (regex && next === 'c' && this.reading.controlEscape) {
          if (this.s[this.i++] === undefined) break;
        }
      } else if (c === '[' && regex && this.reading.brackets) {
        this.bracket();
      }
    }
    deny('sed script: unterminated regex, replacement or `y` string');
  }

  /** POSIX bracket expression: `]` first is literal; [:class:], [.x.], [=x=] nest. */
  private bracket(): void {
    if (this.peek() === '^') this.i++;
    if (this.peek() === ']') this.i++;
    while (this.i < this.s.length) {
      const c = this.s[this.i++]!;
      if (c === '\n') break;
      if (c === ']') return;
      if (c === '[' && /[:.=]/.test(this.peek() ?? '')) {
        const kind = this.s[this.i++]!;
        const end = this.s.indexOf(kind + ']', this.i);
        if (end < 0 || this.s.slice(this.i, end).includes('\n')) break;
        this.i = end + 2;
      }
    }
    deny('sed script: unterminated bracket expression');
  }

  private command(c: string | undefined, hasAddress: boolean): void {
    if (c === undefined) deny('sed script: missing command');
    if (c === 'w' || c === 'W') deny(`the sed \`${c}\` command writes a file; print with \`p\` instead`);
    if (c === 'e') deny('the sed `e` command runs a shell command; leave it out');
    if (SIMPLE.has(c)) return this.end();
    switch (c) {
      case '#':
        if (hasAddress) deny('sed script: a comment cannot have an address');
        return this.toLineEnd();
      case '{':
        this.blocks++;
        return;
      case '}':
        if (hasAddress || this.blocks === 0) deny('sed script: unexpected `}`');
        this.blocks--;
        return this.end();
      case 'a':
      case 'i':
      case 'c':
        return this.text();
      case ':':
        if (hasAddress) deny('sed script: a label cannot have an address');
        return this.label(true);
      case 'b':
      case 't':
      case 'T':
      case 'v':
        return this.label(false);
      case 'q':
      case 'Q':
      case 'l':
        this.skip(BLANK);
        this.digits();
        return this.end();
      case 'r':
      case 'R':
        // Reads a file: harmless. The name runs to the end of the line, `;` and `}` included.
        this.skip(BLANK);
        if (this.i >= this.s.length || this.peek() === '\n') deny(`sed script: \`${c}\` needs a file name`);
        return this.toLineEnd();
      case 's':
        return this.substitute();
      case 'y': {
        const delim = this.s[this.i++];
        if (delim === undefined || delim === '\n' || delim === '\\') deny('sed script: bad `y` command');
        this.delimited(delim, false);
        this.delimited(delim, false);
        return this.end();
      }
      default:
        deny(`sed script: command \`${c}\` is not one I can verify as read-only`);
    }
  }

  /** `a`, `i`, `c`: text to the first newline not escaped by a backslash (GNU read_text). */
  private text(): void {
    this.skip(BLANK);
    if (this.i >= this.s.length) deny('sed script: `a`, `i` and `c` need text');
    // After `a\` the next character (a newline, or the first of the text) is taken as is:
    // it does not escape what follows it.
    if (this.peek() === '\\') this.i += 2;
    while (this.i < this.s.length && this.s[this.i] !== '\n') this.i += this.s[this.i] === '\\' ? 2 : 1;
  }

  /**
   * Labels (`:`, `b`, `t`, `T`) and the `v` version: newer seds end them at blanks, `;`,
   * `}` and `#`, older ones only at `;` or a newline. Plain characters followed by the
   * end of the command read the same everywhere; anything else is refused.
   */
  private label(required: boolean): void {
    this.skip(BLANK);
    const start = this.i;
    while (this.i < this.s.length && !' \t\n;'.includes(this.s[this.i]!)) this.i++;
    const name = this.s.slice(start, this.i);
    if (required && !name) deny('sed script: `:` needs a label name');
    if (!LABEL.test(name)) deny(`sed script: label \`${name}\` may only use letters, digits, \`_\`, \`.\` and \`-\`; end it with \`;\` or a newline`);
    this.end();
  }

  private substitute(): void {
    const delim = this.s[this.i++];
    if (delim === undefined || delim === '\n' || delim === '\\') deny('sed script: bad `s` command');
    this.delimited(delim, true);
    this.delimited(delim, false);
    for (;;) {
      this.skip(BLANK);
      const f = this.peek();
      if (f === undefined || f === '\n' || f === ';') return;
      if (f === '}' || f === '#') return;
      this.i++;
      if (f === 'w') deny('the `w` flag of sed `s` writes a file; use the `p` flag to print instead');
      if (f === 'e') deny('the `e` flag of sed `s` runs the pattern space as a command; leave it out');
      if (!/[gpiImM0-9]/.test(f)) deny(`sed script: unknown \`s\` flag \`${f}\``);
    }
  }

  private toLineEnd(): void {
    const nl = this.s.indexOf('\n', this.i);
    this.i = nl < 0 ? this.s.length : nl;
  }

  /** GNU read_end_of_cmd: blanks, then `;`, a newline, the end, or `}`/`#` (left for later). */
  private end(): void {
    this.skip(BLANK);
    const c = this.peek();
    if (c === undefined || c === '\n' || c === ';') {
      if (c !== undefined) this.i++;
      return;
    }
    if (c === '}' || c === '#') return;
    deny(`sed script: unexpected \`${c}\` after a command; separate commands with \`;\``);
  }
}

/** Throw unless the GNU sed script neither writes files nor runs commands, under every reading. */
export function checkSedScript(script: string): void {
  for (const brackets of [true, false]) {
    for (const controlEscape of [true, false]) new SedParser(script, { brackets, controlEscape }).parse();
  }
}

export const sedRules: Readonly<Record<string, ProgramRule>> = {
  sed: { check: checkSed },
};
