/**
 * `sed` without in-place editing, and only with scripts we can read. The options are a
 * positive list (no -i/--in-place, no -f: a script file could hold anything). The script
 * is parsed with GNU sed's grammar and refused if it has a command that writes or
 * executes: `w`/`W` (write a file), `e` (run a command), or the `w`/`e` flags of `s`.
 * Unknown commands and anything the parser is unsure of are refused.
 *
 * GNU sed treats a `/` inside a bracket expression of a regex as literal (`s/[/]/x/`).
 * Rather than trust one reading of that rule, the script is parsed both ways and must
 * be accepted by both.
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
  if (scripts.length === 0) {
    const first = operands[0];
    if (!first) deny('`sed` needs a script');
    scripts.push(first);
  }
  const texts = scripts.map((w) => {
    if (w.kind !== 'static') deny('a sed script must be literal text (no variables or globs); quote it with single quotes');
    return w.value;
  });
  // GNU sed joins -e chunks with newlines.
  const script = texts.join('\n');
  checkSedScript(script, true);
  checkSedScript(script, false);
}

const SIMPLE = new Set(['=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F']);
const WITH_NUMBER = new Set(['l', 'L', 'q', 'Q']);
const LABELLED = new Set([':', 'b', 't', 'T']);

class SedScript {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly bracketAware: boolean,
  ) {}

  check(): void {
    for (;;) {
      this.skip(' \t\n;');
      if (this.i >= this.s.length) return;
      if (this.peek() === '#') {
        this.toLineEnd();
        continue;
      }
      this.address();
      this.skip(' \t');
      while (this.peek() === '!') {
        this.i++;
        this.skip(' \t');
      }
      this.command(this.s[this.i++] ?? '');
    }
  }

  private peek(): string | undefined {
    return this.s[this.i];
  }

  private skip(chars: string): void {
    while (this.i < this.s.length && chars.includes(this.s[this.i]!)) this.i++;
  }

  private toLineEnd(): string {
    const end = this.s.indexOf('\n', this.i);
    const stop = end < 0 ? this.s.length : end;
    const text = this.s.slice(this.i, stop);
    this.i = stop;
    return text;
  }

  private digits(): void {
    while (/[0-9]/.test(this.peek() ?? '')) this.i++;
  }

  private address(): void {
    if (!this.oneAddress()) return;
    this.skip(' \t');
    if (this.peek() !== ',') return;
    this.i++;
    this.skip(' \t');
    if (this.peek() === '+' || this.peek() === '~') {
      this.i++;
      this.digits();
    } else if (!this.oneAddress()) {
      deny('sed script: missing second address');
    }
  }

  private oneAddress(): boolean {
    const c = this.peek();
    if (c === undefined) return false;
    if (/[0-9]/.test(c)) {
      this.digits();
      if (this.peek() === '~') {
        this.i++;
        this.digits();
      }
      return true;
    }
    if (c === '$') {
      this.i++;
      return true;
    }
    if (c === '/' || c === '\\') {
      if (c === '\\') this.i++;
      const delim = this.s[this.i++];
      if (delim === undefined || delim === '\n' || delim === '\\') deny('sed script: bad regex address');
      this.delimited(delim, true);
      while (this.peek() === 'I' || this.peek() === 'M') this.i++;
      return true;
    }
    return false;
  }

  /** Read up to the unescaped delimiter; in a regex, optionally skip bracket expressions. */
  private delimited(delim: string, regex: boolean): void {
    while (this.i < this.s.length) {
      const c = this.s[this.i++]!;
      if (c === '\\') {
        this.i++;
      } else if (c === delim) {
        return;
      } else if (c === '\n') {
        deny('sed script: newline inside a regex or replacement');
      } else if (c === '[' && regex && this.bracketAware) {
        this.bracket();
      }
    }
    deny('sed script: unterminated regex or replacement');
  }

  /** POSIX bracket expression: `]` first is literal; [:class:], [.x.], [=x=] nest. */
  private bracket(): void {
    if (this.peek() === '^') this.i++;
    if (this.peek() === ']') this.i++;
    while (this.i < this.s.length) {
      const c = this.s[this.i++]!;
      if (c === ']') return;
      if (c === '[' && /[:.=]/.test(this.peek() ?? '')) {
        const kind = this.s[this.i++]!;
        const end = this.s.indexOf(kind + ']', this.i);
        if (end < 0) deny('sed script: unterminated bracket expression');
        this.i = end + 2;
      }
    }
    deny('sed script: unterminated bracket expression');
  }

  private command(c: string): void {
    if (c === '{') return; // a command may follow directly: `/x/{p;q}`
    if (c === '}' || SIMPLE.has(c)) return this.end();
    if (WITH_NUMBER.has(c)) {
      this.skip(' \t');
      this.digits();
      return this.end();
    }
    if (LABELLED.has(c)) {
      this.skip(' \t');
      while (this.i < this.s.length && !' \t\n;'.includes(this.s[this.i]!)) this.i++;
      return this.end();
    }
    if (c === 'a' || c === 'i' || c === 'c') {
      // Text runs to the end of the line. GNU may continue it onto later lines (after
      // `a\`); reading those lines as commands instead can only refuse more.
      this.toLineEnd();
      return;
    }
    if (c === 'r' || c === 'R') {
      this.toLineEnd(); // reads a file: harmless
      return;
    }
    if (c === 'v') {
      while (this.i < this.s.length && !'\n;'.includes(this.s[this.i]!)) this.i++;
      return;
    }
    if (c === 'w' || c === 'W') deny(`the sed \`${c}\` command writes a file; print with \`p\` instead`);
    if (c === 'e') deny('the sed `e` command runs a shell command; leave it out');
    if (c === 's') return this.substitute();
    if (c === 'y') {
      const delim = this.s[this.i++];
      if (delim === undefined || delim === '\n' || delim === '\\') deny('sed script: bad `y` command');
      this.delimited(delim, false);
      this.delimited(delim, false);
      return this.end();
    }
    deny(`sed script: command \`${c || 'end of script'}\` is not one I can verify as read-only`);
  }

  private substitute(): void {
    const delim = this.s[this.i++];
    if (delim === undefined || delim === '\n' || delim === '\\') deny('sed script: bad `s` command');
    this.delimited(delim, true);
    this.delimited(delim, false);
    for (;;) {
      const f = this.peek();
      if (f === undefined || f === '\n' || f === ';' || f === '}' || f === '#') return;
      this.i++;
      if (f === 'w') deny('the `w` flag of sed `s` writes a file; use the `p` flag to print instead');
      if (f === 'e') deny('the `e` flag of sed `s` runs the pattern space as a command; leave it out');
      if (!/[gpiImM0-9 \t]/.test(f)) deny(`sed script: unknown \`s\` flag \`${f}\``);
    }
  }

  /** After a command only a separator may follow (GNU would otherwise read on). */
  private end(): void {
    this.skip(' \t');
    const c = this.peek();
    if (c === undefined || c === '\n' || c === ';' || c === '}' || c === '#') return;
    deny(`sed script: unexpected \`${c}\` after a command; separate commands with \`;\``);
  }
}

/** Throw unless the GNU sed script `script` neither writes files nor runs commands. */
export function checkSedScript(script: string, bracketAware: boolean): void {
  new SedScript(script, bracketAware).check();
}

export const sedRules: Readonly<Record<string, ProgramRule>> = {
  sed: { check: checkSed },
};
